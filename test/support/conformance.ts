/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`, server scenarios) against a local
 * tool server, one CLI run per scenario at one protocol revision. The suite sends no credentials, so each run goes
 * through its own loopback proxy that adds a fresh token of the demo team (every ability; one token per scenario so
 * the 120/min `mcp` bucket of one scenario never throttles another). The service never turns authentication off.
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
/** One scenario's CLI run; generous, because on 2 cores it may share the machine with the heaviest test files. */
const SCENARIO_TIMEOUT_MS = 150_000;
/** CLI runs at once. */
const PARALLEL_RUNS = 4;

/** A protocol revision the suite tests a server at (`--spec-version`). */
export type Revision = '2025-11-25' | '2026-07-28';

/** One check of a scenario, as the suite writes it to `checks.json`. */
export interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | (string & {});
  errorMessage?: string;
  description?: string;
}

/** One scenario's run: the CLI's exit, output and checks. */
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

/** One scenario at `revision` through its own proxy and token; reads `checks.json` from the CLI's output directory. */
async function runScenario(
  service: LocalService,
  scenario: string,
  revision: Revision,
  outputDirectory: string,
): Promise<ScenarioRun> {
  const minted = await seedToken(service.store, service.runtime.clock, {
    teamId: service.demoTeamId,
    abilities: ABILITY_VALUES,
    name: `conformance ${scenario} ${revision}`,
  });
  const proxy = await startBearerProxy(service.mcpUrl, minted.token);
  const directory = join(outputDirectory, `${revision}-${scenario.replace(/[^a-z0-9-]/gi, '_')}`);
  try {
    const { exitCode, timedOut, output } = await runCli([
      'server',
      '--url',
      proxy.url,
      '--scenario',
      scenario,
      '--spec-version',
      revision,
      '-o',
      directory,
    ]);
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

/** Runs `scenarios` at `revision`, {@link PARALLEL_RUNS} at a time; the runs by scenario name. */
export async function runScenarios(
  service: LocalService,
  scenarios: readonly string[],
  revision: Revision,
  outputDirectory: string,
): Promise<Map<string, ScenarioRun>> {
  const runs = new Map<string, ScenarioRun>();
  const queue = [...scenarios];
  await Promise.all(
    Array.from({ length: PARALLEL_RUNS }, async () => {
      for (let scenario = queue.shift(); scenario; scenario = queue.shift())
        runs.set(scenario, await runScenario(service, scenario, revision, outputDirectory));
    }),
  );
  return runs;
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
