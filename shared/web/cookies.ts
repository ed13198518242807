import type { Context } from 'hono';
import { generateCookie, getCookie } from 'hono/cookie';

/**
 * The one cookie helper of the HTML surfaces (DESIGN D21, D27, D35): every cookie is declared once as a
 * {@link WebCookie} and always `HttpOnly; Secure` with its declared `Path` and `SameSite`; it is written by
 * Hono's cookie helper (`generateCookie`, what `setCookie` sends) and read by its `getCookie`, never as a
 * hand-built `Set-Cookie` string.
 */

/** A cookie of an HTML surface: its name, the path it is scoped to and its `SameSite` rule. */
export interface WebCookie {
  name: string;
  path: string;
  sameSite: 'Strict' | 'Lax';
}

const attributesOf = (cookie: WebCookie) =>
  ({ path: cookie.path, httpOnly: true, secure: true, sameSite: cookie.sameSite }) as const;

/** The `Set-Cookie` value that stores `value` in `cookie` (a session cookie: no `Max-Age`). */
export function cookieSetting(cookie: WebCookie, value: string): string {
  return generateCookie(cookie.name, value, attributesOf(cookie));
}

/** The `Set-Cookie` value that deletes `cookie` (`Max-Age=0`). */
export function cookieDeletion(cookie: WebCookie): string {
  return generateCookie(cookie.name, '', { ...attributesOf(cookie), maxAge: 0 });
}

/** Every cookie the request of `c` sent, by name (Hono's `getCookie`; `event.cookies` on Lambda). */
export function requestCookies(c: Context): Record<string, string> {
  return getCookie(c);
}
