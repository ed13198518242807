import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { ApiGatewayResult } from '../http/api-gateway.js';
import type { Runtime } from '../runtime.js';
import type { Viewer } from './components.js';
import { documentOf, type Html } from './html.js';
import type { RelyingParty } from './passkeys.js';
import type { DashboardSession } from './sessions.js';

/** The path every dashboard page lives under; the session cookie is scoped to it (DESIGN D21). */
export const DASHBOARD_PATH = '/dashboard';
/** The session cookie's name. */
export const SESSION_COOKIE = 'dashboard_session';
/** Largest form or JSON body the dashboard reads, in bytes (64 KiB). */
export const MAX_DASHBOARD_BODY_BYTES = 64 * 1024;

/** One dashboard request, decoded from the API Gateway v2 event. */
export interface DashboardRequest {
  runtime: Runtime;
  method: string;
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  cookies: Record<string, string>;
  /** The urlencoded form body (empty for other bodies). */
  form: URLSearchParams;
  /** The JSON body, when the request sent one (passkey ceremonies); undefined otherwise. */
  json: unknown;
  requestId: string;
  /** The client IP (API Gateway's `sourceIp`): the subject of an operation's per-IP limit (DESIGN D4). */
  clientIp: string;
  /** True for an htmx request (`HX-Request: true`): answer a fragment. */
  htmx: boolean;
  relyingParty: RelyingParty;
}

/** A request with a live session: the viewer (member, team, principal) and the session. */
export interface SignedInRequest extends DashboardRequest {
  viewer: Viewer;
  session: DashboardSession;
}

/**
 * Decodes an API Gateway v2 event (the local server builds the same shape): cookies from `event.cookies`
 * (or a `Cookie` header), the form or JSON body, and the relying party of WebAuthn from the `Host` and
 * `X-Forwarded-Proto` headers (the local server has already refused foreign hosts; on AWS the host is the
 * API's own domain).
 */
export function decodeRequest(runtime: Runtime, event: APIGatewayProxyEventV2, requestId: string): DashboardRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {}))
    if (typeof value === 'string') headers[name.toLowerCase()] = value;
  const cookieParts = event.cookies ?? (headers.cookie ? headers.cookie.split(/;\s*/) : []);
  const cookies: Record<string, string> = {};
  for (const part of cookieParts) {
    const separator = part.indexOf('=');
    if (separator > 0) cookies[part.slice(0, separator).trim()] = part.slice(separator + 1).trim();
  }
  const raw = event.body
    ? event.isBase64Encoded
      ? Buffer.from(event.body, 'base64')
      : Buffer.from(event.body, 'utf8')
    : Buffer.alloc(0);
  const text = raw.byteLength <= MAX_DASHBOARD_BODY_BYTES ? raw.toString('utf8') : '';
  const contentType = headers['content-type'] ?? '';
  let json: unknown;
  if (/^application\/json/i.test(contentType) && text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  const host = headers.host ?? event.requestContext?.domainName ?? 'localhost';
  const scheme = headers['x-forwarded-proto']?.split(',')[0]?.trim().toLowerCase() === 'http' ? 'http' : 'https';
  return {
    runtime,
    method: (event.requestContext?.http?.method ?? 'GET').toUpperCase(),
    path: event.rawPath ?? event.requestContext?.http?.path ?? DASHBOARD_PATH,
    query: new URLSearchParams(event.rawQueryString ?? ''),
    headers,
    cookies,
    form: /^application\/x-www-form-urlencoded/i.test(contentType) ? new URLSearchParams(text) : new URLSearchParams(),
    json,
    requestId,
    clientIp: event.requestContext?.http?.sourceIp || 'unknown',
    htmx: headers['hx-request'] === 'true',
    relyingParty: { origin: `${scheme}://${host}`, rpId: host.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1') },
  };
}

/** True when `presented` equals `expected` (both non-empty), compared in constant time. */
export function sameToken(presented: string | null | undefined, expected: string | null | undefined): boolean {
  if (!presented || !expected) return false;
  const a = Buffer.from(presented, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** True when the request carries the session's CSRF token (`X-CSRF-Token` header or `csrf_token` field), compared in constant time. */
export function hasValidCsrfToken(request: DashboardRequest, session: DashboardSession): boolean {
  return sameToken(request.headers['x-csrf-token'] ?? request.form.get('csrf_token'), session.csrf_token);
}

/**
 * True when the browser says the request comes from another site (`Sec-Fetch-Site: cross-site` or
 * `same-site`), or, from a browser that does not send that header, when its `Origin` is not the
 * request's own: a state-changing request of the dashboard or the public pages is refused then, before
 * anything runs (login CSRF included). Requests without either header (not from a browser) pass.
 */
export function isCrossSiteRequest(request: DashboardRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site) return site === 'cross-site' || site === 'same-site';
  const origin = request.headers.origin;
  return origin !== undefined && origin !== 'null' && origin !== request.relyingParty.origin;
}

/** A form's double-submit CSRF cookie (for forms without a session): its name and the path it is scoped to. */
export interface DoubleSubmitCookie {
  name: string;
  path: string;
}

/**
 * The double-submit CSRF token of this browser for `cookie` (its cookie's value), or a new one with the
 * `Set-Cookie` that stores it (`HttpOnly; Secure; SameSite=Strict`, scoped to `cookie.path`): what a form
 * without a session repeats in its `csrf_token` field ({@link hasDoubleSubmitToken}).
 */
export function doubleSubmitToken(
  request: DashboardRequest,
  cookie: DoubleSubmitCookie,
): { token: string; cookies: string[] } {
  const existing = request.cookies[cookie.name];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return { token: existing, cookies: [] };
  const token = randomBytes(32).toString('base64url');
  return { token, cookies: [`${cookie.name}=${token}; Path=${cookie.path}; HttpOnly; Secure; SameSite=Strict`] };
}

/** True when a form carries the token of its double-submit cookie `cookie` in `csrf_token`. */
export function hasDoubleSubmitToken(request: DashboardRequest, cookie: DoubleSubmitCookie): boolean {
  return sameToken(request.form.get('csrf_token'), request.cookies[cookie.name]);
}

/** The double-submit cookie of the dashboard's forms before a session exists (sign-in link, invitation). */
export const PRESESSION_CSRF_COOKIE: DoubleSubmitCookie = { name: 'dashboard_presession', path: DASHBOARD_PATH };

/** Headers of every dashboard answer: no caching, no framing, scripts and styles only from the dashboard itself. */
const SECURITY_HEADERS: Record<string, string> = {
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'same-origin',
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
};

/** `Set-Cookie` value of the session cookie: HttpOnly, Secure, SameSite=Strict, Path=/dashboard (DESIGN D21). */
export function sessionCookie(value: string): string {
  return `${SESSION_COOKIE}=${value}; Path=${DASHBOARD_PATH}; HttpOnly; Secure; SameSite=Strict`;
}

/** `Set-Cookie` value that deletes the session cookie. */
export function clearedSessionCookie(): string {
  return `${SESSION_COOKIE}=; Path=${DASHBOARD_PATH}; HttpOnly; Secure; SameSite=Strict; Max-Age=0`;
}

/** An HTML answer: a whole page (`<html>` root) gets the doctype; an htmx fragment is sent as is. */
export function htmlResult(status: number, markup: Html, cookies?: string[]): ApiGatewayResult {
  const text = markup.toString();
  return {
    statusCode: status,
    headers: { 'Content-Type': 'text/html; charset=utf-8', ...SECURITY_HEADERS },
    body: text.startsWith('<html') ? documentOf(markup) : text,
    ...(cookies?.length ? { cookies } : {}),
  };
}

/** A `303 See Other` to `location` (POST → redirect → GET); for htmx requests also `HX-Redirect`. */
export function redirectResult(location: string, cookies?: string[]): ApiGatewayResult {
  return {
    statusCode: 303,
    headers: { Location: location, 'HX-Redirect': location, ...SECURITY_HEADERS },
    body: '',
    ...(cookies?.length ? { cookies } : {}),
  };
}

/** A JSON answer (the passkey ceremonies' endpoints). */
export function jsonResult(status: number, body: unknown, cookies?: string[]): ApiGatewayResult {
  return {
    statusCode: status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...SECURITY_HEADERS },
    body: JSON.stringify(body),
    ...(cookies?.length ? { cookies } : {}),
  };
}

/** A static file answer (cacheable for an hour). */
export function assetResult(body: string, contentType: string): ApiGatewayResult {
  return {
    statusCode: 200,
    headers: {
      'Content-Type': contentType,
      'Cache-Control': 'public, max-age=3600',
      'X-Content-Type-Options': 'nosniff',
    },
    body,
  };
}

/**
 * `value` when it is a same-origin dashboard path to return to after sign-in (`/dashboard...`, no scheme,
 * no `//`, no backslash, printable ASCII only, at most 2,000 characters), else null: a `return_to` never
 * leads off the dashboard (no open redirect).
 */
export function safeReturnPath(value: string | null | undefined): string | null {
  if (!value || value.length > 2000) return null;
  if (!/^\/dashboard(?:[/?]|$)/.test(value) || value.includes('//') || value.includes('\\') || /[^ -~]/.test(value))
    return null;
  if (/^\/dashboard\/sign-in(?:[/?]|$)/.test(value)) return null;
  return value;
}

/** The form's values of `name` (checkboxes and multiple selects send several). */
export function formValues(form: URLSearchParams, name: string): string[] {
  return form
    .getAll(name)
    .map((value) => value.trim())
    .filter(Boolean);
}

/** A form field as text, or undefined when empty. */
export function formText(form: URLSearchParams, name: string): string | undefined {
  const value = form.get(name)?.trim();
  return value ? value : undefined;
}
