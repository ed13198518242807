/**
 * The delivery pipeline's rules (interface "Delivery rules", "Limits"; DESIGN D7) as constants and pure
 * functions: the retry timeline, the dead-letter timer, leases, retention and batch sizes.
 */
import { ttlAttribute } from '../../store/ttl.js';

/** Up to 8 attempts per delivery (interface "Delivery rules" 4, DESIGN D7). */
export const MAX_ATTEMPTS = 8;

/**
 * Wait before attempt N, in SECONDS, indexed by N (interface "Delivery rules" 4, DESIGN D7):
 * attempt 1 at once, then 10 s, 30 s, 2 min, 10 min, 1 h, 6 h, 24 h. Indexes 0 and 1 are 0.
 */
export const RETRY_WAIT_SECONDS: readonly number[] = [0, 0, 10, 30, 120, 600, 3_600, 21_600, 86_400];

/** After the 8th failure the delivery waits this long before it is dead-lettered (SECONDS; DESIGN D7: 72 h). */
export const DEAD_LETTER_WAIT_SECONDS = 72 * 3_600;

/**
 * Waits up to this many SECONDS go through SQS `DelaySeconds` (the SQS maximum, 15 minutes); longer
 * ones through an EventBridge Scheduler one-time schedule (DESIGN D7).
 */
export const MAX_QUEUE_DELAY_SECONDS = 900;

/**
 * How long an in-flight attempt holds its lease (MILLISECONDS, real time): the 10 s budget plus margin (DESIGN D7, D9).
 */
const LEASE_MS = 60_000;

/**
 * Timers may fire a moment early (the local clock, SQS granularity): a due time this many MILLISECONDS ahead counts as
 * due.
 */
export const TIMER_EARLY_TOLERANCE_MS = 1_000;

/** Attempt records kept per delivery (the newest). */
export const MAX_ATTEMPT_LOG = 40;

/**
 * Deliveries, their attempt logs and dead-letter copies are kept this long after creation or re-queueing (SECONDS; TTL
 * housekeeping).
 */
const DELIVERY_RETENTION_SECONDS = 30 * 24 * 3_600;

/** Messages per SQS `SendMessageBatch` (the SQS maximum). */
export const QUEUE_BATCH_SIZE = 10;

/** Concurrent single-delivery re-queues of a replay group whose group transaction was cancelled. */
export const REPLAY_CONCURRENCY = 50;

/**
 * Concurrent group transactions (up to 50 dead or 100 skipped deliveries each) during one batch of a replay job (DESIGN
 * D25).
 */
export const REPLAY_GROUP_CONCURRENCY = 4;

/** Deliveries read and re-queued per batch (one queue message) of a replay job (DESIGN D25). */
export const REPLAY_BATCH_SIZE = 500;

/** Items read per page of the dead-letter table (replay-dead) and of the pending-deliveries index (sweeper). */
export const WORKER_PAGE_SIZE = 500;

/** Outbox events read per page by the relay. */
export const OUTBOX_PAGE_SIZE = 100;

/** Worker-index shards read at the same time by the sweeper and the outbox relay. */
export const SHARD_CONCURRENCY = 4;

/** The sweeper's default grace period (MILLISECONDS): only timers late by more than this are re-queued. */
export const SWEEP_GRACE_MS = 60_000;

/** How often the sweeper runs on AWS (SECONDS; the EventBridge rule's rate, `lib/webhooks.ts`). */
export const SWEEP_INTERVAL_SECONDS = 300;

/**
 * The longest a row re-queued by the sweeper waits before the sweeper looks at it again (MILLISECONDS; the doubling
 * spacing's cap).
 */
export const MAX_SWEEP_SPACING_MS = 3_600_000;

/**
 * Concurrent index moves (`workerIndexes.moveOverdue`, one conditional UpdateItem each)
 * per page of a shard the sweeper re-queues; with {@link SHARD_CONCURRENCY} shards at once, at most
 * 4 × 16 = 64 writes in flight (DESIGN D7).
 */
export const SWEEP_MOVE_CONCURRENCY = 16;

/**
 * The longest wait of the retry timeline, in SECONDS: a receiver's `Retry-After` never pushes an attempt further
 * (DESIGN D7, D29).
 */
export const MAX_RETRY_WAIT_SECONDS = Math.max(...RETRY_WAIT_SECONDS);

/**
 * The wait before attempt `attempt` (2–8), in SECONDS, per {@link RETRY_WAIT_SECONDS}.
 * Throws RangeError outside 1–`MAX_ATTEMPTS` (a programming error).
 */
export function waitBeforeAttemptSeconds(attempt: number): number {
  if (!Number.isInteger(attempt) || attempt < 1 || attempt > MAX_ATTEMPTS)
    throw new RangeError(`No attempt ${attempt}; attempts are 1 to ${MAX_ATTEMPTS}.`);
  return RETRY_WAIT_SECONDS[attempt];
}

/** A real wait in SECONDS shortened by the local TIME_SCALE (`timeScale`, 1 on AWS), in MILLISECONDS. */
export function scaledWaitMs(seconds: number, timeScale: number): number {
  return (seconds * 1000) / timeScale;
}

/** The TTL (`expires_at`, epoch SECONDS) of a delivery or dead-letter copy written at `nowMs` (epoch ms). */
export function deliveryExpiresAt(nowMs: number): number {
  return ttlAttribute(nowMs, DELIVERY_RETENTION_SECONDS);
}

/**
 * The terms of attempt leases taken at `nowMs` (epoch ms): held {@link LEASE_MS}, and a pending delivery due up to
 * {@link TIMER_EARLY_TOLERANCE_MS} later counts as due (DESIGN D7).
 */
export function leaseTerms(nowMs: number): { nowMs: number; leaseUntilMs: number; dueLimitMs: number } {
  return { nowMs, leaseUntilMs: nowMs + LEASE_MS, dueLimitMs: nowMs + TIMER_EARLY_TOLERANCE_MS };
}
