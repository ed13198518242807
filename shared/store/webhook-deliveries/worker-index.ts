import type { StoredEvent } from '../../events/outbox.js';
import { parseStoredEvent } from '../../domain/events/record.js';
import { parseStoredOverdueDelivery, type StoredOverdueDelivery } from '../../domain/webhook-deliveries/stored.js';
import { INDEX_PK, INDEX_SK, dueSortKey } from './indexes.js';
import { keys, secondaryIndex } from '../keys.js';
import type { Store } from '../store.js';
import type { Key } from '../requests.js';
import { conditionally } from '../expressions.js';

/** The pipeline's worker indexes (DESIGN D6, D7, D14): overdue deliveries, the sweeper's move, the outbox. */

/** One page of a worker index: the parsed items and the key to read on from. */
export interface IndexPage<T> {
  items: T[];
  lastEvaluatedKey: Key | undefined;
}

/**
 * The worker indexes' adapter, across teams by shard: a page of overdue deliveries, the sweeper's move of one, and a
 * page of the outbox (events not fanned out yet); every method takes the Store port.
 */
export const workerIndexes = {
  /**
   * One page (≤ `limit`) of shard `shard` of the pending-deliveries index: every delivery (of any team) whose due
   * time — next attempt, dead-letter timer or lease expiry — is before `beforeMs` (epoch ms).
   */
  async pageOverdue(
    store: Store,
    shard: number,
    beforeMs: number,
    startKey: Key | undefined,
    limit: number,
  ): Promise<IndexPage<StoredOverdueDelivery>> {
    const result = await store.query({
      IndexName: secondaryIndex.name,
      KeyConditionExpression: `${INDEX_PK} = :index AND ${INDEX_SK} < :limit`,
      ExpressionAttributeValues: { ':index': keys.pendingDeliveriesIndex(shard), ':limit': dueSortKey(beforeMs, '') },
      ExclusiveStartKey: startKey,
      Limit: limit,
    });
    return { items: result.items.map(parseStoredOverdueDelivery), lastEvaluatedKey: result.lastEvaluatedKey };
  },

  /**
   * Moves an overdue row to `toMs` (epoch ms) in the pending index and counts the sweeper's re-queue, guarded on
   * the row as read; `due_at_ms` stays. Returns false when the row changed meanwhile.
   */
  moveOverdue(store: Store, delivery: StoredOverdueDelivery, toMs: number): Promise<boolean> {
    return conditionally(
      store.update({
        Key: keys.delivery(delivery.team_id, delivery.id),
        UpdateExpression: `SET ${INDEX_SK} = :sort, sweeper_requeues = if_not_exists(sweeper_requeues, :zero) + :one`,
        ConditionExpression: `${INDEX_SK} = :read AND #status = :status AND attempts = :attempts`,
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':sort': dueSortKey(toMs, delivery.id),
          ':read': delivery[INDEX_SK],
          ':status': delivery.status,
          ':attempts': delivery.attempts,
          ':zero': 0,
          ':one': 1,
        },
      }),
    );
  },

  /**
   * One page (≤ `limit`) of shard `shard` of the outbox index: events (of any team) not fanned out yet and created
   * at or before `beforeMs` (epoch ms), oldest first. The bound is a key condition, so younger events are not read.
   */
  async pageOutbox(
    store: Store,
    shard: number,
    beforeMs: number,
    startKey: Key | undefined,
    limit: number,
  ): Promise<IndexPage<StoredEvent>> {
    const result = await store.query({
      IndexName: secondaryIndex.name,
      KeyConditionExpression: `${INDEX_PK} = :outbox AND ${INDEX_SK} < :bound`,
      ExpressionAttributeValues: {
        ':outbox': keys.outboxIndex(shard),
        ':bound': keys.timeIndexSortKey(beforeMs + 1, ''),
      },
      ExclusiveStartKey: startKey,
      Limit: limit,
    });
    return { items: result.items.map(parseStoredEvent), lastEvaluatedKey: result.lastEvaluatedKey };
  },
};
