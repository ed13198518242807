import { WORKER_INDEX_SHARDS } from '../../store/keys.js';
import { MAX_SWEEP_SPACING_MS } from './policy.js';

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
