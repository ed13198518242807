import {
  doubleSubmitToken,
  hasDoubleSubmitToken,
  type DashboardRequest,
  type DoubleSubmitCookie,
} from '../dashboard/http.js';
import type { ApiGatewayResult } from '../http/api-gateway.js';

/**
 * The public pages' HTTP rules (DESIGN D26, D27): the paths they live under, the security headers of every
 * answer, and the CSRF token of the join pages (which have no session): a double-submit cookie — a random
 * token in an `HttpOnly; Secure; SameSite=Strict` cookie scoped to `/join`, repeated in every form.
 */

/** The path of the join pages. */
export const JOIN_PATH = '/join';
/** The path of the subscriber portal; its session cookie is scoped to it (DESIGN D27). */
export const PORTAL_PATH = '/portal';
/** The join pages' CSRF cookie. */
const JOIN_CSRF_COOKIE: DoubleSubmitCookie = { name: 'join_csrf', path: JOIN_PATH };
/** The portal's session cookie. */
export const PORTAL_COOKIE = 'portal_session';
/** Where Stripe hosts its Checkout pages: a join form's 303 leads there, so `form-action` allows it. */
const STRIPE_CHECKOUT_ORIGIN = 'https://checkout.stripe.com';

/** One public request: the dashboard's decoded request and the client IP (API Gateway's `sourceIp`). */
export interface PublicRequest extends DashboardRequest {
  ip: string;
}

/**
 * Headers of every public answer: no caching, no framing, no referrer (links carry tokens), scripts and
 * styles only from the service itself; forms may post to the service and lead to `formOrigins` (the
 * payment provider's hosted pages a join or "Update payment method" redirects to).
 */
function securityHeaders(formOrigins: readonly string[]): Record<string, string> {
  return {
    'Cache-Control': 'no-store',
    'X-Frame-Options': 'DENY',
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
    'Content-Security-Policy': `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self' ${[STRIPE_CHECKOUT_ORIGIN, ...formOrigins].join(' ')}; base-uri 'none'`,
  };
}

/** `result` (made with the dashboard's `htmlResult` or `redirectResult`) with the public pages' security headers in place of the dashboard's. */
export function publicResult(result: ApiGatewayResult, formOrigins: readonly string[] = []): ApiGatewayResult {
  const headers: Record<string, string> = { ...result.headers, ...securityHeaders(formOrigins) };
  return { ...result, headers };
}

/** The join pages' CSRF token of this browser (its cookie), or a new one with the `Set-Cookie` that stores it. */
export function joinCsrfToken(request: PublicRequest): { token: string; cookies: string[] } {
  return doubleSubmitToken(request, JOIN_CSRF_COOKIE);
}

/** True when a join form carries the token of its CSRF cookie (double submit). */
export function hasJoinCsrf(request: PublicRequest): boolean {
  return hasDoubleSubmitToken(request, JOIN_CSRF_COOKIE);
}

/** `Set-Cookie` of the portal session (DESIGN D27): `Path=/portal; HttpOnly; Secure; SameSite=Lax`. */
export function portalCookie(value: string): string {
  return `${PORTAL_COOKIE}=${value}; Path=${PORTAL_PATH}; HttpOnly; Secure; SameSite=Lax`;
}

/** `Set-Cookie` that deletes the portal session cookie. */
export function clearedPortalCookie(): string {
  return `${PORTAL_COOKIE}=; Path=${PORTAL_PATH}; HttpOnly; Secure; SameSite=Lax; Max-Age=0`;
}

/** The origin of `url` (`https://checkout.stripe.com`), or null for a value that is not a URL. */
export function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}
