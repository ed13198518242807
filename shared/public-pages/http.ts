import { cookieDeletion, cookieSetting, type WebCookie } from '../web/cookies.js';
import { doubleSubmitToken, hasDoubleSubmitToken } from '../web/csrf.js';
import type { WebRequest } from '../web/request.js';
import { UNSUBSCRIBE_PATH } from '../domain/messages/paths.js';

/**
 * The public pages' HTTP names (DESIGN D26, D27, D32): the paths they live under, their cookies, and the CSRF tokens
 * of the forms shown without a session (the join pages, the signed-out portal's "E-mail me a sign-in link", the
 * unsubscribe page): the web layer's double-submit cookie, one per path.
 */

/** The path of the join pages. */
export const JOIN_PATH = '/join';
/** The path of the subscriber portal; its session cookie is scoped to it (DESIGN D27). */
export const PORTAL_PATH = '/portal';
/** The join pages' CSRF cookie (double submit). */
const JOIN_CSRF_COOKIE: WebCookie = { name: 'join_csrf', path: JOIN_PATH, sameSite: 'Strict' };
/** The signed-out portal's CSRF cookie (double submit) of its "E-mail me a sign-in link" form. */
const PORTAL_CSRF_COOKIE: WebCookie = { name: 'portal_csrf', path: PORTAL_PATH, sameSite: 'Strict' };
/** The unsubscribe page's CSRF cookie (double submit) of its confirmation button. */
const UNSUBSCRIBE_CSRF_COOKIE: WebCookie = { name: 'unsubscribe_csrf', path: UNSUBSCRIBE_PATH, sameSite: 'Strict' };
/** The portal's session cookie (DESIGN D27): `Path=/portal; HttpOnly; Secure; SameSite=Lax`. */
const PORTAL_SESSION_COOKIE: WebCookie = { name: 'portal_session', path: PORTAL_PATH, sameSite: 'Lax' };
/** The portal session cookie's name. */
export const PORTAL_COOKIE = PORTAL_SESSION_COOKIE.name;

/** One public request (the web layer's, with the client IP the per-IP limit counts). */
export type PublicRequest = WebRequest;

/** The join pages' CSRF token of this browser (its cookie), or a new one with the `Set-Cookie` that stores it. */
export function joinCsrfToken(request: PublicRequest): { token: string; cookies: string[] } {
  return doubleSubmitToken(request, JOIN_CSRF_COOKIE);
}

/** True when a join form carries the token of its CSRF cookie (double submit). */
export function hasJoinCsrf(request: PublicRequest): boolean {
  return hasDoubleSubmitToken(request, JOIN_CSRF_COOKIE);
}

/**
 * The signed-out portal's CSRF token of this browser (its cookie), or a new one with the `Set-Cookie` that stores it.
 */
export function portalCsrfToken(request: PublicRequest): { token: string; cookies: string[] } {
  return doubleSubmitToken(request, PORTAL_CSRF_COOKIE);
}

/** True when a signed-out portal form carries the token of its CSRF cookie (double submit). */
export function hasPortalCsrf(request: PublicRequest): boolean {
  return hasDoubleSubmitToken(request, PORTAL_CSRF_COOKIE);
}

/**
 * The unsubscribe page's CSRF token of this browser (its cookie), or a new one with the `Set-Cookie` that stores it.
 */
export function unsubscribeCsrfToken(request: PublicRequest): { token: string; cookies: string[] } {
  return doubleSubmitToken(request, UNSUBSCRIBE_CSRF_COOKIE);
}

/** True when the unsubscribe form carries the token of its CSRF cookie (double submit). */
export function hasUnsubscribeCsrf(request: PublicRequest): boolean {
  return hasDoubleSubmitToken(request, UNSUBSCRIBE_CSRF_COOKIE);
}

/** `Set-Cookie` of the portal session. */
export function portalCookie(value: string): string {
  return cookieSetting(PORTAL_SESSION_COOKIE, value);
}

/** `Set-Cookie` that deletes the portal session cookie. */
export function clearedPortalCookie(): string {
  return cookieDeletion(PORTAL_SESSION_COOKIE);
}

/** The origin of `url` (`https://checkout.stripe.com`), or null for a value that is not a URL. */
export function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}
