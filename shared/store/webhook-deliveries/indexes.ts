import { keys, secondaryIndex, workerIndexShard } from '../keys.js';

/**
 * Where delivery items sit in the sparse secondary index (DESIGN D7, D14): its attribute names and the
 * pending-deliveries keys.
 */

/** Attribute names of the sparse index (`gsi1pk`, `gsi1sk`), written into the delivery adapters' expressions. */
export const INDEX_PK = secondaryIndex.partitionKey;
/** The sparse index's sort key (`gsi1sk`): a pending delivery's {@link dueSortKey}, a skipped one's skip time. */
export const INDEX_SK = secondaryIndex.sortKey;

/** The pending-deliveries index partition (one of the worker-index shards) of a delivery. */
export function pendingIndexOf(deliveryId: string): string {
  return keys.pendingDeliveriesIndex(workerIndexShard(deliveryId));
}

/**
 * Sort key in the pending-deliveries index: the due time (epoch MILLISECONDS) zero-padded to 15 digits,
 * then the id ({@link keys.timeIndexSortKey}, the one definition of the shape; DESIGN D14).
 */
export function dueSortKey(dueAtMs: number, deliveryId: string): string {
  return keys.timeIndexSortKey(dueAtMs, deliveryId);
}
