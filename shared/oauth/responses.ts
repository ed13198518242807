import { OAuthError } from './grants.js';

/**
 * CORS of the JSON endpoints (metadata, registration, token, revocation): public clients may call them from a browser;
 * no cookies are read.
 */
export const CORS_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type, Authorization, MCP-Protocol-Version',
  'Access-Control-Max-Age': '86400',
};

/** A JSON answer of the authorization server (`no-store` unless `headers` say otherwise, with CORS). */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...CORS_HEADERS, ...headers },
  });
}

/** An RFC 6749 §5.2 error answer (`{ error, error_description }`). */
export function oauthError(error: OAuthError, headers: Record<string, string> = {}): Response {
  return json(error.oauthStatus, { error: error.error, error_description: error.description }, headers);
}
