import pMap from 'p-map';
import type { DeliveryQueue } from '../../runtime.js';
import { WORKER_INDEX_SHARDS } from '../../store/keys.js';
import type { Key } from '../../store/requests.js';
import type { IndexPage } from '../../store/webhook-deliveries/worker-index.js';
import { MAX_SWEEP_SPACING_MS, QUEUE_BATCH_SIZE, SHARD_CONCURRENCY, SWEEP_MOVE_CONCURRENCY } from './policy.js';

/** The worker indexes' rules (DESIGN D6, D7, D14): their shards and where the sweeper moves an overdue row. */

/**
 * Where the sweeper moves an overdue row in the pending-deliveries index (epoch MILLISECONDS): `nowMs` +
 * `spacingMs` × 2^`requeues` (re-queues by the sweeper since the last lease), at most
 * {@link MAX_SWEEP_SPACING_MS} after `nowMs`. Pure.
 */
export function sweptDueMs(requeues: number, spacingMs: number, nowMs: number): number {
  return nowMs + Math.min(spacingMs * 2 ** requeues, MAX_SWEEP_SPACING_MS);
}

/** Every shard number of the worker indexes, 0 … {@link WORKER_INDEX_SHARDS} − 1. */
export const WORKER_SHARDS: readonly number[] = Array.from({ length: WORKER_INDEX_SHARDS }, (_, shard) => shard);

/**
 * Reads every page of every worker-index shard ({@link SHARD_CONCURRENCY} shards at a time, pages in order within a
 * shard) and hands each page's items to `handle`. Returns the sum of what `handle` returned; throws what either throws.
 */
export async function sumOverShardPages<T>(
  readPage: (shard: number, startKey: Key | undefined) => Promise<IndexPage<T>>,
  handle: (items: T[]) => Promise<number>,
): Promise<number> {
  let total = 0;
  await pMap(
    WORKER_SHARDS,
    async (shard) => {
      let startKey: Key | undefined;
      do {
        const page = await readPage(shard, startKey);
        // Awaited first: `total += await …` would read `total` before the wait and lose the other shards' counts.
        const handled = await handle(page.items);
        total += handled;
        startKey = page.lastEvaluatedKey;
      } while (startKey);
    },
    { concurrency: SHARD_CONCURRENCY },
  );
  return total;
}

/**
 * The sweeper's recovery of overdue rows (D7): moves each row ahead with `move` (false when it changed meanwhile: it is
 * skipped), then queues the moved rows' messages in batches. Move, then send: a crash between leaves a row moved, for a
 * later sweep, and moved rows leave the overdue range, so later pages are unaffected. Returns the messages queued.
 */
export async function moveThenRequeue<T, M extends Parameters<DeliveryQueue['send']>[0][number]>(
  queue: DeliveryQueue,
  recoveries: readonly { row: T; message: M }[],
  move: (row: T) => Promise<boolean>,
): Promise<number> {
  const moved = await pMap(recoveries, async ({ row, message }) => ((await move(row)) ? [message] : []), {
    concurrency: SWEEP_MOVE_CONCURRENCY,
  });
  const messages = moved.flat();
  for (let index = 0; index < messages.length; index += QUEUE_BATCH_SIZE)
    await queue.send(messages.slice(index, index + QUEUE_BATCH_SIZE), 0);
  return messages.length;
}
