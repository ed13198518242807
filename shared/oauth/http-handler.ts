import { escapeHtml } from '@kitajs/html';
import type { OAuthMetadata } from '@modelcontextprotocol/server';
import { ABILITY_VALUES, isAbility, isReadAbility, type Ability } from '../catalogues/abilities.js';
import { MCP_PATH } from '../config.js';
import { DASHBOARD_PATH } from '../dashboard/http.js';
import { ProblemError } from '../errors.js';
import { integrationsFromEnvironment } from '../integrations.js';
import { createWebApp } from '../web/app.js';
import { securityHeaders } from '../web/headers.js';
import { limitPerClientIp } from '../web/rate-limit.js';
import type { Runtime } from '../runtime.js';
import { redirectWith, saveAuthorizationRequest } from './authorization-requests.js';
import { ClientMetadataDocumentError, resolveClient } from './client-id-metadata.js';
import { OAuthError } from './grants.js';
import { register } from './registration.js';
import { CORS_HEADERS, json, oauthError } from './responses.js';
import { revoke, token } from './token-endpoint.js';

/** Path of the authorization server metadata (RFC 8414 §3; the issuer is the origin, so no path suffix). */
export const AUTHORIZATION_SERVER_METADATA_PATH = '/.well-known/oauth-authorization-server';
/** Prefix of the authorization server's endpoints (`/oauth/register`, `/authorize`, `/token`, `/revoke`). */
export const OAUTH_PATH_PREFIX = '/oauth/';
/** The dashboard page where a member consents to a pending authorization request (`?request=<id>`). */
const CONSENT_PATH = `${DASHBOARD_PATH}/oauth/authorize`;

/** The default `scope` when a client asks for none (DESIGN D30): `mcp:full` plus every read ability. */
const DEFAULT_OAUTH_SCOPE: readonly Ability[] = ABILITY_VALUES.filter(
  (ability) => ability === 'mcp:full' || isReadAbility(ability),
);

/** True when `path` is served by {@link handleOAuthRequest}. */
export function isOAuthPath(path: string): boolean {
  return path === AUTHORIZATION_SERVER_METADATA_PATH || path.startsWith(OAUTH_PATH_PREFIX);
}

/**
 * The authorization server metadata (RFC 8414 §2; MCP "Authorization") of the tool server on the origin
 * of `requestUrl`: the issuer is the origin; authorization code with PKCE `S256` and refresh tokens; public
 * clients only, registered or named by a Client ID Metadata Document URL; RFC 7009 revocation; the scopes are the
 * abilities.
 */
function authorizationServerMetadata(requestUrl: string): OAuthMetadata {
  const origin = new URL(requestUrl).origin;
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/oauth/authorize`,
    token_endpoint: `${origin}/oauth/token`,
    registration_endpoint: `${origin}/oauth/register`,
    revocation_endpoint: `${origin}/oauth/revoke`,
    revocation_endpoint_auth_methods_supported: ['none'],
    client_id_metadata_document_supported: true,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...ABILITY_VALUES],
  };
}

/**
 * An error page of the authorization endpoint for a request whose redirect is not known to be safe: never a redirect
 * (no open redirect).
 */
function errorPage(status: number, title: string, detail: string): Response {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1><p>${escapeHtml(detail)}</p><p>Start again from your AI client's connector settings.</p></main></body></html>`;
  return new Response(body, {
    status,
    headers: { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' },
  });
}

/**
 * `GET /oauth/authorize` (RFC 6749 §4.1.1, RFC 7636, RFC 8707; DESIGN D30). The client is a registered one or the
 * metadata document its URL names (fetched or cached). An unknown or refused client or a
 * redirect URI it did not list gets an error page, never a redirect. Once the redirect is known
 * valid, other faults go back to it with `error` and `state` (§4.1.2.1): `response_type` other than `code`,
 * a missing or `plain` PKCE challenge, a `resource` other than the tool server, unknown abilities in
 * `scope`. A valid request is stored and the browser sent to the dashboard's consent page.
 */
async function authorize(runtime: Runtime, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const query = url.searchParams;
  const clientId = query.get('client_id') ?? '';
  let client: Awaited<ReturnType<typeof resolveClient>>;
  try {
    client = clientId ? await resolveClient(runtime, clientId) : null;
  } catch (error) {
    if (error instanceof ClientMetadataDocumentError) return errorPage(400, 'Client not accepted', error.detail);
    throw error;
  }
  if (!client)
    return errorPage(400, 'Unknown client', 'This authorization request names no registered client (client_id).');
  const requested = query.get('redirect_uri');
  const redirectUri = requested ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0] : null);
  if (!redirectUri || !client.redirect_uris.includes(redirectUri))
    return errorPage(400, 'Unknown redirect URI', 'redirect_uri is not one the client registered.');
  const state = query.get('state');
  const back = (error: string, description: string) =>
    new Response(null, {
      status: 302,
      headers: {
        Location: redirectWith(redirectUri, { error, error_description: description, state }),
        'Cache-Control': 'no-store',
      },
    });
  if (query.get('response_type') !== 'code')
    return back('unsupported_response_type', 'Only response_type=code is supported.');
  const challenge = query.get('code_challenge');
  if (query.get('code_challenge_method') !== 'S256' || !challenge || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) {
    return back(
      'invalid_request',
      'PKCE is required: code_challenge (43 characters, base64url) with code_challenge_method=S256.',
    );
  }
  const resource = `${url.origin}${MCP_PATH}`;
  const resources = query.getAll('resource');
  if (resources.some((value) => value.replace(/\/+$/, '') !== resource))
    return back('invalid_target', `resource must be the tool server: ${resource}.`);
  const scope = (query.get('scope') ?? '').split(' ').filter(Boolean);
  const unknown = scope.filter((value) => !isAbility(value));
  if (unknown.length)
    return back('invalid_scope', `Unknown scopes: ${unknown.slice(0, 5).join(', ')}. Scopes are abilities.`);
  const pending = await saveAuthorizationRequest(runtime.store, runtime.clock, {
    client_id: client.client_id,
    client_name: client.client_name,
    client_host: client.host ?? null,
    redirect_uri: redirectUri,
    code_challenge: challenge,
    state,
    scope: scope.length ? [...new Set(scope as Ability[])] : [...DEFAULT_OAUTH_SCOPE],
    resource,
  });
  const dashboard = (runtime.integrations ?? integrationsFromEnvironment()).dashboardBaseUrl ?? url.origin;
  return new Response(null, {
    status: 302,
    headers: { Location: `${dashboard}${CONSENT_PATH}?request=${pending.id}`, 'Cache-Control': 'no-store' },
  });
}

/**
 * The tool server's OAuth authorization server (DESIGN D30, D35) on the web layer: the RFC 8414 metadata (no
 * token, not limited) and `/oauth/register`, `/authorize`, `/token`, `/revoke`, each limited per client IP
 * (bucket `oauth`, 429 with `Retry-After`, `X-RateLimit-*` on every answer). OPTIONS is answered for CORS; a
 * wrong method is 405 with `Allow`; an unknown path is 404. The runtime and client IP are the caller's bindings.
 */
function createOAuthApp() {
  const app = createWebApp();
  app.use(securityHeaders({ referrerPolicy: 'no-referrer', content: 'api', crossOriginResources: true }));
  app.options('*', () => new Response(null, { status: 204, headers: { ...CORS_HEADERS } }));
  app.on(['GET', 'HEAD'], AUTHORIZATION_SERVER_METADATA_PATH, (c) =>
    json(200, authorizationServerMetadata(c.req.url), { 'Cache-Control': 'public, max-age=3600' }),
  );
  app.all(AUTHORIZATION_SERVER_METADATA_PATH, () =>
    json(405, { error: 'method_not_allowed' }, { Allow: 'GET, HEAD, OPTIONS' }),
  );
  const limited = limitPerClientIp('oauth', { headers: true });
  app.post('/oauth/register', limited, (c) =>
    register(c.get('runtime'), c.req.raw, { requestId: c.get('requestId'), clientIp: c.get('clientIp') }),
  );
  app.get('/oauth/authorize', limited, (c) => authorize(c.get('runtime'), c.req.raw));
  app.post('/oauth/token', limited, (c) =>
    token(c.get('runtime'), c.req.raw, { requestId: c.get('requestId'), clientIp: c.get('clientIp') }),
  );
  app.post('/oauth/revoke', limited, (c) =>
    revoke(c.get('runtime'), c.req.raw, { requestId: c.get('requestId'), clientIp: c.get('clientIp') }),
  );
  for (const [path, method] of [
    ['/oauth/register', 'POST'],
    ['/oauth/authorize', 'GET'],
    ['/oauth/token', 'POST'],
    ['/oauth/revoke', 'POST'],
  ])
    app.all(path, () => json(405, { error: 'method_not_allowed' }, { Allow: `${method}, OPTIONS` }));
  app.notFound((c) =>
    json(404, { error: 'not_found', error_description: `No OAuth endpoint ${c.req.path.slice(0, 100)}.` }),
  );
  app.onError((error, c) => {
    if (error instanceof ProblemError && error.code === 'RATE_LIMITED')
      return json(429, { error: 'rate_limited', error_description: error.detail }, error.headers);
    if (error instanceof ProblemError && error.code === 'PAYLOAD_TOO_LARGE') {
      const registering = c.req.path === '/oauth/register';
      return oauthError(
        new OAuthError(
          registering ? 'invalid_client_metadata' : 'invalid_request',
          error.detail,
          registering ? 400 : 413,
        ),
      );
    }
    throw error;
  });
  return app;
}

const oauthApp = createOAuthApp();

/** Serves one request of the tool server's OAuth authorization server (see {@link createOAuthApp}). */
export async function handleOAuthRequest(
  runtime: Runtime,
  request: Request,
  context: { clientIp: string; requestId?: string },
): Promise<Response> {
  return oauthApp.fetch(request, { runtime, clientIp: context.clientIp, requestId: context.requestId });
}
