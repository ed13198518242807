/**
 * The commands of README.md and docs/ run as written. A fenced ```sh block is runnable: it runs in the
 * repository's folder against a fresh `npm start` with the demo token in `TOKEN` (```bash blocks are
 * illustrative: they need values of your own, another terminal, the internet or a real provider). Each file's
 * blocks run in order in one `bash -euo pipefail`, so a block may use a variable an earlier one set; `curl`
 * fails on any answer other than 2xx, so a documented call that is refused fails the test.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalProcess, type LocalProcess } from '../support/local-process.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The address the docs' commands are written for: `npm start`'s default port. */
const DOCUMENTED_PORT = 3000;

/** The runnable blocks of one Markdown file, joined in order (indented blocks of list items included). */
function runnableScript(markdown: string): string {
  const blocks: string[] = [];
  const fence = /^( *)```sh\n([\s\S]*?)^\1```$/gm;
  for (const [, indent, body] of markdown.matchAll(fence)) {
    blocks.push(
      body
        .split('\n')
        .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
        .join('\n'),
    );
  }
  return blocks.join('\n');
}

const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((name) => `docs/${name}`)].filter((name) =>
  name.endsWith('.md'),
);
const scripts = files
  .map((file) => ({ file, script: runnableScript(readFileSync(join(ROOT, file), 'utf8')) }))
  .filter(({ script }) => script !== '');

/** The path of the `name` executable on PATH; throws naming the package to install when there is none. */
function commandPath(name: string): string {
  const path = (process.env.PATH ?? '')
    .split(delimiter)
    .map((directory) => join(directory, name))
    .find((candidate) => existsSync(candidate));
  if (!path) throw new Error(`the runnable docs need ${name} (apt-get install -y ${name})`);
  return path;
}

/** A directory holding a `curl` that fails (exit 22, body still printed) on any answer other than 2xx. */
function strictCurlDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'docs-commands-'));
  writeFileSync(join(directory, 'curl'), `#!/bin/sh\nexec '${commandPath('curl')}' --fail-with-body "$@"\n`, {
    mode: 0o755,
  });
  return directory;
}

/** Runs `script` with bash in the repository's folder; resolves with its exit code and output. */
function runScript(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

let service: LocalProcess;
let env: NodeJS.ProcessEnv;
let curlDirectory: string;

beforeAll(async () => {
  commandPath('jq');
  service = await startLocalProcess({
    // Nothing a runnable command does may reach a real provider.
    TELEGRAM_API_ROOT: 'http://127.0.0.1:9',
    STRIPE_API_BASE_URL: 'http://127.0.0.1:9',
    DISCORD_API_BASE_URL: 'http://127.0.0.1:9',
  });
  curlDirectory = strictCurlDirectory();
  env = { ...service.env, TOKEN: service.demoToken, PATH: `${curlDirectory}${delimiter}${process.env.PATH}` };
});

afterAll(async () => {
  await service?.stop();
  if (curlDirectory) rmSync(curlDirectory, { recursive: true, force: true });
});

describe('the runnable commands of README.md and docs/', () => {
  it('are found where a newcomer starts (README) and in the guides, and assume no uuidgen', () => {
    expect(scripts.map(({ file }) => file)).toEqual(
      expect.arrayContaining(['README.md', 'docs/billing.md', 'docs/public-pages.md']),
    );
    for (const file of files) expect(readFileSync(join(ROOT, file), 'utf8'), file).not.toContain('uuidgen');
  });

  it.concurrent.each(scripts)('$file runs as written', async ({ script }) => {
    const port = new URL(service.baseUrl).port;
    const local = script.replaceAll(
      new RegExp(`\\b(127\\.0\\.0\\.1|localhost):${DOCUMENTED_PORT}\\b`, 'g'),
      (_, host: string) => `${host}:${port}`,
    );
    const { code, output } = await runScript(local, env);
    expect(code, `${local}\n---\n${output}`).toBe(0);
  });
});
