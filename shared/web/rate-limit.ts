import type { MiddlewareHandler } from 'hono';
import { consumeRateLimit, rateLimitHeaders, type RateLimitBucket } from '../limits/rate-limit.js';
import type { WebEnv } from './app.js';

/**
 * The one per-IP limiter of the HTML surfaces (DESIGN D4, D26, D30, D35): every request spends one unit of
 * `bucket` for its client IP in the DynamoDB rate counter (`shared/limits/rate-limit.ts`) before its route runs.
 * Past the limit it throws RATE_LIMITED (429, `Retry-After`), which the surface's error handler renders.
 * `headers: true` adds `X-RateLimit-Limit` / `X-RateLimit-Remaining` to the answer.
 */
export function limitPerClientIp(
  bucket: RateLimitBucket,
  options: { headers?: boolean } = {},
): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    const { store, clock } = c.get('runtime');
    const state = await consumeRateLimit(store, clock, bucket, c.get('clientIp'));
    await next();
    if (options.headers)
      for (const [name, value] of Object.entries(rateLimitHeaders(state))) c.res.headers.set(name, value);
  };
}
