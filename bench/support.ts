/**
 * The DynamoDB request counter of `npm run bench` (DESIGN §6: benchmarks print figures and never run in `npm test`):
 * middlewares added to a client's stack that count and time each command, tell background work from the call being
 * measured, and describe each request by the item kinds it touches.
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { round } from './measuring.js';

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
  /** The item count of each foreground TransactWriteItems, in the order sent. */
  transactionSizes: number[];
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
    transactionSizes: [],
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
      const transactItems = (args.input as { TransactItems?: unknown[] } | undefined)?.TransactItems;
      if (/^TransactWrite/.test(name) && transactItems) counts.transactionSizes.push(transactItems.length);
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
        transactionSizes: [...counts.transactionSizes],
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
