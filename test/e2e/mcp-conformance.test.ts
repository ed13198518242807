/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, server scenarios) against
 * the local tool server (`startLocalService`, the same Lambda handler as on AWS).
 *
 * The suite sends no credentials, so each scenario goes through its own test-only loopback proxy
 * (test/support/mcp.ts `startBearerProxy`) that adds `Authorization: Bearer <token>` with a fresh
 * token of the demo team (every ability; one token per scenario so the 120/min `mcp` bucket of one
 * scenario never throttles another). The service itself never turns authentication off.
 *
 * Every scenario the installed suite lists must be classified below:
 * - APPLICABLE: must pass (at least one SUCCESS check, no FAILURE, no WARNING).
 * - INFORMATIONAL: the suite records only INFO for a JSON-response server; must have no FAILURE.
 * - NOT_APPLICABLE: needs fixtures or features this service does not have by design; every failed
 *   check must fail for exactly the stated reason (so a real regression cannot hide behind it).
 * The same table is in docs/mcp.md, "MCP conformance".
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ABILITY_VALUES } from '../../shared/catalogues/abilities.js';
import type { LocalService } from '../../shared/local/service.js';
import { startTestService } from '../support/local-service.js';
import { startBearerProxy, type BearerProxy } from '../support/mcp.js';
import { seedToken } from '../support/store.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CONFORMANCE_CLI = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
/** Per CLI run; a scenario takes about a second. */
/** One scenario's CLI run; generous, because on 2 cores it may share the machine with the heaviest test files. */
const SCENARIO_TIMEOUT_MS = 150_000;
const PARALLEL_RUNS = 4;

/** Scenarios that fit this server (JSON responses, no test fixtures) and must pass. */
const APPLICABLE: Readonly<Record<string, string>> = {
  'server-initialize': 'initialize handshake, server info, capabilities',
  ping: 'ping answers {}',
  'tools-list': 'every tool has name, description and inputSchema',
  'resources-list': 'the six service://enums/* resources',
  'server-sse-multiple-streams': 'three concurrent POSTs on one session are all accepted (answered as JSON)',
  'dns-rebinding-protection':
    'a foreign Host/Origin (evil.example.com) is refused with 403 by the local server\u2019s Host validation; a localhost Host is accepted',
};

/** Scenarios whose checks are only INFO for a JSON-response server; they must not fail. */
const INFORMATIONAL: Readonly<Record<string, string>> = {
  'server-sse-polling':
    'SSE polling/resumption (SEP-1699) needs SSE responses and the suite\u2019s `test_reconnection` tool; this server answers JSON (DESIGN D5), which the suite records as INFO ("priming event tests not applicable").',
};

/** Scenarios that do not apply, with the reason and the failure message that reason produces. */
const NOT_APPLICABLE: Readonly<Record<string, { reason: string; failure: RegExp }>> = {
  'logging-set-level': {
    reason: 'The server declares no `logging` capability (not in the interface); `logging/setLevel` is -32601.',
    failure: /-32601: Method not found/,
  },
  'completion-complete': {
    reason:
      'No prompts or resource templates, so no `completions` capability; also needs the suite\u2019s `test_prompt_with_arguments`.',
    failure: /-32601: Method not found/,
  },
  'tools-call-simple-text': {
    reason: 'Calls the suite\u2019s fixture tool `test_simple_text`; the interface fixes the tools.',
    failure: /Unknown tool: test_simple_text/,
  },
  'tools-call-image': {
    reason: 'Calls the fixture tool `test_image_content`.',
    failure: /Unknown tool: test_image_content/,
  },
  'tools-call-audio': {
    reason: 'Calls the fixture tool `test_audio_content`.',
    failure: /Unknown tool: test_audio_content/,
  },
  'tools-call-embedded-resource': {
    reason: 'Calls the fixture tool `test_embedded_resource`.',
    failure: /Unknown tool: test_embedded_resource/,
  },
  'tools-call-mixed-content': {
    reason: 'Calls the fixture tool `test_multiple_content_types`.',
    failure: /Unknown tool: test_multiple_content_types/,
  },
  'tools-call-with-logging': {
    reason: 'Needs the `logging` capability and the fixture tool `test_tool_with_logging`.',
    failure: /-32601: Method not found|Unknown tool: test_tool_with_logging/,
  },
  'tools-call-error': {
    reason:
      'Calls the fixture tool `test_error_handling` (this server\u2019s own isError results are covered in mcp-protocol.test.ts).',
    failure: /Unknown tool: test_error_handling/,
  },
  'tools-call-with-progress': {
    reason:
      'Calls the fixture tool `test_tool_with_progress`; progress notifications need a stream (JSON responses only).',
    failure: /Unknown tool: test_tool_with_progress/,
  },
  'tools-call-sampling': {
    reason: 'Calls the fixture tool `test_sampling`; server-to-client requests need a stream (JSON responses only).',
    failure: /Unknown tool: test_sampling/,
  },
  'tools-call-elicitation': {
    reason: 'Calls the fixture tool `test_elicitation`; server-to-client requests need a stream.',
    failure: /Unknown tool: test_elicitation/,
  },
  'json-schema-2020-12': {
    reason: 'Looks for the fixture tool `json_schema_2020_12_tool`.',
    failure: /Tool 'json_schema_2020_12_tool' not found/,
  },
  'elicitation-sep1034-defaults': {
    reason: 'Calls the fixture tool `test_elicitation_sep1034_defaults`; elicitation needs a stream.',
    failure: /Unknown tool: test_elicitation_sep1034_defaults/,
  },
  'elicitation-sep1330-enums': {
    reason: 'Calls the fixture tool `test_elicitation_sep1330_enums`; elicitation needs a stream.',
    failure: /Unknown tool: test_elicitation_sep1330_enums/,
  },
  'resources-read-text': {
    reason:
      'Reads the fixture resource `test://static-text`; this server\u2019s resources are `service://enums/*` (unknown URI: -32002).',
    failure: /Resource not found: test:\/\/static-text/,
  },
  'resources-read-binary': {
    reason: 'Reads the fixture resource `test://static-binary`.',
    failure: /Resource not found: test:\/\/static-binary/,
  },
  'resources-templates-read': {
    reason: 'Reads the fixture template `test://template/{id}/data`; this server has no resource templates.',
    failure: /Resource not found: test:\/\/template\/123\/data/,
  },
  'resources-subscribe': {
    reason:
      'No `resources.subscribe` capability: the resources are static catalogues, and updates would need a stream.',
    failure: /-32601: Method not found/,
  },
  'resources-unsubscribe': {
    reason: 'No `resources.subscribe` capability (as above).',
    failure: /-32601: Method not found/,
  },
  'prompts-list': {
    reason: 'The interface says the server publishes no prompts: no `prompts` capability.',
    failure: /-32601: Method not found/,
  },
  'prompts-get-simple': { reason: 'No prompts (interface).', failure: /-32601: Method not found/ },
  'prompts-get-with-args': { reason: 'No prompts (interface).', failure: /-32601: Method not found/ },
  'prompts-get-embedded-resource': { reason: 'No prompts (interface).', failure: /-32601: Method not found/ },
  'prompts-get-with-image': { reason: 'No prompts (interface).', failure: /-32601: Method not found/ },
};

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | (string & {});
  errorMessage?: string;
  description?: string;
}

interface ScenarioRun {
  scenario: string;
  exitCode: number | null;
  timedOut: boolean;
  output: string;
  checks: Check[];
}

let service: LocalService;
let outputDirectory: string;
const proxies: BearerProxy[] = [];
const runs = new Map<string, ScenarioRun>();
let listed: string[] = [];

/** Runs the conformance CLI (Node 24, the running one) with `args`; kills it after `timeoutMs`. */
function runCli(
  args: string[],
  timeoutMs: number,
): Promise<{ exitCode: number | null; timedOut: boolean; output: string }> {
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
    }, timeoutMs);
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

/** One scenario through its own proxy and token; reads `checks.json` from the CLI's output directory. */
async function runScenario(scenario: string): Promise<ScenarioRun> {
  const minted = await seedToken(service.store, service.runtime.clock, {
    teamId: service.demoTeamId,
    abilities: ABILITY_VALUES,
    name: `conformance ${scenario}`,
  });
  const proxy = await startBearerProxy(service.mcpUrl, minted.token);
  proxies.push(proxy);
  const directory = join(outputDirectory, scenario.replace(/[^a-z0-9-]/gi, '_'));
  try {
    const { exitCode, timedOut, output } = await runCli(
      ['server', '--url', proxy.url, '--scenario', scenario, '-o', directory],
      SCENARIO_TIMEOUT_MS,
    );
    let checks: Check[] = [];
    try {
      const [resultDirectory] = readdirSync(directory).filter((name) => name.startsWith(`server-${scenario}-`));
      if (resultDirectory)
        checks = JSON.parse(readFileSync(join(directory, resultDirectory, 'checks.json'), 'utf8')) as Check[];
    } catch {
      checks = [];
    }
    return { scenario, exitCode, timedOut, output, checks };
  } finally {
    await proxy.close();
  }
}

const failures = (run: ScenarioRun) => run.checks.filter((check) => check.status === 'FAILURE');
const describeRun = (run: ScenarioRun) =>
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

beforeAll(async () => {
  service = await startTestService();
  outputDirectory = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));

  const list = await runCli(['list', '--server'], SCENARIO_TIMEOUT_MS);
  if (list.exitCode !== 0) throw new Error(`conformance list failed:\n${list.output}`);
  listed = [...list.output.matchAll(/^\s+-\s+(\S+)/gm)].map((match) => match[1]);

  const queue = [...listed];
  await Promise.all(
    Array.from({ length: PARALLEL_RUNS }, async () => {
      for (let scenario = queue.shift(); scenario; scenario = queue.shift())
        runs.set(scenario, await runScenario(scenario));
    }),
  );
}, 900_000);

afterAll(async () => {
  await Promise.all(proxies.map((proxy) => proxy.close().catch(() => undefined)));
  await service?.stop();
  if (outputDirectory) rmSync(outputDirectory, { recursive: true, force: true });
});

describe('MCP conformance suite (server scenarios)', () => {
  it('lists server scenarios, and every one is classified here (a new suite version must be reviewed)', () => {
    expect(listed.length).toBeGreaterThanOrEqual(30);
    const classified = new Set([
      ...Object.keys(APPLICABLE),
      ...Object.keys(INFORMATIONAL),
      ...Object.keys(NOT_APPLICABLE),
    ]);
    expect(listed.filter((scenario) => !classified.has(scenario))).toEqual([]);
    expect([...classified].filter((scenario) => !listed.includes(scenario))).toEqual([]);
  });

  it.each(Object.keys(APPLICABLE))('passes %s', (scenario) => {
    const run = runs.get(scenario)!;
    expect(run, scenario).toBeDefined();
    expect(run.timedOut, describeRun(run)).toBe(false);
    expect(run.checks.filter((check) => check.status === 'SUCCESS').length, describeRun(run)).toBeGreaterThan(0);
    expect(
      run.checks.filter((check) => check.status === 'FAILURE' || check.status === 'WARNING'),
      describeRun(run),
    ).toEqual([]);
    expect(run.exitCode, describeRun(run)).toBe(0);
  });

  it.each(Object.keys(INFORMATIONAL))('records only information, no failure, for %s', (scenario) => {
    const run = runs.get(scenario)!;
    expect(run.timedOut, describeRun(run)).toBe(false);
    expect(failures(run), describeRun(run)).toEqual([]);
    expect(
      run.checks.some((check) => check.id === 'server-sse-content-type' && check.status === 'INFO'),
      describeRun(run),
    ).toBe(true);
  });

  it.each(Object.keys(NOT_APPLICABLE))('fails %s only for the reason it does not apply', (scenario) => {
    const run = runs.get(scenario)!;
    const { failure } = NOT_APPLICABLE[scenario];
    expect(run.timedOut, describeRun(run)).toBe(false);
    expect(failures(run).length, describeRun(run)).toBeGreaterThan(0);
    for (const check of failures(run)) expect(check.errorMessage ?? '', describeRun(run)).toMatch(failure);
    // Nothing else went wrong on the way (no 401/429/5xx from the transport).
    expect(
      run.checks.filter((check) => check.status === 'WARNING'),
      describeRun(run),
    ).toEqual([]);
  });
});
