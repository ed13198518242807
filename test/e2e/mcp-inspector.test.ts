/**
 * MCP Inspector's CLI (`@modelcontextprotocol/inspector`, its `--cli` client on the v2 SDK) against the local tool
 * server on both revisions it speaks: `--protocol-era legacy` (2025-11-25: `initialize`, then `MCP-Session-Id`) and
 * `--protocol-era modern` (2026-07-28: `server/discover`, then stateless requests, no session). On each it lists the
 * tools and calls one. The CLI runs offline against a loopback proxy that records the MCP headers of each request; the
 * bearer token is the CLI's `--header`.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_DEFINITIONS } from '../../shared/catalogues/tools.js';
import type { LocalService } from '../../shared/local/service.js';
import { startTestService } from '../support/local-service.js';
import { startBearerProxy, type BearerProxy } from '../support/mcp.js';
import { seedToken } from '../support/store.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const INSPECTOR = join(
  ROOT,
  'node_modules',
  '@modelcontextprotocol',
  'inspector',
  'clients',
  'launcher',
  'build',
  'index.js',
);
/** One CLI run; generous, because on 2 cores it may share the machine with the heaviest test files. */
const RUN_TIMEOUT_MS = 60_000;

let service: LocalService;
let token: string;
let home: string;

/** Runs the Inspector CLI with `args` against `url`; resolves with its exit code and parsed JSON output. */
function inspect(url: string, args: string[]): Promise<{ code: number | null; json: any; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [INSPECTOR, '--cli', url, '--header', `Authorization: Bearer ${token}`, '--format', 'json', ...args],
      // Its own home: the CLI keeps a catalog and secrets under ~/.mcp-inspector.
      { env: { ...process.env, HOME: home, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      let json: any = null;
      try {
        json = JSON.parse(stdout);
      } catch {
        // left null: the assertion below shows stdout and stderr
      }
      resolve({ code, json, stderr: stderr || stdout });
    });
  });
}

beforeAll(async () => {
  service = await startTestService();
  ({ token } = await seedToken(service.store, service.runtime.clock, { teamId: service.demoTeamId }));
  home = mkdtempSync(join(tmpdir(), 'inspector-home-'));
});

afterAll(async () => {
  await service?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('MCP Inspector CLI', () => {
  for (const [era, revision] of [
    ['legacy', '2025-11-25'],
    ['modern', '2026-07-28'],
  ] as const) {
    it(
      `lists the tools and calls list_projects with --protocol-era ${era} (${revision})`,
      { timeout: 3 * RUN_TIMEOUT_MS },
      async () => {
        // A proxy per era records what the CLI sends; it passes the CLI's own Authorization header on unchanged.
        const proxy: BearerProxy = await startBearerProxy(service.mcpUrl, token);
        try {
          const listed = await inspect(proxy.url, ['--protocol-era', era, '--method', 'tools/list']);
          expect(listed.code, listed.stderr).toBe(0);
          expect(listed.json.result.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(
            TOOL_DEFINITIONS.map((tool) => tool.name).sort(),
          );
          const called = await inspect(proxy.url, [
            '--protocol-era',
            era,
            '--method',
            'tools/call',
            '--tool-name',
            'list_projects',
            '--tool-args-json',
            '{"limit":5}',
          ]);
          expect(called.code, called.stderr).toBe(0);
          expect(called.json.result.isError).toBeFalsy();
          expect(called.json.result.structuredContent).toMatchObject({ data: expect.any(Array) });
          const posts = proxy.seen().filter((request) => request.httpMethod === 'POST');
          expect(posts.length).toBeGreaterThan(0);
          if (era === 'modern') {
            for (const request of posts) {
              expect(request).toMatchObject({ protocolVersion: revision, mcpMethod: expect.any(String) });
              expect(request.sessionId).toBeUndefined();
              expect(request.mcpMethod).not.toBe('initialize');
            }
            // Each run starts with server/discover, never initialize.
            expect(posts[0].mcpMethod).toBe('server/discover');
            expect(posts.map((request) => request.mcpMethod)).toEqual(
              expect.arrayContaining(['tools/list', 'tools/call']),
            );
          } else {
            // The first request of each run is `initialize` (no session yet); the rest carry the session it opened.
            expect(posts.filter((request) => request.sessionId === undefined)).toHaveLength(2);
            expect(
              posts
                .filter((request) => request.sessionId !== undefined)
                .every((request) => request.protocolVersion === revision),
            ).toBe(true);
          }
        } finally {
          await proxy.close();
        }
      },
    );
  }
});
