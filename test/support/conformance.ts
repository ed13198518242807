/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`, server scenarios) against a local
 * tool server, one CLI run per protocol revision. The suite sends no credentials, so the run goes through a loopback
 * proxy that adds tokens of the demo team. The service never turns authentication off.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect } from 'vitest';
import { ABILITY_VALUES } from '../../shared/catalogues/abilities.js';
import type { LocalService } from '../../shared/local/service.js';
import { startTestService } from './local-service.js';
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
async function listScenarios(revision: Revision): Promise<string[]> {
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
async function runScenarios(
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

/**
 * Registers the file's hooks: before its tests, a local tool server and one suite run at `revision`; after them, the
 * server stopped and the results deleted. `scenarios()` lists what the suite has for each revision; `run(scenario)`
 * is a scenario's run (throws when the suite did not run it).
 */
export function useConformanceRun(revision: Revision) {
  let service: LocalService | undefined;
  let outputDirectory: string | undefined;
  let runs = new Map<string, ScenarioRun>();
  const listed = new Map<Revision, string[]>();
  beforeAll(async () => {
    service = await startTestService();
    outputDirectory = mkdtempSync(join(tmpdir(), `mcp-conformance-${revision}-`));
    for (const listedRevision of ['2025-11-25', '2026-07-28'] as const)
      listed.set(listedRevision, await listScenarios(listedRevision));
    runs = await runScenarios(service, revision, outputDirectory);
  }, 900_000);
  afterAll(async () => {
    await service?.stop();
    if (outputDirectory) rmSync(outputDirectory, { recursive: true, force: true });
  });
  return {
    scenarios: (listedRevision: Revision) => listed.get(listedRevision) ?? [],
    run(scenario: string): ScenarioRun {
      const run = runs.get(scenario);
      if (!run) throw new Error(`The suite did not run ${scenario} at ${revision}`);
      return run;
    },
  };
}

/** Asserts that a scenario passed: it finished, at least one check succeeded, and none failed or warned. */
export function expectPassed(run: ScenarioRun): void {
  expect(run.timedOut, describeRun(run)).toBe(false);
  expect(checksWith(run, 'SUCCESS').length, describeRun(run)).toBeGreaterThan(0);
  expect(checksWith(run, 'FAILURE', 'WARNING'), describeRun(run)).toEqual([]);
}

/**
 * Asserts that a scenario finished, at least `successes` checks succeeded, and every failed or warned check (at least
 * one) says `reason`: a scenario that does not apply cannot hide a regression behind it.
 */
export function expectRefusedOnlyFor(run: ScenarioRun, reason: RegExp, successes = 0): void {
  expect(run.timedOut, describeRun(run)).toBe(false);
  expect(checksWith(run, 'SUCCESS').length, describeRun(run)).toBeGreaterThanOrEqual(successes);
  const refused = checksWith(run, 'FAILURE', 'WARNING');
  expect(refused.length, describeRun(run)).toBeGreaterThan(0);
  for (const check of refused) expect(check.errorMessage ?? '', describeRun(run)).toMatch(reason);
}
