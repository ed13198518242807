import type { Clock } from '../clock.js';
import { ProblemError } from '../errors.js';
import { keys } from '../store/keys.js';
import { ConditionFailedError, type Store } from '../store/store.js';

/**
 * The rate-limit buckets (interface "Limits", DESIGN D4). `limit` requests per `windowSeconds`.
 * - `mcp`: tool server, per token, 120/min
 * - `mcp-anonymous`: tool server without a token, per client IP, 5/min (separate bucket)
 * - `rest`: REST API, per token, 600/min
 * - `rest-anonymous`: REST API requests without a valid token (missing, malformed, unknown or revoked),
 *   per client IP, 5/min — the tool server's anonymous rule applied to REST, so every response of an
 *   authenticated route carries `X-RateLimit-*` and token guessing is throttled. The two public
 *   documents (`/openapi.json`, `/webhook-events.json`) need no token and are not limited.
 */
export const RATE_LIMITS = {
  mcp: { limit: 120, windowSeconds: 60 },
  'mcp-anonymous': { limit: 5, windowSeconds: 60 },
  rest: { limit: 600, windowSeconds: 60 },
  'rest-anonymous': { limit: 5, windowSeconds: 60 },
} as const;

/** A bucket name of {@link RATE_LIMITS}. */
export type RateLimitBucket = keyof typeof RATE_LIMITS;

/** What a request learns about its bucket; becomes `X-RateLimit-*` headers. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the current window ends. */
  resetSeconds: number;
}

/** The `X-RateLimit-Limit` / `X-RateLimit-Remaining` headers every limited response carries. */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return { 'X-RateLimit-Limit': String(state.limit), 'X-RateLimit-Remaining': String(state.remaining) };
}

/**
 * Admits one request into `bucket` for `subject` (a token id or a client IP) with a fixed window
 * counter in DynamoDB: one conditional `ADD` per request, so admission never exceeds the limit, whatever
 * the concurrency or the number of Lambda instances (DESIGN D4). One DynamoDB request.
 * Throws RATE_LIMITED (429) with `Retry-After` (seconds, ≥ 1) and the `X-RateLimit-*` headers when full.
 */
export async function consumeRateLimit(store: Store, clock: Clock, bucket: RateLimitBucket, subject: string): Promise<RateLimitState> {
  const { limit, windowSeconds } = RATE_LIMITS[bucket];
  const nowSeconds = clock.nowMs() / 1000;
  const windowStart = Math.floor(nowSeconds / windowSeconds) * windowSeconds;
  const resetSeconds = Math.max(1, Math.ceil(windowStart + windowSeconds - nowSeconds));
  try {
    const attributes = await store.update({
        Key: keys.rateCounter(bucket, subject, windowStart),
        UpdateExpression: 'ADD request_count :one SET expires_at = :expires',
        ConditionExpression: 'attribute_not_exists(request_count) OR request_count < :limit',
        ExpressionAttributeValues: { ':one': 1, ':limit': limit, ':expires': windowStart + windowSeconds * 2 },
        ReturnValues: 'UPDATED_NEW',
    });
    const count = Number(attributes?.request_count ?? limit);
    return { limit, remaining: Math.max(0, limit - count), resetSeconds };
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    throw new ProblemError('RATE_LIMITED', `Rate limit of ${limit} requests per ${windowSeconds} seconds reached for bucket \`${bucket}\`.`, {
      headers: { 'Retry-After': String(resetSeconds), ...rateLimitHeaders({ limit, remaining: 0, resetSeconds }) },
    });
  }
}
