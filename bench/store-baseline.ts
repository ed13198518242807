/**
 * The store's own figures, measured in the same run as the service's: the latency of one raw GetItem and one raw
 * conditional UpdateItem (the baseline of each call's overhead ratio), and DynamoDB Local's write ceiling — concurrent
 * conditional UpdateItems on distinct items, the request mix of transitions and deliveries — straight through the store
 * adapter, with no service code around it. A call's DynamoDB requests are priced at these raw p50s (ms): its round
 * trips, the denominator of its latency ratio at raw prices.
 *
 * Bench items live under their own partition keys (`BENCH#...`), which no service code reads.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Store } from '../shared/store/store.js';
import { runPool, summarize, type LatencySummary } from './measuring.js';

/**
 * Latency of single raw requests of each kind the service sends, sequential (one in flight), in milliseconds: the
 * prices of a call's round trips ({@link rawPriceOf}).
 */
export interface RawRequestLatency {
  getItem: LatencySummary;
  updateItem: LatencySummary;
  /** BatchGetItem of two keys (the service reads a token and its team together). */
  batchGetItem: LatencySummary;
  /** Query of a one-item partition. */
  query: LatencySummary;
  /** PutItem of a new item, on condition it does not exist. */
  putItem: LatencySummary;
  /** TransactWriteItems of two conditional updates (the service's transactions hold two or more items). */
  transactWriteItems: LatencySummary;
  /**
   * TransactWriteItems of `size` conditional updates on distinct items, by size, for the sizes the measured calls
   * sent: DynamoDB Local takes about one UpdateItem longer per item, so a two-item price undercharges larger ones.
   */
  transactWriteItemsBySize: Record<number, LatencySummary>;
}

/** The raw requests of each kind of {@link RawRequestLatency} on the bench's own items, ready to send one at a time. */
export interface RawRequestSet {
  /** One request of each single kind. */
  requests: Record<RequestKind, () => Promise<unknown>>;
  /** One TransactWriteItems of that many conditional updates on distinct items, by size. */
  transactions: Record<number, () => Promise<unknown>>;
}

/**
 * Puts the bench items (under a partition key of their own) and returns requests of each kind on them: reads strongly
 * consistent, writes conditional as the service's revision-guarded writes are; transactions of each of
 * `transactionSizes` items beside the two-item one.
 */
export async function rawRequestSet(store: Store, transactionSizes: readonly number[] = []): Promise<RawRequestSet> {
  const run = randomBytes(6).toString('hex');
  const itemKeys = Array.from({ length: Math.max(2, ...transactionSizes) }, (_, index) => ({
    pk: `BENCH#RAW#${run}${index ? `#${index + 1}` : ''}`,
    sk: 'BENCH',
  }));
  const [key, other] = itemKeys as [(typeof itemKeys)[0], (typeof itemKeys)[0]];
  for (const itemKey of itemKeys) await store.put({ Item: { ...itemKey, counter: 0 } });
  const increment = (itemKey: typeof key) => ({
    Key: itemKey,
    UpdateExpression: 'SET #counter = #counter + :one',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeNames: { '#counter': 'counter' },
    ExpressionAttributeValues: { ':one': 1 },
  });
  let puts = 0;
  return {
    requests: {
      getItem: () => store.get(key),
      updateItem: () => store.update(increment(key)),
      batchGetItem: () => store.batchGet([key, other]),
      query: () =>
        store.query({
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': key.pk },
          ConsistentRead: true,
        }),
      putItem: () =>
        store.put({
          Item: { pk: `BENCH#RAW#${run}#PUT#${puts++}`, sk: 'BENCH', counter: 0 },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      transactWriteItems: () => store.transactWrite([{ Update: increment(key) }, { Update: increment(other) }]),
    },
    transactions: Object.fromEntries(
      [...new Set(transactionSizes)].map((size) => [
        size,
        () => store.transactWrite(itemKeys.slice(0, size).map((itemKey) => ({ Update: increment(itemKey) }))),
      ]),
    ),
  };
}

/**
 * Sends one request of each kind of `set`, each timed, in a fixed order: one round of a paired measurement.
 * Resolves each request's duration (ms) by kind, and by size for the transactions.
 */
export async function timeRawRound(
  set: RawRequestSet,
): Promise<{ requests: Record<RequestKind, number>; transactions: Record<number, number> }> {
  const timed = async (request: () => Promise<unknown>) => {
    const started = performance.now();
    await request();
    return performance.now() - started;
  };
  const requests: Partial<Record<RequestKind, number>> = {};
  for (const [kind, request] of Object.entries(set.requests)) requests[kind as RequestKind] = await timed(request);
  const transactions: Record<number, number> = {};
  for (const [size, request] of Object.entries(set.transactions)) transactions[Number(size)] = await timed(request);
  return { requests: requests as Record<RequestKind, number>, transactions };
}

/** The {@link RawRequestLatency} of rounds of {@link timeRawRound} (ms). */
export function summarizeRawRounds(rounds: Awaited<ReturnType<typeof timeRawRound>>[]): RawRequestLatency {
  const kinds = Object.keys(rounds[0]?.requests ?? {}) as RequestKind[];
  const sizes = Object.keys(rounds[0]?.transactions ?? {}).map(Number);
  return {
    ...(Object.fromEntries(kinds.map((kind) => [kind, summarize(rounds.map((round) => round.requests[kind]))])) as Pick<
      RawRequestLatency,
      RequestKind
    >),
    transactWriteItemsBySize: Object.fromEntries(
      sizes.map((size) => [size, summarize(rounds.map((round) => round.transactions[size]))]),
    ),
  };
}

/**
 * Sends `samples` sequential requests of each kind of {@link RawRequestLatency} (one kind after the other, after 20
 * warm-up requests of each; transactions of each of `transactionSizes` items too). Returns their latency (ms).
 */
export async function measureRawRequests(
  store: Store,
  samples: number,
  transactionSizes: readonly number[] = [],
): Promise<RawRequestLatency> {
  const set = await rawRequestSet(store, transactionSizes);
  const time = async (request: () => Promise<unknown>) => {
    for (let index = 0; index < 20; index++) await request();
    const latencies: number[] = [];
    for (let index = 0; index < samples; index++) {
      const started = performance.now();
      await request();
      latencies.push(performance.now() - started);
    }
    return summarize(latencies);
  };
  const latency: Partial<Pick<RawRequestLatency, RequestKind>> = {};
  for (const [kind, request] of Object.entries(set.requests)) latency[kind as RequestKind] = await time(request);
  const transactWriteItemsBySize: Record<number, LatencySummary> = {};
  for (const [size, request] of Object.entries(set.transactions))
    transactWriteItemsBySize[Number(size)] = await time(request);
  return { ...(latency as Pick<RawRequestLatency, RequestKind>), transactWriteItemsBySize };
}

/** The kinds of single raw request, each priced by its own p50. */
type RequestKind = Exclude<keyof RawRequestLatency, 'transactWriteItemsBySize'>;

/** The raw request whose p50 prices each operation a call sends; an operation not listed is priced as an UpdateItem. */
const PRICED_AS: Record<string, RequestKind> = {
  Get: 'getItem',
  BatchGet: 'batchGetItem',
  TransactGet: 'batchGetItem',
  Query: 'query',
  Scan: 'query',
  Put: 'putItem',
  Update: 'updateItem',
  Delete: 'updateItem',
  TransactWrite: 'transactWriteItems',
  BatchWrite: 'transactWriteItems',
};

/** The raw p50 (ms) of operation `operation` (`Get`, `TransactWrite`, ...): its own kind's ({@link PRICED_AS}). */
function rawPriceOf(operation: string, raw: RawRequestLatency): number {
  return raw[PRICED_AS[operation] ?? 'updateItem'].p50;
}

/**
 * The operation of a command or request description: `GetItemCommand` / `Get SUBSCRIPTION` → `Get`,
 * `TransactWrite[...]` → `TransactWrite`.
 */
function operationOf(name: string): string {
  return name
    .replace(/Command$/, '')
    .split(/[ [×]/)[0]
    .replace(/Items?$/, '');
}

/** Read operations (priced at the raw GetItem p50 by {@link getUpdateRoundTripsMs}). */
const READ_OPERATIONS = new Set(['Get', 'BatchGet', 'Query', 'TransactGet', 'Scan']);

/**
 * The round trips of a call priced at the raw requests' p50 (ms), each request at its own kind's raw p50
 * (`rawPriceOf`: a TransactWriteItems at a raw two-item transaction's, a BatchGetItem at a raw two-key batch's), from
 * requests per call by command name or description.
 */
export function roundTripsMs(perCall: Record<string, number>, raw: RawRequestLatency): number {
  return Object.entries(perCall).reduce(
    (total, [name, count]) => total + count * rawPriceOf(operationOf(name), raw),
    0,
  );
}

/**
 * The raw p50 (ms) pricing one request of operation `operation` (`Get`, `TransactWrite`, ...): its kind's, a
 * TransactWriteItems of `items` items at a raw transaction of that size when one was measured.
 */
export function priceOfRequest(operation: string, items: number | undefined, raw: RawRequestLatency): number {
  const bySize = operation === 'TransactWrite' && items ? raw.transactWriteItemsBySize[items] : undefined;
  return bySize?.p50 ?? rawPriceOf(operation, raw);
}

/**
 * The round trips of {@link roundTripsMs}, but each TransactWriteItems at the raw p50 of a transaction of its own size
 * (`transactionsPerCall`: item count → transactions per call; a size not measured keeps the two-item price).
 */
export function roundTripsBySizeMs(
  perCall: Record<string, number>,
  transactionsPerCall: Record<string, number>,
  raw: RawRequestLatency,
): number {
  return Object.entries(transactionsPerCall).reduce(
    (total, [size, count]) =>
      total +
      count *
        ((raw.transactWriteItemsBySize[Number(size)]?.p50 ?? raw.transactWriteItems.p50) - raw.transactWriteItems.p50),
    roundTripsMs(perCall, raw),
  );
}

/** The item counts of the transactions `calls` sent (their sizes to price raw). */
export function transactionSizesOf(calls: ReadonlyArray<{ transactionTotals: Record<string, number> }>): number[] {
  return [...new Set(calls.flatMap((call) => Object.keys(call.transactionTotals).map(Number)))].sort((a, b) => a - b);
}

/**
 * The same round trips at two prices only, as earlier runs printed them: each read at the GetItem p50, each write
 * (PutItem, TransactWriteItems, ...) at the UpdateItem p50.
 */
export function getUpdateRoundTripsMs(perCall: Record<string, number>, raw: RawRequestLatency): number {
  return Object.entries(perCall).reduce(
    (total, [name, count]) =>
      total + count * (READ_OPERATIONS.has(operationOf(name)) ? raw.getItem.p50 : raw.updateItem.p50),
    0,
  );
}

/** `totals` (requests by command name or description) divided by `calls`: requests per call. */
export function perCall(totals: Record<string, number>, calls: number): Record<string, number> {
  return Object.fromEntries(Object.entries(totals).map(([name, count]) => [name, count / calls]));
}

/** DynamoDB Local's write ceiling: conditional write requests per second at a concurrency. */
export interface WriteCeiling {
  /** Requests sent (UpdateItems, or TransactWriteItems of `itemsPerTransaction` updates). */
  updates: number;
  concurrency: number;
  /** 1 for UpdateItems; more for TransactWriteItems of that many conditional updates. */
  itemsPerTransaction: number;
  seconds: number;
  /** Requests per second. */
  updatesPerSecond: number;
}

/**
 * Sends `updates` conditional write requests, `concurrency` at a time, each to distinct new items
 * (`SET revision = :one, updated_at = :now` if `revision` does not exist yet: a conditional write of
 * about the size of a subscription's or delivery's state change), after `concurrency` warm-up requests.
 * Each request is one UpdateItem, or with `itemsPerTransaction` > 1 one TransactWriteItems of that many
 * such updates (the dispatcher's request mix: its lease-and-slot and outcome transactions hold 2).
 * Returns requests per second.
 */
export async function measureWriteCeiling(
  store: Store,
  options: { updates: number; concurrency: number; itemsPerTransaction?: number },
): Promise<WriteCeiling> {
  const run = randomBytes(6).toString('hex');
  const itemsPerTransaction = options.itemsPerTransaction ?? 1;
  const item = (index: number, part: number) => ({
    Key: { pk: `BENCH#CEILING#${run}#${index}`, sk: `BENCH#${part}` },
    UpdateExpression: 'SET revision = :one, updated_at = :now, #status = :status',
    ConditionExpression: 'attribute_not_exists(revision)',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: { ':one': 1, ':now': new Date().toISOString(), ':status': 'succeeded' },
  });
  const update = async (index: number) => {
    if (itemsPerTransaction === 1) await store.update(item(index, 0));
    else
      await store.transactWrite(
        Array.from({ length: itemsPerTransaction }, (_, part) => ({ Update: item(index, part) })),
      );
  };
  await runPool(options.concurrency, options.concurrency, async (index) => {
    await update(-1 - index);
  });
  const started = performance.now();
  await runPool(options.updates, options.concurrency, async (index) => {
    await update(index);
  });
  const seconds = (performance.now() - started) / 1000;
  return {
    updates: options.updates,
    concurrency: options.concurrency,
    itemsPerTransaction,
    seconds,
    updatesPerSecond: options.updates / seconds,
  };
}
