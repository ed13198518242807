import type { Clock } from '../clock.js';
import { ProblemError } from '../errors.js';
import { keys } from '../store/keys.js';
import { rateLimitCounters } from '../store/rate-limit-counters.js';
import type { Store } from '../store/store.js';

/**
 * Rate-limit buckets (interface "Limits", D4): `limit` requests per `windowSeconds`, per token or (anonymous,
 * `public-pages` D26/D27, `oauth` D30) per client IP. `rest-anonymous` covers requests without a valid token and public
 * writes; `/openapi.json` and `/webhook-events.json` are not limited.
 */
export const RATE_LIMITS = {
  mcp: { limit: 120, windowSeconds: 60 },
  'mcp-anonymous': { limit: 5, windowSeconds: 60 },
  rest: { limit: 600, windowSeconds: 60 },
  'rest-anonymous': { limit: 5, windowSeconds: 60 },
  'public-pages': { limit: 60, windowSeconds: 60 },
  oauth: { limit: 30, windowSeconds: 60 },
  /** "E-mail me a sign-in link" (DESIGN D32), per project and SHA-256 of the address: past it nothing is sent. */
  'sign-in-link-address': { limit: 3, windowSeconds: 15 * 60 },
  /**
   * Free joins of one project (DESIGN D26), per project on top of the per-IP `public-pages` limit: each join makes an
   * unconfirmed subscription and sends an e-mail, so a bot's burst is bounded whatever IPs it uses.
   */
  'free-joins': { limit: 60, windowSeconds: 3600 },
  /** A project's bot DMs on Telegram (30 a second overall, DESIGN D32), per project. */
  'telegram-messages': { limit: 30, windowSeconds: 1 },
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

/** The counter item of one bucket, subject and window (what {@link consumeRateLimit} updates). */
export interface RateWindow {
  /** Key of the counter item (`keys.rateCounter`). */
  key: { pk: string; sk: string };
  limit: number;
  windowSeconds: number;
  /** Epoch seconds at which the window began. */
  windowStart: number;
  /** Seconds until the window ends (≥ 1): the `Retry-After` of a refusal. */
  resetSeconds: number;
}

/**
 * The current fixed window of `bucket` for `subject` (a token id or a client IP) at the clock's time:
 * the counter's key, the limit and the seconds left. Pure; reads nothing.
 */
export function rateWindow(clock: Clock, bucket: RateLimitBucket, subject: string): RateWindow {
  const { limit, windowSeconds } = RATE_LIMITS[bucket];
  const nowSeconds = clock.nowMs() / 1000;
  const windowStart = Math.floor(nowSeconds / windowSeconds) * windowSeconds;
  const resetSeconds = Math.max(1, Math.ceil(windowStart + windowSeconds - nowSeconds));
  return { key: keys.rateCounter(bucket, subject, windowStart), limit, windowSeconds, windowStart, resetSeconds };
}

/** The RATE_LIMITED (429) problem of a full window, with `Retry-After` (seconds) and `X-RateLimit-*` (DESIGN D4). */
export function rateLimitedError(bucket: RateLimitBucket, window: RateWindow): ProblemError {
  return new ProblemError(
    'RATE_LIMITED',
    `Rate limit of ${window.limit} requests per ${window.windowSeconds} seconds reached for bucket \`${bucket}\`.`,
    {
      headers: {
        'Retry-After': String(window.resetSeconds),
        ...rateLimitHeaders({ limit: window.limit, remaining: 0, resetSeconds: window.resetSeconds }),
      },
    },
  );
}

/**
 * True when a counter item read for `window` (e.g. in a BatchGetItem, strongly consistent) shows the
 * window already full, so the next {@link consumeRateLimit} would refuse. `item` undefined: nothing
 * counted yet in this window.
 */
export function isWindowFull(item: Record<string, unknown> | undefined, window: RateWindow): boolean {
  return Number(item?.request_count ?? 0) >= window.limit;
}

/**
 * Admits `units` requests (a JSON-RPC batch counts each message, D4) for `subject` (token id or IP) with one
 * conditional `ADD`: all or none, never over the limit. Throws RATE_LIMITED (429) with `Retry-After` (seconds, ≥ 1) and
 * `X-RateLimit-*`.
 */
export async function consumeRateLimit(
  store: Store,
  clock: Clock,
  bucket: RateLimitBucket,
  subject: string,
  units = 1,
): Promise<RateLimitState> {
  const window = rateWindow(clock, bucket, subject);
  const { limit, resetSeconds } = window;
  if (!Number.isInteger(units) || units < 1) throw new Error(`units must be a positive integer, got ${units}`);
  if (units > limit) throw rateLimitedError(bucket, window);
  const count = await rateLimitCounters.consume(store, window, units);
  if (count === null) throw rateLimitedError(bucket, window);
  return { limit, remaining: Math.max(0, limit - count), resetSeconds };
}
