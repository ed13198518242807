import pRetry from 'p-retry';
import { DEFAULT_PROVIDER_RETRY, type IntegrationRuntime, type IntegrationSettings } from './integrations.js';

/**
 * The one retry policy of outbound provider and platform calls (DESIGN D22: "outbound calls to providers
 * run outside the request's DynamoDB transaction, with retries"), on `p-retry`: `retries` more attempts
 * after the first, waiting `minTimeoutMs` MILLISECONDS before the first retry and doubling after each
 * (jittered unless the wait is 0, as tests set it). The policy itself is `IntegrationSettings.retry`.
 */

/** Retries after the first attempt, and the first wait in milliseconds (doubling); `IntegrationSettings.retry`. */
export type RetryPolicy = IntegrationSettings['retry'];

/**
 * The retry policy of a runtime: its integration settings' `retry`, else {@link DEFAULT_PROVIDER_RETRY} (what
 * the environment's settings hold) — without building the environment's settings, which need the
 * credentials key (a manual plan sync must not require it).
 */
export function retryPolicyOf(runtime: IntegrationRuntime): RetryPolicy {
  return runtime.integrations?.retry ?? DEFAULT_PROVIDER_RETRY;
}

/** The `p-retry` options of `policy` (exponential back-off, factor 2; no jitter when the wait is 0). */
export function retryOptions(policy: RetryPolicy): {
  retries: number;
  minTimeout: number;
  factor: number;
  randomize: boolean;
} {
  return { retries: policy.retries, minTimeout: policy.minTimeoutMs, factor: 2, randomize: policy.minTimeoutMs > 0 };
}

/** Carries a retryable outcome through `p-retry` (which retries on thrown errors only). */
class RetryableOutcome<T> extends Error {
  constructor(readonly outcome: T) {
    super('retryable outcome');
  }
}

/**
 * Runs `attempt` and runs it again, per `policy`, while `retryable(outcome)` is true; returns the first
 * outcome that is not retryable, or the last one when the retries are spent. For calls whose failures are
 * results rather than exceptions (the payment-provider port's `{ ok: false, retryable }`). Exceptions
 * `attempt` throws are not retried: they propagate at once (map them to an outcome inside `attempt`).
 */
export async function retryWhile<T>(
  policy: RetryPolicy,
  attempt: () => Promise<T>,
  retryable: (outcome: T) => boolean,
): Promise<T> {
  try {
    return await pRetry(
      async () => {
        const outcome = await attempt();
        if (retryable(outcome)) throw new RetryableOutcome(outcome);
        return outcome;
      },
      { ...retryOptions(policy), shouldRetry: ({ error }) => error instanceof RetryableOutcome },
    );
  } catch (error) {
    if (error instanceof RetryableOutcome) return error.outcome as T;
    throw error;
  }
}
