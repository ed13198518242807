/**
 * The README's MCP client (`examples/mcp-client.mjs`) works outside the repository: copied into a fresh
 * directory and run with plain `node` (ESM, no TypeScript, no tsx), it connects to a running local
 * service with the official SDK, lists the tools and calls `list_projects`. Offline, the fresh
 * directory's `node_modules` is a link to this repository's (where `npm i @modelcontextprotocol/sdk`
 * would put the same package).
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_DEFINITIONS } from '../../shared/catalogues/tools.js';
import type { LocalService } from '../../shared/local/service.js';
import { startTestService } from '../support/local-service.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let service: LocalService;
let directory: string;

beforeAll(async () => {
  service = await startTestService();
  directory = mkdtempSync(join(tmpdir(), 'mcp-try-'));
  // What `npm init -y && npm i @modelcontextprotocol/sdk` leaves behind (npm init's package.json is CommonJS).
  writeFileSync(
    join(directory, 'package.json'),
    JSON.stringify({
      name: 'mcp-try',
      version: '1.0.0',
      type: 'commonjs',
      dependencies: { '@modelcontextprotocol/sdk': '*' },
    }),
  );
  symlinkSync(join(ROOT, 'node_modules'), join(directory, 'node_modules'), 'dir');
  copyFileSync(join(ROOT, 'examples', 'mcp-client.mjs'), join(directory, 'mcp-client.mjs'));
});

afterAll(async () => {
  await service?.stop();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

function runExample(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['mcp-client.mjs'], {
      cwd: directory,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('examples/mcp-client.mjs from a fresh directory', () => {
  it('lists the tools and calls list_projects with `TOKEN=... node mcp-client.mjs`', async () => {
    const { code, stdout, stderr } = await runExample({
      PATH: process.env.PATH,
      TOKEN: service.demoToken,
      MCP_URL: service.mcpUrl,
    });
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(new RegExp(`^${TOOL_DEFINITIONS.length} tools: .*\\blist_projects\\b`));
    const json = stdout.slice(stdout.indexOf('\n') + 1);
    expect(JSON.parse(json)).toMatchObject({ data: expect.any(Array), next_cursor: null });
  });

  it('explains what to set when TOKEN is missing', async () => {
    const { code, stderr } = await runExample({ PATH: process.env.PATH, MCP_URL: service.mcpUrl });
    expect(code).toBe(2);
    expect(stderr).toContain('Set TOKEN');
  });
});
