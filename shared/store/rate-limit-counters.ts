import type { RateWindow } from '../limits/rate-limit.js';
import { ConditionFailedError, type Store } from './store.js';

/**
 * The rate-limit counters (DESIGN D4): one item per bucket, subject and fixed window (`keys.rateCounter`), counting
 * the requests admitted in it, removed by TTL once the window is past. Its hot path keeps a hand-written expression.
 */
export const rateLimitCounters = {
  /**
   * Adds `units` to the counter of `window` with one conditional UpdateItem (all or none, never over `window.limit`;
   * TTL two windows after its start): resolves the count after it, or null when the window has no room for them.
   */
  consume(store: Store, window: RateWindow, units: number): Promise<number | null> {
    return store
      .update({
        Key: window.key,
        UpdateExpression: 'ADD request_count :units SET expires_at = :expires',
        ConditionExpression: 'attribute_not_exists(request_count) OR request_count <= :most',
        ExpressionAttributeValues: {
          ':units': units,
          ':most': window.limit - units,
          ':expires': window.windowStart + window.windowSeconds * 2,
        },
        ReturnValues: 'UPDATED_NEW',
      })
      .then(
        (attributes) => Number(attributes?.request_count ?? window.limit),
        (error: unknown) => {
          if (!(error instanceof ConditionFailedError)) throw error;
          return null;
        },
      );
  },
};
