/**
 * Shared helpers of `npm run bench` (DESIGN §6: benchmarks print figures and never run in `npm test`):
 * free ports, a cleanup registry that also runs on Ctrl-C, percentiles from sorted samples, a DynamoDB
 * request counter added to a client's middleware stack, token minting and a small table printer.
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { mintToken } from '../shared/domain/tokens/repository.js';
import { ABILITY_VALUES } from '../shared/catalogues/abilities.js';
import { systemClock } from '../shared/clock.js';
import type { Store } from '../shared/store/store.js';

// ---------------------------------------------------------------------------------------------------
// Ports and cleanup
// ---------------------------------------------------------------------------------------------------

/** Asks the OS for a free TCP port on 127.0.0.1 (listen on port 0, read it, close). */
export async function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

const cleanups: Array<{ name: string; run: () => Promise<void> | void }> = [];
let cleaning: Promise<void> | null = null;

/** Registers a cleanup step (stop a server, a Java process...). Steps run last-registered first. */
export function onCleanup(name: string, run: () => Promise<void> | void): void {
  cleanups.push({ name, run });
}

/**
 * Runs every registered cleanup step once, last-registered first; a failing step is reported on
 * stderr and does not stop the others. Safe to call several times (later calls await the first).
 */
export function runCleanups(): Promise<void> {
  cleaning ??= (async () => {
    while (cleanups.length) {
      const step = cleanups.pop()!;
      try {
        await step.run();
      } catch (error) {
        process.stderr.write(`cleanup "${step.name}" failed: ${(error as Error).message}\n`);
      }
    }
  })();
  return cleaning;
}

let signalled = false;

/** True once SIGINT / SIGTERM was received (errors that follow from stopping are not worth printing). */
export function isStopping(): boolean {
  return signalled;
}

/**
 * On SIGINT / SIGTERM (Ctrl-C), runs the cleanups (so DynamoDB Local's Java process never outlives the
 * bench) and exits with 130 / 143. A second signal exits at once.
 */
export function installSignalHandlers(): void {
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.on(signal, () => {
      if (signalled) process.exit(code);
      signalled = true;
      process.stderr.write(`\n${signal}: stopping...\n`);
      void runCleanups().finally(() => process.exit(code));
    });
  }
}

// ---------------------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------------------

/** Nearest-rank percentile (`p` in 0–100) of samples sorted ascending; NaN when empty. */
export function percentile(sortedAscending: readonly number[], p: number): number {
  if (sortedAscending.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sortedAscending.length);
  return sortedAscending[Math.min(sortedAscending.length - 1, Math.max(0, rank - 1))]!;
}

/** Summary of latency samples in milliseconds. */
export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

/** Summarises samples (milliseconds): count, p50, p99, min, max, mean. */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
  };
}

/** Rounds to `digits` decimals (for printing and the JSON line). */
export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Runs `fn` and returns its result with the elapsed wall-clock milliseconds. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await fn();
  return { result, ms: performance.now() - started };
}

/**
 * Runs `task(i)` for i in 0..count-1 with at most `concurrency` in flight; resolves when all are done
 * (rejects on the first failure, after the tasks in flight settle).
 */
export async function runPool(count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: unknown = null;
  const worker = async () => {
    while (failure === null && next < count) {
      const index = next++;
      try {
        await task(index);
      } catch (error) {
        failure ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  if (failure !== null) throw failure;
}

// ---------------------------------------------------------------------------------------------------
// DynamoDB request counting
// ---------------------------------------------------------------------------------------------------

/**
 * Async context marking DynamoDB requests made by background work (the local outbox relay and fan-out),
 * so they are counted apart from the requests of the call being measured.
 */
const background = new AsyncLocalStorage<string>();

/** Runs `fn` (and everything it starts asynchronously) as background work labelled `label`. */
export function runAsBackground<T>(label: string, fn: () => T): T {
  return background.run(label, fn);
}

type Handler = (args: { input?: unknown }) => Promise<unknown>;
type Middleware = (next: Handler, context: { commandName?: string; benchLabel?: string | null }) => Handler;
type AddMiddleware = (middleware: Middleware, options: { step: 'initialize' | 'deserialize'; name: string }) => void;
/**
 * A Smithy middleware stack (a `DynamoDBClient`'s or `DynamoDBDocumentClient`'s `middlewareStack`);
 * typed loosely because `add` is overloaded per step in the SDK types.
 */
export interface MiddlewareStackLike {
  add: (middleware: never, options: never) => unknown;
}

/** What a {@link RequestCounter} has seen since its last reset. */
export interface RequestCounts {
  /** Commands sent in the foreground (one per `send`, retries not included). */
  commands: number;
  /** HTTP attempts to DynamoDB in the foreground (retries included). */
  attempts: number;
  /** Foreground commands by name, e.g. `{ GetCommand: 1, UpdateCommand: 1 }` (document-client names). */
  byCommand: Record<string, number>;
  /** Commands made by background work (outbox relay, fan-out, sweeper), by label. */
  background: Record<string, number>;
}

/** Counts DynamoDB requests through a client's middleware stack. */
export interface RequestCounter {
  /** Zeroes every count. */
  reset(): void;
  /** A copy of the counts since the last reset. */
  snapshot(): RequestCounts;
}

/** Labels a command as background work when it is not already inside {@link runAsBackground}. */
export type BackgroundClassifier = (commandName: string, input: unknown) => string | null;

/**
 * Adds two middlewares to `stack` (a `DynamoDBClient`'s, or a `DynamoDBDocumentClient`'s, which is the
 * same stack): one at `initialize` counting commands (once per `send`), one at `deserialize` counting
 * HTTP attempts (once per try, so SDK retries show). Commands sent inside {@link runAsBackground}, or
 * labelled by `classify` (given the command name and its unmarshalled input), count as background.
 */
export function attachRequestCounter(stack: MiddlewareStackLike, classify: BackgroundClassifier = () => null): RequestCounter {
  let counts: RequestCounts = { commands: 0, attempts: 0, byCommand: {}, background: {} };
  const add = (stack.add as unknown as AddMiddleware).bind(stack);
  add(
    (next, context) => async (args) => {
      const name = context.commandName ?? 'unknown';
      const label = background.getStore() ?? classify(name, args.input);
      // The context object travels through every step of this one send: the attempt counter reads it.
      context.benchLabel = label;
      if (label) counts.background[label] = (counts.background[label] ?? 0) + 1;
      else {
        counts.commands++;
        counts.byCommand[name] = (counts.byCommand[name] ?? 0) + 1;
      }
      return next(args);
    },
    { step: 'initialize', name: 'benchCountCommands' },
  );
  add(
    (next, context) => async (args) => {
      if (!context.benchLabel) counts.attempts++;
      return next(args);
    },
    { step: 'deserialize', name: 'benchCountAttempts' },
  );
  return {
    reset() {
      counts = { commands: 0, attempts: 0, byCommand: {}, background: {} };
    },
    snapshot() {
      return { commands: counts.commands, attempts: counts.attempts, byCommand: { ...counts.byCommand }, background: { ...counts.background } };
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------------------------------

/**
 * How many tokens keep `calls` requests under a per-token limit of `limitPerMinute`, with a 20 %
 * margin (fixed one-minute windows: a run may straddle two, which only helps).
 */
export function tokensNeeded(calls: number, limitPerMinute: number): number {
  return Math.max(1, Math.ceil(calls / Math.floor(limitPerMinute * 0.8)));
}

/** Mints `count` tokens of `teamId`, each holding every ability; returns the bearer strings and ids. */
export async function mintTokens(store: Store, teamId: string, count: number, name: string): Promise<Array<{ id: string; token: string }>> {
  const tokens: Array<{ id: string; token: string }> = [];
  for (let index = 0; index < count; index++) {
    const minted = await mintToken(store, systemClock, { teamId, abilities: ABILITY_VALUES, name: `${name} ${index + 1}` });
    tokens.push({ id: minted.id, token: minted.token });
  }
  return tokens;
}

// ---------------------------------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------------------------------

/** Formats rows as a plain-text table with a header line and right-aligned numeric cells. */
export function formatTable(headers: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const cells = rows.map((row) => row.map((cell) => (typeof cell === 'number' ? String(cell) : cell)));
  const widths = headers.map((header, column) => Math.max(header.length, ...cells.map((row) => (row[column] ?? '').length)));
  const numeric = headers.map((_, column) => rows.every((row) => typeof row[column] === 'number'));
  const line = (row: readonly string[]) =>
    row.map((cell, column) => (numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join('  ').trimEnd();
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.map(line)].join('\n');
}
