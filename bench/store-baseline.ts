/**
 * The store's own figures, measured in the same run as the service's: the latency of one raw GetItem and one raw
 * conditional UpdateItem (the baseline of each call's overhead ratio), and DynamoDB Local's write ceiling — concurrent
 * conditional UpdateItems on distinct items, the request mix of transitions and deliveries — straight through the store
 * adapter, with no service code around it.
 *
 * Bench items live under their own partition keys (`BENCH#...`), which no service code reads.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Store } from '../shared/store/store.js';
import { runPool, summarize, type LatencySummary } from './support.js';

/** Latency of single raw requests, sequential (one in flight), in milliseconds. */
export interface RawRequestLatency {
  getItem: LatencySummary;
  updateItem: LatencySummary;
}

/**
 * Puts one bench item, then sends `samples` sequential strongly consistent GetItems of it and
 * `samples` sequential conditional UpdateItems (`SET counter = counter + 1` if it exists, as the
 * service's revision-guarded writes), after 20 warm-up requests of each. Returns their latency (ms).
 */
export async function measureRawRequests(store: Store, samples: number): Promise<RawRequestLatency> {
  const key = { pk: `BENCH#RAW#${randomBytes(6).toString('hex')}`, sk: 'BENCH' };
  await store.put({ Item: { ...key, counter: 0 } });
  const get = () => store.get(key);
  const update = () =>
    store.update({
      Key: key,
      UpdateExpression: 'SET #counter = #counter + :one',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#counter': 'counter' },
      ExpressionAttributeValues: { ':one': 1 },
    });
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
  return { getItem: await time(get), updateItem: await time(update) };
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
