import type { OAuthProtectedResourceMetadata } from '@modelcontextprotocol/server';
import { ABILITY_VALUES } from '../catalogues/abilities.js';
import { MCP_PATH, PROTECTED_RESOURCE_METADATA_PATH, PROTECTED_RESOURCE_METADATA_PATHS } from '../config.js';

export { PROTECTED_RESOURCE_METADATA_PATHS };

/**
 * The URL of the metadata document for the tool server reached at `requestUrl` (any URL on its origin):
 * `<origin>/.well-known/oauth-protected-resource/mcp`, as the MCP SDK's
 * `getOAuthProtectedResourceMetadataUrl` builds it. This is the `resource_metadata` parameter of the
 * `WWW-Authenticate` challenge on every 401 of the tool server (MCP "Authorization", RFC 9728 §5.1).
 */
export function protectedResourceMetadataUrl(requestUrl: string): string {
  return new URL(`${PROTECTED_RESOURCE_METADATA_PATH}${MCP_PATH}`, new URL(requestUrl).origin).href;
}

/**
 * The tool server's OAuth 2.0 Protected Resource Metadata (RFC 9728 §2) for `requestUrl`'s origin: `resource`
 * `<origin>/mcp`, bearer in the header only (no cookie, query or body), every ability as a scope, and the service
 * itself as authorization server (DESIGN D30; RFC 8414 metadata at `<origin>/.well-known/oauth-authorization-server`).
 */
function protectedResourceMetadata(requestUrl: string): OAuthProtectedResourceMetadata {
  const origin = new URL(requestUrl).origin;
  return {
    resource: `${origin}${MCP_PATH}`,
    authorization_servers: [origin],
    resource_name: 'Membership service tool server (MCP)',
    bearer_methods_supported: ['header'],
    scopes_supported: [...ABILITY_VALUES],
  };
}

/**
 * Answers a request for one of {@link PROTECTED_RESOURCE_METADATA_PATHS}: `GET`/`HEAD` → 200
 * `application/json` with {@link protectedResourceMetadata} (cacheable for an hour); `OPTIONS` → 204;
 * any other method → 405 with `Allow`. Needs no token. The caller adds CORS headers.
 */
export function protectedResourceMetadataResponse(request: Request): Response {
  const method = request.method.toUpperCase();
  if (method === 'OPTIONS') return new Response(null, { status: 204 });
  if (method !== 'GET' && method !== 'HEAD') {
    return new Response(JSON.stringify({ error: 'method_not_allowed' }), {
      status: 405,
      headers: { Allow: 'GET, HEAD, OPTIONS', 'Content-Type': 'application/json' },
    });
  }
  const body = JSON.stringify(protectedResourceMetadata(request.url));
  return new Response(method === 'HEAD' ? null : body, {
    status: 200,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'public, max-age=3600' },
  });
}
