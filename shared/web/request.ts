import type { Context } from 'hono';
import type { RelyingParty } from '../domain/team-members/passkeys.js';
import type { Runtime } from '../runtime.js';
import type { WebEnv } from './app.js';
import { requestCookies } from './cookies.js';

export type { RelyingParty } from '../domain/team-members/passkeys.js';

/** Largest form or JSON body a page reads, in bytes (64 KiB); a larger body is read as empty. */
export const MAX_PAGE_BODY_BYTES = 64 * 1024;

/** One page request as the page handlers read it (DESIGN D35): decoded once by {@link readWebRequest}. */
export interface WebRequest {
  runtime: Runtime;
  method: string;
  path: string;
  query: URLSearchParams;
  /** Header names in lower case. */
  headers: Record<string, string>;
  cookies: Record<string, string>;
  /** The urlencoded form body (empty for other bodies). */
  form: URLSearchParams;
  /** The JSON body, when the request sent one (passkey ceremonies); undefined otherwise. */
  json: unknown;
  requestId: string;
  /** True for an htmx request (`HX-Request: true`): answer a fragment. */
  htmx: boolean;
  relyingParty: RelyingParty;
  /** The client's IP (per-IP limits). */
  ip: string;
}

/**
 * The origin and RP ID of a request: its `Host` (the local server has already refused foreign hosts; on AWS it
 * is the API's own domain) with the scheme `X-Forwarded-Proto` names (`http` locally), else `https`.
 */
export function relyingPartyOf(c: Context): RelyingParty {
  const host = c.req.header('host') ?? new URL(c.req.url).host;
  const scheme = c.req.header('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() === 'http' ? 'http' : 'https';
  return { origin: `${scheme}://${host}`, rpId: host.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1') };
}

/**
 * Decodes the request of `c`: headers, cookies (Hono's `getCookie`), the form or JSON body (≤ {@link
 * MAX_PAGE_BODY_BYTES}).
 */
export async function readWebRequest(c: Context<WebEnv>): Promise<WebRequest> {
  const headers: Record<string, string> = {};
  c.req.raw.headers.forEach((value, name) => {
    if (name !== 'cookie') headers[name] = value;
  });
  const raw = c.req.method === 'GET' || c.req.method === 'HEAD' ? new ArrayBuffer(0) : await c.req.arrayBuffer();
  const text = raw.byteLength <= MAX_PAGE_BODY_BYTES ? Buffer.from(raw).toString('utf8') : '';
  const contentType = headers['content-type'] ?? '';
  let json: unknown;
  if (/^application\/json/i.test(contentType) && text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  const url = new URL(c.req.url);
  return {
    runtime: c.get('runtime'),
    method: c.req.method.toUpperCase(),
    path: url.pathname,
    query: url.searchParams,
    headers,
    cookies: requestCookies(c),
    form: /^application\/x-www-form-urlencoded/i.test(contentType) ? new URLSearchParams(text) : new URLSearchParams(),
    json,
    requestId: c.get('requestId'),
    htmx: headers['hx-request'] === 'true',
    relyingParty: relyingPartyOf(c),
    ip: c.get('clientIp'),
  };
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
