/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`, server scenarios) against a local
 * tool server, one CLI run per protocol revision. The suite sends no credentials, so the run goes through a loopback
 * proxy that adds tokens of the demo team. The service never turns authentication off.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ABILITY_VALUES } from '../../shared/catalogues/abilities.js';
import type { LocalService } from '../../shared/local/service.js';
import { startBearerProxy } from './mcp.js';
import { seedToken } from './store.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONFORMANCE_CLI = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
/** One CLI run; generous, because on 2 cores it may share the machine with the heaviest test files. */
const SCENARIO_TIMEOUT_MS = 150_000;

/** A protocol revision the suite tests a server at (`--spec-version`). */
export type Revision = '2025-11-25' | '2026-07-28';

/** One check of a scenario, as the suite writes it to `checks.json`. */
export interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | (string & {});
  errorMessage?: string;
  description?: string;
}

/** One scenario's checks, with the exit and output of the CLI run that ran it. */
export interface ScenarioRun {
  scenario: string;
  exitCode: number | null;
  timedOut: boolean;
  output: string;
  checks: Check[];
}

/** Runs the conformance CLI (Node 24, the running one) with `args`; kills it after {@link SCENARIO_TIMEOUT_MS}. */
function runCli(args: string[]): Promise<{ exitCode: number | null; timedOut: boolean; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CONFORMANCE_CLI, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let output = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, SCENARIO_TIMEOUT_MS);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, timedOut, output });
    });
  });
}

/** The server scenarios the installed suite lists for `revision`. Throws when the CLI fails. */
export async function listScenarios(revision: Revision): Promise<string[]> {
  const list = await runCli(['list', '--server', '--spec-version', revision]);
  if (list.exitCode !== 0) throw new Error(`conformance list failed:\n${list.output}`);
  return [...list.output.matchAll(/^\s+-\s+(\S+)/gm)].map((match) => match[1]);
}

/** Tokens the proxy takes turns with: the suite's requests stay far below each token's `mcp` rate limit (120/min). */
const TOKENS = 16;

/**
 * Runs every scenario the suite has for `revision` in one CLI run (`--suite all --spec-version`), through a bearer
 * proxy that gives each request outside a session the next of {@link TOKENS} demo-team tokens (every ability), and a
 * session's requests the token that opened it. The runs by scenario name, read from each scenario's `checks.json`;
 * every run carries the CLI's exit and output.
 */
export async function runScenarios(
  service: LocalService,
  revision: Revision,
  outputDirectory: string,
): Promise<Map<string, ScenarioRun>> {
  const tokens: string[] = [];
  for (let index = 0; index < TOKENS; index++) {
    const minted = await seedToken(service.store, service.runtime.clock, {
      teamId: service.demoTeamId,
      abilities: ABILITY_VALUES,
      name: `conformance ${revision} ${index}`,
    });
    tokens.push(minted.token);
  }
  let turn = 0;
  const proxy = await startBearerProxy(service.mcpUrl, () => tokens[turn++ % tokens.length]);
  try {
    const directory = join(outputDirectory, revision);
    const { exitCode, timedOut, output } = await runCli([
      'server',
      '--url',
      proxy.url,
      '--suite',
      'all',
      '--spec-version',
      revision,
      '-o',
      directory,
    ]);
    const runs = new Map<string, ScenarioRun>();
    for (const name of readdirSync(directory)) {
      // `server-<scenario>-<ISO time>`, the time with dashes for colons and dots.
      const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(name)?.[1];
      if (!scenario) continue;
      const checks = JSON.parse(readFileSync(join(directory, name, 'checks.json'), 'utf8')) as Check[];
      runs.set(scenario, { scenario, exitCode, timedOut, output, checks });
    }
    return runs;
  } finally {
    await proxy.close();
  }
}

/** The checks of a run with `status`. */
export const checksWith = (run: ScenarioRun, ...statuses: Check['status'][]) =>
  run.checks.filter((check) => statuses.includes(check.status));

/** A run as an assertion message: exit, checks and the end of the output. */
export const describeRun = (run: ScenarioRun) =>
  JSON.stringify(
    {
      exitCode: run.exitCode,
      timedOut: run.timedOut,
      checks: run.checks.map(({ id, status, errorMessage }) => ({ id, status, errorMessage })),
      output: run.output.slice(-2000),
    },
    null,
    2,
  );
