import { vi } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { startCapturingSmtpServer, type CapturingSmtpServer } from './mail.js';
import { registerTestTables } from './store.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** `node --import tsx`, as `npm start` and `npm run cli` run: tsx's own command would start a second Node process. */
const TSX_LOADER = ['--import', 'tsx'];

/** A local server started as its own process, exactly as `npm start` runs it. */
export interface LocalProcess {
  baseUrl: string;
  mcpUrl: string;
  demoToken: string;
  demoTeamId: string;
  /** Environment to run `bin/cli.ts` against the same store. */
  env: NodeJS.ProcessEnv;
  output(): string;
  /** Sends SIGINT (Ctrl-C) and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Unique table names so test files sharing one DynamoDB Local never see each other's data. */
function uniqueTableEnvironment(): { TABLE_NAME: string; DEAD_LETTER_TABLE_NAME: string } {
  const suffix = randomBytes(4).toString('hex');
  return { TABLE_NAME: `e2e-${suffix}`, DEAD_LETTER_TABLE_NAME: `e2e-${suffix}-dead` };
}

/**
 * Spawns `node --import tsx bin/local.ts` on a free port (PORT=0) against the test run's DynamoDB Local, without the
 * demo history (DEMO_HISTORY=0, unless `extraEnv` asks for it), sending e-mail to a capturing SMTP server of the test
 * (unless `extraEnv` names an `SMTP_URL`) rather than an embedded MailDev, whose loading costs about 2 s of CPU per
 * process (`npm start`'s own test keeps MailDev); waits for its banner (≤ 120 s: a loaded machine starts slowly).
 * Throws with the process output when it does not start.
 */
export async function startLocalProcess(extraEnv: NodeJS.ProcessEnv = {}): Promise<LocalProcess> {
  const mail: CapturingSmtpServer | undefined = extraEnv.SMTP_URL ? undefined : await startCapturingSmtpServer();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    DEMO_HISTORY: '0',
    ...(mail ? { SMTP_URL: mail.url } : {}),
    ...uniqueTableEnvironment(),
    ...extraEnv,
  };
  // Deleted after the file like every test table (test/setup-file.ts): the run's one DynamoDB Local keeps
  // no server's seeded demo data behind.
  registerTestTables(env.TABLE_NAME!, env.DEAD_LETTER_TABLE_NAME!);
  const child: ChildProcess = spawn(process.execPath, [...TSX_LOADER, 'bin/local.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    await vi.waitFor(
      () => {
        if (child.exitCode !== null) return; // exited: fail below at once
        if (!/Press Ctrl-C to stop/.test(output)) throw new Error('not started yet');
      },
      { timeout: 120_000, interval: 50 },
    );
  } catch {
    // timed out: fall through to the failure below
  }
  if (child.exitCode !== null || !/Press Ctrl-C to stop/.test(output)) {
    child.kill('SIGKILL');
    await mail?.close();
    throw new Error(`local server did not start:\n${output}`);
  }
  const field = (pattern: RegExp) => {
    const match = pattern.exec(output);
    if (!match) throw new Error(`banner lacks ${pattern}:\n${output}`);
    return match[1];
  };
  const mcpUrl = field(/MCP server: (\S+)/);
  return {
    baseUrl: mcpUrl.replace(/\/mcp$/, ''),
    mcpUrl,
    demoToken: field(/Demo token \(every ability[^)]*\): (\S+)/),
    demoTeamId: field(/Demo team:\s+(\S+)/),
    env,
    output: () => output,
    async stop() {
      if (child.exitCode === null) child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      await mail?.close();
      return code;
    },
  };
}

/** Runs the operator CLI (`node --import tsx bin/cli.ts ...`) and returns exit code, stdout and stderr. */
export async function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...TSX_LOADER, 'bin/cli.ts', ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  return { code, stdout, stderr };
}
