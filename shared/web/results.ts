import type { ApiGatewayResult } from '../http/api-gateway.js';
import { documentOf, type Html } from './html.js';

/**
 * The answers a page handler gives (DESIGN D35): plain API Gateway v2 results (status, headers, body and the
 * `Set-Cookie` values of `./cookies.ts`), turned into a web `Response` by {@link toResponse}. The security
 * headers are not set here: the surface's header policy (`./headers.ts`) adds them to every answer.
 */

/** An HTML answer: a whole page (`<html>` root) gets the doctype; an htmx fragment is sent as is. */
export function htmlResult(status: number, markup: Html, cookies?: string[]): ApiGatewayResult {
  const text = markup.toString();
  return {
    statusCode: status,
    headers: { 'Content-Type': 'text/html; charset=utf-8' },
    body: text.startsWith('<html') ? documentOf(markup) : text,
    ...(cookies?.length ? { cookies } : {}),
  };
}

/** A `303 See Other` to `location` (POST → redirect → GET); for htmx requests also `HX-Redirect`. */
export function redirectResult(location: string, cookies?: string[]): ApiGatewayResult {
  return {
    statusCode: 303,
    headers: { Location: location, 'HX-Redirect': location },
    body: '',
    ...(cookies?.length ? { cookies } : {}),
  };
}

/** A JSON answer (the passkey ceremonies' endpoints, problems of JSON requests). */
export function jsonResult(status: number, body: unknown, cookies?: string[]): ApiGatewayResult {
  return {
    statusCode: status,
    headers: { 'Content-Type': 'application/json; charset=utf-8' },
    body: JSON.stringify(body),
    ...(cookies?.length ? { cookies } : {}),
  };
}

/** A static file answer (cacheable for an hour). */
export function assetResult(body: string, contentType: string): ApiGatewayResult {
  return { statusCode: 200, headers: { 'Content-Type': contentType, 'Cache-Control': 'public, max-age=3600' }, body };
}

/** `result` as a web `Response`: its headers, one `Set-Cookie` per cookie, its body (none for 204/304). */
export function toResponse(result: ApiGatewayResult): Response {
  const headers = new Headers(result.headers);
  for (const cookie of result.cookies ?? []) headers.append('Set-Cookie', cookie);
  const empty = result.statusCode === 204 || result.statusCode === 304;
  return new Response(empty ? null : result.body, { status: result.statusCode, headers });
}
