import pRetry from 'p-retry';
import { ConditionFailedError, TransactionCanceledError } from './store.js';
import type { Item } from './requests.js';

/** Attempts of an optimistic change (read → decide → one transaction) before it gives up (DESIGN D14). */
export const MAX_ATTEMPTS = 5;

/**
 * True when a write lost a race: a failed condition, or a transaction DynamoDB cancelled because another
 * one was changing the same items. Nothing was written, so reading again and deciding again is safe.
 */
export function isLostRace(error: unknown): boolean {
  return error instanceof ConditionFailedError || isTransactionConflict(error);
}

/** True for a transaction DynamoDB cancelled because a concurrent one held the same items (`TransactionConflict`). */
export function isTransactionConflict(error: unknown): boolean {
  return error instanceof TransactionCanceledError && error.reasons.includes('TransactionConflict');
}

/** The optimistic-concurrency condition on a stored item's `revision` (an item without one must still have none). */
export function revisionCondition(item: Item): { expression: string; values: Record<string, unknown> } {
  return item.revision === undefined
    ? { expression: 'attribute_not_exists(revision)', values: {} }
    : { expression: 'revision = :read_revision', values: { ':read_revision': item.revision } };
}

/** A random wait of 0 to 25 × `attempt` milliseconds: the default back-off after lost attempt `attempt` (1-based). */
function jitteredWaitMs(_error: unknown, attempt: number): number {
  return Math.random() * 25 * attempt;
}

/** How {@link retryOnLostRace} retries; every field has a default. */
export interface LostRaceRetry {
  /** Attempts in all (default {@link MAX_ATTEMPTS}). */
  attempts?: number;
  /** Which failures are lost races worth another attempt (default {@link isLostRace}). */
  retryable?: (error: unknown) => boolean;
  /** Milliseconds to wait after lost attempt `attempt` before the next (default: jittered, 0–25 ms × attempt). */
  waitMs?: (error: unknown, attempt: number) => number;
  /** What the last lost race is answered with (default the error itself), e.g. CONFLICT naming the object. */
  exhausted?: (error: unknown) => Error;
}

/**
 * Runs `change` — a read, a decision and one conditional write — again while it loses a race, on `p-retry`:
 * up to `attempts` times, waiting `waitMs` between attempts; the last lost race is thrown as `exhausted(error)`.
 * Errors that are not `retryable` pass through at once. `change` receives the attempt number (1-based).
 */
export async function retryOnLostRace<T>(
  change: (attempt: number) => Promise<T>,
  options: LostRaceRetry = {},
): Promise<T> {
  const retryable = options.retryable ?? isLostRace;
  const waitMs = options.waitMs ?? jitteredWaitMs;
  try {
    return await pRetry(change, {
      retries: (options.attempts ?? MAX_ATTEMPTS) - 1,
      minTimeout: 0,
      shouldRetry: ({ error }) => retryable(error),
      onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
        const wait = retriesLeft > 0 && retryable(error) ? waitMs(error, attemptNumber) : 0;
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      },
    });
  } catch (error) {
    if (options.exhausted && retryable(error)) throw options.exhausted(error);
    throw error;
  }
}
