import type { StoredEvent } from '../../events/outbox.js';
import { WORKER_INDEX_SHARDS, keys, secondaryIndex } from '../../store/keys.js';
import { ConditionFailedError, type Store } from '../../store/store.js';
import type { Key } from '../../store/requests.js';
import { MAX_SWEEP_SPACING_MS, OUTBOX_PAGE_SIZE, WORKER_PAGE_SIZE } from './policy.js';
import {
  INDEX_PK,
  INDEX_SK,
  asEvent,
  dueSortKey,
  parseStoredOverdueDelivery,
  type StoredOverdueDelivery,
} from './stored.js';

/** The worker indexes' queries (DESIGN D6, D7, D14): overdue deliveries, the sweeper's move, the outbox. */

/**
 * One page (≤ {@link WORKER_PAGE_SIZE}) of shard `shard` of the pending-deliveries index: every delivery
 * (of any team) whose due time — next attempt, dead-letter timer or lease expiry — is before `beforeMs`.
 */
export async function queryOverdueDeliveries(
  store: Store,
  shard: number,
  beforeMs: number,
  startKey: Key | undefined,
): Promise<{ items: StoredOverdueDelivery[]; lastEvaluatedKey: Key | undefined }> {
  const result = await store.query({
    IndexName: secondaryIndex.name,
    KeyConditionExpression: `${INDEX_PK} = :index AND ${INDEX_SK} < :limit`,
    ExpressionAttributeValues: { ':index': keys.pendingDeliveriesIndex(shard), ':limit': dueSortKey(beforeMs, '') },
    ExclusiveStartKey: startKey,
    Limit: WORKER_PAGE_SIZE,
  });
  return { items: result.items.map(parseStoredOverdueDelivery), lastEvaluatedKey: result.lastEvaluatedKey };
}

/**
 * Where the sweeper moves an overdue row in the pending-deliveries index (epoch MILLISECONDS): `nowMs` +
 * `spacingMs` × 2^`requeues` (re-queues by the sweeper since the last lease), at most
 * {@link MAX_SWEEP_SPACING_MS} after `nowMs`. Pure.
 */
export function sweptDueMs(requeues: number, spacingMs: number, nowMs: number): number {
  return nowMs + Math.min(spacingMs * 2 ** requeues, MAX_SWEEP_SPACING_MS);
}

/**
 * Moves an overdue row forward in the pending index to `nowMs` + `spacingMs` × 2^requeues, capped at {@link MAX_SWEEP_SPACING_MS} (all ms; D7, D14),
 * guarded on the row as read; `due_at_ms` stays. Returns false when the row changed (no recovery message needed). Throws only on store errors.
 */
export async function moveOverdueDelivery(
  store: Store,
  delivery: StoredOverdueDelivery,
  spacingMs: number,
  nowMs: number,
): Promise<boolean> {
  const readSortKey = delivery[INDEX_SK];
  const toMs = sweptDueMs(delivery.sweeper_requeues ?? 0, spacingMs, nowMs);
  try {
    await store.update({
      Key: keys.delivery(delivery.team_id, delivery.id),
      UpdateExpression: `SET ${INDEX_SK} = :sort, sweeper_requeues = if_not_exists(sweeper_requeues, :zero) + :one`,
      ConditionExpression: `${INDEX_SK} = :read AND #status = :status AND attempts = :attempts`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':sort': dueSortKey(toMs, delivery.id),
        ':read': readSortKey,
        ':status': delivery.status,
        ':attempts': delivery.attempts,
        ':zero': 0,
        ':one': 1,
      },
    });
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}

/**
 * One page (≤ {@link OUTBOX_PAGE_SIZE}) of shard `shard` of the outbox index: events (of any team) not
 * fanned out yet and created at or before `beforeMs` (epoch MILLISECONDS), oldest first. The bound is a
 * key condition (`sort key < {@link keys.timeIndexSortKey}(beforeMs + 1, '')`), so younger events are
 * not read at all (DESIGN D6, D14). Throws only on store errors.
 */
export async function queryOutbox(
  store: Store,
  shard: number,
  beforeMs: number,
  startKey: Key | undefined,
): Promise<{ items: StoredEvent[]; lastEvaluatedKey: Key | undefined }> {
  const result = await store.query({
    IndexName: secondaryIndex.name,
    KeyConditionExpression: `${INDEX_PK} = :outbox AND ${INDEX_SK} < :bound`,
    ExpressionAttributeValues: {
      ':outbox': keys.outboxIndex(shard),
      ':bound': keys.timeIndexSortKey(beforeMs + 1, ''),
    },
    ExclusiveStartKey: startKey,
    Limit: OUTBOX_PAGE_SIZE,
  });
  return { items: result.items.map(asEvent), lastEvaluatedKey: result.lastEvaluatedKey };
}

/** Every shard number of the worker indexes, 0 … {@link WORKER_INDEX_SHARDS} − 1. */
export const WORKER_SHARDS: readonly number[] = Array.from({ length: WORKER_INDEX_SHARDS }, (_, shard) => shard);
