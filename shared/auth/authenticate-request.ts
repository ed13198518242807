import { isoTime, type Clock } from '../clock.js';
import { TOKEN_LAST_USED_PRECISION_MS } from '../domain/tokens/schema.js';
import { ProblemError } from '../errors.js';
import {
  consumeRateLimit,
  isWindowFull,
  rateLimitedError,
  rateWindow,
  type RateLimitBucket,
  type RateLimitState,
} from '../limits/rate-limit.js';
import { logger } from '../logger.js';
import type { Store } from '../store/store.js';
import { tokenCredentials } from '../store/tokens/authentication.js';
import type { Item, Key } from '../store/requests.js';
import { checkToken, parseBearer, secretMatchesHash, type Principal, type SecretCheck } from './principal.js';

/** What {@link authenticateRequest} needs to know about the request. */
export interface AuthenticationInput {
  /** The `Authorization` header as sent (cookies are never consulted). */
  authorization: string | undefined;
  /** The per-IP bucket of requests without a valid token on this surface (DESIGN D4). */
  bucket: Extract<RateLimitBucket, 'rest-anonymous' | 'mcp-anonymous'>;
  /** The client IP (API Gateway's `sourceIp`, the local server's socket address). */
  clientIp: string;
  /**
   * Further items of the token's partition to read in the same BatchGetItem (the tool server's
   * session), given the token id the header names. They come back in {@link AuthenticationSuccess.items}.
   */
  alsoRead?: (tokenId: string) => Key[];
  /**
   * The secret check (default {@link secretMatchesHash}); tests pass a spy to prove that an unknown id and a
   * wrong secret do the same work.
   */
  secretCheck?: SecretCheck;
}

/** The token is valid: the principal, and the items asked for with `alsoRead`. */
interface AuthenticationSuccess {
  ok: true;
  principal: Principal;
  /** The `alsoRead` items that exist (never the token or the counter). */
  items: Item[];
}

/** The request is refused: 401 AUTHENTICATION_REQUIRED or 429 RATE_LIMITED. */
interface AuthenticationFailure {
  ok: false;
  /** The problem to answer with (its headers carry `WWW-Authenticate`, or `Retry-After` and `X-RateLimit-*`). */
  error: ProblemError;
  /** The per-IP bucket after this request was counted in it (for `X-RateLimit-*` on a 401); null on a 429. */
  rate: RateLimitState | null;
  /**
   * The token the header named when its secret matched but it may not be used (revoked, or its team
   * deleted), so the refusal can be written to that team's activity log (DESIGN D5). Null otherwise: for
   * an unknown id and for a wrong secret alike (neither proves who is calling, and treating them alike
   * keeps the work and the answer the same, so nothing tells whether a token id exists),
   * and always when the IP's bucket was already full (nothing is verified then).
   */
  knownToken: { id: string; teamId: string } | null;
}

/** Either outcome of {@link authenticateRequest}. */
export type AuthenticationOutcome = AuthenticationSuccess | AuthenticationFailure;

/**
 * Authenticates a REST or tool-server request (interface "Limits", DESIGN D2, D4). The per-IP bucket (5/min) counts
 * only failed authentications (one conditional ADD, so concurrent failures never exceed 5); a valid token is served
 * whatever it says (shared IPs). Failures: 401 (with `X-RateLimit-*`) or 429 once full. Never throws a ProblemError.
 */
export async function authenticateRequest(
  store: Store,
  clock: Clock,
  input: AuthenticationInput,
): Promise<AuthenticationOutcome> {
  const countFailure = async (
    error: ProblemError,
    knownToken: AuthenticationFailure['knownToken'],
  ): Promise<AuthenticationFailure> => {
    try {
      const rate = await consumeRateLimit(store, clock, input.bucket, input.clientIp);
      return { ok: false, error, rate, knownToken };
    } catch (limited) {
      if (limited instanceof ProblemError && limited.code === 'RATE_LIMITED')
        return { ok: false, error: limited, rate: null, knownToken: null };
      throw limited;
    }
  };

  let bearer: { tokenId: string; secret: string };
  try {
    bearer = parseBearer(input.authorization);
  } catch (error) {
    if (error instanceof ProblemError) return countFailure(error, null);
    throw error;
  }

  // ONE strongly consistent BatchGetItem: the token, `alsoRead` and the IP's counter. Requests: 1 for a valid token (+
  // the hourly stamp), 1 for a bad header, 2 for a failed token.
  const window = rateWindow(clock, input.bucket, input.clientIp);
  const extra = input.alsoRead?.(bearer.tokenId) ?? [];
  const {
    token: tokenItem,
    alongside: [windowItem, ...extraItems],
  } = await tokenCredentials.readWith(store, bearer.tokenId, [window.key, ...extra]);
  const checked = checkToken(tokenItem, bearer.secret, input.secretCheck ?? secretMatchesHash, clock.nowMs());
  if (checked.ok) {
    await recordTokenUse(store, clock, checked.principal.tokenId, checked.lastUsedAt);
    return {
      ok: true,
      principal: checked.principal,
      items: extraItems.filter((item): item is Item => item !== undefined),
    };
  }
  // A full window refuses every failure alike (unknown id, wrong secret, revoked) without counting it.
  if (isWindowFull(windowItem, window))
    return { ok: false, error: rateLimitedError(input.bucket, window), rate: null, knownToken: null };
  return countFailure(checked.error, checked.holder);
}

/** Most token ids {@link recentlyStamped} holds before it starts again (bounded memory in a long-lived process). */
const RECENTLY_STAMPED_LIMIT = 10_000;
/** Token id → when (epoch milliseconds, the runtime's clock) this process last sent its `last_used_at` stamp. */
const recentlyStamped = new Map<string, number>();

/**
 * Stamps `last_used_at` (ISO) on a token whose stamp is missing or older than {@link TOKEN_LAST_USED_PRECISION_MS} (1
 * hour): one conditional UpdateItem, once per process per hour ({@link recentlyStamped}). Never fails the call: a lost
 * race is ignored, a store failure only logged.
 */
async function recordTokenUse(
  store: Store,
  clock: Clock,
  tokenId: string,
  lastUsedAt: string | undefined,
): Promise<void> {
  const nowMs = clock.nowMs();
  const threshold = isoTime(nowMs - TOKEN_LAST_USED_PRECISION_MS);
  if (lastUsedAt && lastUsedAt > threshold) return;
  const stampedAtMs = recentlyStamped.get(tokenId);
  if (stampedAtMs !== undefined && stampedAtMs > nowMs - TOKEN_LAST_USED_PRECISION_MS && stampedAtMs <= nowMs) return;
  if (recentlyStamped.size >= RECENTLY_STAMPED_LIMIT) recentlyStamped.clear();
  recentlyStamped.set(tokenId, nowMs);
  try {
    await tokenCredentials.stampLastUsed(store, tokenId, isoTime(nowMs), threshold);
  } catch (error) {
    logger.warn('token last_used_at not recorded', { token_id: tokenId, error: error as Error });
  }
}
