/**
 * Shared helpers of `npm run bench` (DESIGN §6: benchmarks print figures and never run in `npm test`):
 * free ports, a cleanup registry that also runs on Ctrl-C, percentiles from sorted samples, a DynamoDB
 * request counter added to a client's middleware stack, token minting and a small table printer.
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createServer } from 'node:net';
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
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
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
function percentile(sortedAscending: readonly number[], p: number): number {
  if (sortedAscending.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sortedAscending.length);
  return sortedAscending[Math.min(sortedAscending.length - 1, Math.max(0, rank - 1))];
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

/**
 * Runs `task(i)` for i in 0..count-1 with at most `concurrency` in flight; resolves when all are done
 * (rejects on the first failure, after the tasks in flight settle).
 */
export async function runPool(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const failures: unknown[] = []; // the first failure only
  const worker = async () => {
    while (failures.length === 0 && next < count) {
      const index = next++;
      try {
        await task(index);
      } catch (error) {
        if (failures.length === 0) failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  if (failures.length > 0) throw failures[0];
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
type AddMiddleware = (
  middleware: Middleware,
  options: { step: 'initialize' | 'deserialize'; name: string; priority?: 'high' },
) => void;
/**
 * A Smithy middleware stack (a `DynamoDBClient`'s or `DynamoDBDocumentClient`'s `middlewareStack`);
 * typed loosely because `add` is overloaded per step in the SDK types.
 */
export interface MiddlewareStackLike {
  add: (middleware: never, options: never) => unknown;
}

/** What a {@link RequestCounter} has seen since its last reset. */
interface RequestCounts {
  /** Commands sent in the foreground (one per `send`, retries not included). */
  commands: number;
  /** HTTP attempts to DynamoDB in the foreground (retries included). */
  attempts: number;
  /** Foreground commands by name, e.g. `{ GetCommand: 1, UpdateCommand: 1 }` (document-client names). */
  byCommand: Record<string, number>;
  /** Commands made by background work (outbox relay, fan-out, sweeper), by label. */
  background: Record<string, number>;
  /** Foreground commands' durations by name (ms, from `send` to its result: the SDK's work and the round trip). */
  durations: Record<string, number[]>;
  /**
   * Foreground commands by what they touch ({@link describeRequest}), e.g.
   * `{ 'Get SUBSCRIPTION': 1, 'TransactWrite[Update SUBSCRIPTION, Put DEADLINE, Put EVENT]': 1 }`.
   */
  described: Record<string, number>;
  /** Background commands by label, then by what they touch (as {@link described}). */
  backgroundDescribed: Record<string, Record<string, number>>;
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
 * same stack): one first at `initialize` counting and timing commands (once per `send`), one at
 * `deserialize` counting HTTP attempts (once per try, so SDK retries show). Commands sent inside
 * {@link runAsBackground}, or labelled by `classify` (given the command name and its unmarshalled
 * input), count as background and are not timed.
 */
export function attachRequestCounter(
  stack: MiddlewareStackLike,
  classify: BackgroundClassifier = () => null,
): RequestCounter {
  const empty = (): RequestCounts => ({
    commands: 0,
    attempts: 0,
    byCommand: {},
    background: {},
    durations: {},
    described: {},
    backgroundDescribed: {},
  });
  let counts = empty();
  const add = (stack.add as unknown as AddMiddleware).bind(stack);
  add(
    (next, context) => async (args) => {
      const name = context.commandName ?? 'unknown';
      const label = background.getStore() ?? classify(name, args.input);
      // The context object travels through every step of this one send: the attempt counter reads it.
      context.benchLabel = label;
      const description = describeRequest(name, args.input);
      const described = label ? (counts.backgroundDescribed[label] ??= {}) : counts.described;
      described[description] = (described[description] ?? 0) + 1;
      if (label) {
        counts.background[label] = (counts.background[label] ?? 0) + 1;
        return next(args);
      }
      counts.commands++;
      counts.byCommand[name] = (counts.byCommand[name] ?? 0) + 1;
      const durations = (counts.durations[name] ??= []);
      const started = performance.now();
      try {
        return await next(args);
      } finally {
        durations.push(performance.now() - started);
      }
    },
    { step: 'initialize', name: 'benchCountCommands', priority: 'high' },
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
      counts = empty();
    },
    snapshot() {
      return {
        commands: counts.commands,
        attempts: counts.attempts,
        byCommand: { ...counts.byCommand },
        background: { ...counts.background },
        durations: Object.fromEntries(
          Object.entries(counts.durations).map(([name, durations]) => [name, [...durations]]),
        ),
        described: { ...counts.described },
        backgroundDescribed: Object.fromEntries(
          Object.entries(counts.backgroundDescribed).map(([label, described]) => [label, { ...described }]),
        ),
      };
    },
  };
}

/** A string attribute value, unmarshalled (`'x'`) or marshalled (`{ S: 'x' }`); undefined otherwise. */
function stringValue(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { S?: unknown }).S === 'string')
    return (value as { S: string }).S;
  return undefined;
}

/**
 * The kind of a key string: its upper-case segments, ids and shard numbers left out
 * (`TEAM#<uuid>#PROJECT#<uuid>#SUBSCRIBERS` → `TEAM#PROJECT#SUBSCRIBERS`, `OUTBOX#03` → `OUTBOX`,
 * `act_01K...` → `ACTIVITY`).
 */
function keyKind(value: string): string {
  if (value.startsWith('act_')) return 'ACTIVITY';
  return (
    value
      .split('#')
      .filter((segment) => /^[A-Z][A-Z_]*$/.test(segment))
      .join('#') || '?'
  );
}

/**
 * The kind of an item key (`{ pk, sk }`): the sort key's kind, or the partition key's when the sort key names none
 * (rate counters).
 */
function itemKind(key: unknown): string {
  const record = (key ?? {}) as Record<string, unknown>;
  const sortKey = stringValue(record.sk);
  const partitionKey = stringValue(record.pk) ?? '?';
  if (sortKey && keyKind(sortKey) !== '?' && keyKind(sortKey) !== 'TEAM') return keyKind(sortKey);
  return sortKey === 'TEAM' ? 'TEAM' : keyKind(partitionKey);
}

/** `names` counted and joined: `['Put A', 'Put A', 'Update B']` → `Put A×2, Update B`. */
function joinCounted(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].map(([name, count]) => (count > 1 ? `${name}×${count}` : name)).join(', ');
}

/**
 * A short description of one DynamoDB command by what it touches, for the bench's breakdowns of where
 * requests go: `Get SUBSCRIPTION`, `Update RATE`, `Query gsi1 OUTBOX`, `BatchGet[TOKEN, RATE]`,
 * `TransactWrite[Update SUBSCRIPTION, Put DEADLINE, Put EVENT]` (item kinds from {@link keyKind}).
 */
function describeRequest(commandName: string, input: unknown): string {
  const operation = commandName.replace(/Command$/, '').replace(/Items?$/, '');
  const request = (input ?? {}) as Record<string, unknown>;
  switch (operation) {
    case 'Get':
    case 'Update':
    case 'Delete':
      return `${operation} ${itemKind(request.Key)}`;
    case 'Put':
      return `Put ${itemKind(request.Item)}`;
    case 'Query': {
      const values = (request.ExpressionAttributeValues ?? {}) as Record<string, unknown>;
      const kinds = [
        ...new Set(
          Object.values(values)
            .map(stringValue)
            .filter((value): value is string => value !== undefined)
            .map(keyKind),
        ),
      ].filter((kind) => kind !== '?');
      return `Query ${typeof request.IndexName === 'string' && request.IndexName ? `${request.IndexName} ` : ''}${kinds.join(' ') || '?'}`;
    }
    case 'BatchGet': {
      const tables = Object.values((request.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>);
      return `BatchGet[${joinCounted(tables.flatMap((table) => (table.Keys ?? []).map(itemKind)))}]`;
    }
    case 'BatchWrite': {
      const tables = Object.values(
        (request.RequestItems ?? {}) as Record<
          string,
          Array<{ PutRequest?: { Item: unknown }; DeleteRequest?: { Key: unknown } }>
        >,
      );
      return `BatchWrite[${joinCounted(tables.flat().map((entry) => (entry.PutRequest ? `Put ${itemKind(entry.PutRequest.Item)}` : `Delete ${itemKind(entry.DeleteRequest?.Key)}`)))}]`;
    }
    case 'TransactWrite': {
      const items = (request.TransactItems ?? []) as Array<Record<string, { Key?: unknown; Item?: unknown }>>;
      return `TransactWrite[${joinCounted(
        items.map((entry) => {
          const [kind, body] = Object.entries(entry)[0] ?? ['?', {}];
          return `${kind} ${itemKind(body.Key ?? body.Item)}`;
        }),
      )}]`;
    }
    default:
      return operation;
  }
}

/** Item kinds of authentication: the token (read with the IP's counter) and the rate counters (D4). */
const AUTHENTICATION_KINDS = ['TOKEN', 'RATE'];

/**
 * The item kinds a request description ({@link describeRequest}) touches: `Get TOKEN` → `[TOKEN]`,
 * `BatchGet[TOKEN, RATE]` → `[TOKEN, RATE]`, `TransactWrite[Put EVENT×2, Update X]` → `[EVENT, X]`.
 */
function kindsOf(description: string): string[] {
  const bracket = /\[(.*)\]$/.exec(description);
  const entries = bracket ? bracket[1].split(', ') : [description];
  return entries.map((entry) => entry.replace(/×\d+$/, '').split(' ').pop()!);
}

/** True when a request touches only authentication items (the token, the IP's and the token's rate counters). */
export function isAuthentication(description: string): boolean {
  return kindsOf(description).every((kind) => AUTHENTICATION_KINDS.includes(kind));
}

/**
 * `described` counts as one line, most frequent first: `Get SUBSCRIPTION ×1000; ...`, each divided by `per` (e.g. per
 * call).
 */
export function formatDescribed(described: Record<string, number>, per = 1): string {
  return Object.entries(described)
    .sort((a, b) => b[1] - a[1])
    .map(([description, count]) => `${description} ×${round(count / per, 2)}`)
    .join('; ');
}

// ---------------------------------------------------------------------------------------------------
// Size
// ---------------------------------------------------------------------------------------------------

/** `BENCH_SCALE`: `full` (default; the sizes the issues name) or `small` (a quick run while developing). */
export type BenchScale = 'full' | 'small';

/** Reads `BENCH_SCALE` (`full` or `small`, default `full`); throws on any other value. */
export function benchScale(env: NodeJS.ProcessEnv = process.env): BenchScale {
  const value = env.BENCH_SCALE ?? 'full';
  if (value !== 'full' && value !== 'small') throw new Error(`BENCH_SCALE must be full or small, not ${value}`);
  return value;
}

/**
 * Reads `BENCH_PARTS` (a comma-separated subset of `known`; default every part). Throws on an unknown
 * name, naming the known ones.
 */
export function benchParts<T extends string>(known: readonly T[], env: NodeJS.ProcessEnv = process.env): Set<T> {
  const value = env.BENCH_PARTS?.trim();
  if (!value) return new Set(known);
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of names)
    if (!known.includes(name as T)) throw new Error(`BENCH_PARTS: unknown part ${name}; known: ${known.join(', ')}`);
  return new Set(names as T[]);
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
export async function mintTokens(
  store: Store,
  teamId: string,
  count: number,
  name: string,
): Promise<Array<{ id: string; token: string }>> {
  const tokens: Array<{ id: string; token: string }> = [];
  for (let index = 0; index < count; index++) {
    const minted = await mintToken(store, systemClock, {
      teamId,
      abilities: ABILITY_VALUES,
      name: `${name} ${index + 1}`,
    });
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
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...cells.map((row) => (row[column] ?? '').length)),
  );
  const numeric = headers.map((_, column) => rows.every((row) => typeof row[column] === 'number'));
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) => (numeric[column] ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.map(line)].join('\n');
}
