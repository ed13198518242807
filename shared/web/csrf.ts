import { randomBytes } from 'node:crypto';
import { equalInConstantTime } from '../constant-time.js';
import type { MiddlewareHandler } from 'hono';
import { csrf } from 'hono/csrf';
import { HTTPException } from 'hono/http-exception';
import { ProblemError } from '../errors.js';
import { cookieSetting, type WebCookie } from './cookies.js';
import { relyingPartyOf, type WebRequest } from './request.js';

/**
 * The one CSRF mechanism of the HTML surfaces (DESIGN D21, D26, D35), in two layers:
 * 1. {@link originCheck} on every surface: Hono's `csrf` refuses a form POST whose `Sec-Fetch-Site` is not
 *    `same-origin` and whose `Origin` is not the request's own, before anything runs (login CSRF included);
 * 2. a form token where a form changes state: the `csrf_token` field (or `X-CSRF-Token` header) must equal the secret
 *    it is bound to ({@link csrfTokenMatches}) — the session's own token (dashboard, portal) or, for forms shown before
 *    any session (sign-in link, invitation, join pages), a double-submit cookie ({@link doubleSubmitToken}). Both
 *    refusals are `CSRF_TOKEN_INVALID` (403), rendered by the surface.
 */

/** The form field that carries the token. */
const CSRF_FIELD = 'csrf_token';

/** The refusal of a request from another site or without its form token: nothing was changed. */
export function csrfRefusal(detail = 'This request did not carry its form’s security token; nothing was changed.') {
  return new ProblemError('CSRF_TOKEN_INVALID', `${detail} Open the page again and resubmit.`);
}

const honoCsrf = csrf({ origin: (origin, c) => origin === relyingPartyOf(c).origin });

/**
 * Hono's `csrf` with the request's own origin (`X-Forwarded-Proto` and `Host`, as WebAuthn sees it). A request
 * with neither `Origin` nor `Sec-Fetch-Site` is not from a browser (no CSRF possible) and passes; JSON and
 * other non-form bodies pass (a browser cannot send them cross-site without a CORS preflight, never allowed).
 */
export function originCheck(): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.header('origin') === undefined && c.req.header('sec-fetch-site') === undefined) return next();
    try {
      await honoCsrf(c, async () => {});
    } catch (error) {
      if (error instanceof HTTPException && error.status === 403)
        throw csrfRefusal('This request did not come from this site’s own form; nothing was changed.');
      throw error;
    }
    await next();
  };
}

/** True when `presented` equals `expected` (both non-empty), compared in constant time. */
export function csrfTokenMatches(presented: string | null | undefined, expected: string | null | undefined): boolean {
  return equalInConstantTime(presented, expected);
}

/** The token a request presents: the `X-CSRF-Token` header (htmx, passkey ceremonies) or the form's `csrf_token`. */
export function presentedCsrfToken(request: Pick<WebRequest, 'headers' | 'form'>): string | null {
  return request.headers['x-csrf-token'] ?? request.form.get(CSRF_FIELD);
}

/**
 * The double-submit token of this browser for `cookie` (its cookie's value), or a new one with the
 * `Set-Cookie` that stores it: what a form without a session repeats in `csrf_token` ({@link hasDoubleSubmitToken}).
 */
export function doubleSubmitToken(
  request: Pick<WebRequest, 'cookies'>,
  cookie: WebCookie,
): { token: string; cookies: string[] } {
  const existing = request.cookies[cookie.name];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return { token: existing, cookies: [] };
  const token = randomBytes(32).toString('base64url');
  return { token, cookies: [cookieSetting(cookie, token)] };
}

/** True when a form carries the token of its double-submit cookie `cookie` in `csrf_token`. */
export function hasDoubleSubmitToken(request: Pick<WebRequest, 'cookies' | 'form'>, cookie: WebCookie): boolean {
  return csrfTokenMatches(request.form.get(CSRF_FIELD), request.cookies[cookie.name]);
}
