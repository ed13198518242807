import { escapeHtml } from '@kitajs/html';
import type { OAuthClientInformationFull, OAuthMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
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
import { ClientMetadata, MAX_CLIENT_METADATA_BYTES } from './client-metadata.js';
import { findClient, isAllowedRedirectUri, registerClient } from './clients.js';
import { handlerOf } from '../domain/handlers.js';
import { invokeOperation } from '../operations/invoke.js';
import { inputSchemaOf, pipelineOperationById } from '../operations/registry.js';
import { OAuthError } from './grants.js';

/** Path of the authorization server metadata (RFC 8414 §3; the issuer is the origin, so no path suffix). */
export const AUTHORIZATION_SERVER_METADATA_PATH = '/.well-known/oauth-authorization-server';
/** Prefix of the authorization server's endpoints (`/oauth/register`, `/oauth/authorize`, `/oauth/token`). */
export const OAUTH_PATH_PREFIX = '/oauth/';
/** The dashboard page where a member consents to a pending authorization request (`?request=<id>`). */
const CONSENT_PATH = `${DASHBOARD_PATH}/oauth/authorize`;

/** The default `scope` when a client asks for none (DESIGN D30): `mcp:full` plus every read ability. */
const DEFAULT_OAUTH_SCOPE: readonly Ability[] = ABILITY_VALUES.filter(
  (ability) => ability === 'mcp:full' || isReadAbility(ability),
);

/**
 * CORS of the JSON endpoints (metadata, registration, token): public clients may call them from a browser; no cookies
 * are read.
 */
const CORS_HEADERS: Readonly<Record<string, string>> = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Access-Control-Allow-Headers': 'Content-Type, Authorization, MCP-Protocol-Version',
  'Access-Control-Max-Age': '86400',
};

/** True when `path` is served by {@link handleOAuthRequest}. */
export function isOAuthPath(path: string): boolean {
  return path === AUTHORIZATION_SERVER_METADATA_PATH || path.startsWith(OAUTH_PATH_PREFIX);
}

/**
 * The authorization server metadata (RFC 8414 §2; MCP "Authorization") of the tool server on the origin
 * of `requestUrl`: the issuer is the origin; authorization code with PKCE `S256` and refresh tokens; public
 * clients only; the scopes are the abilities.
 */
function authorizationServerMetadata(requestUrl: string): OAuthMetadata {
  const origin = new URL(requestUrl).origin;
  return {
    issuer: origin,
    authorization_endpoint: `${origin}/oauth/authorize`,
    token_endpoint: `${origin}/oauth/token`,
    registration_endpoint: `${origin}/oauth/register`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    scopes_supported: [...ABILITY_VALUES],
  };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...CORS_HEADERS, ...headers },
  });
}

/** An RFC 6749 §5.2 error answer (`{ error, error_description }`). */
function oauthError(error: OAuthError, headers: Record<string, string> = {}): Response {
  return json(error.oauthStatus, { error: error.error, error_description: error.description }, headers);
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
 * `POST /oauth/register` (RFC 7591 §3): public clients with `https` or loopback `http` redirect URIs; 201 with the
 * client information.
 */
async function register(runtime: Runtime, request: Request): Promise<Response> {
  let body: unknown;
  try {
    const text = await request.text();
    if (Buffer.byteLength(text) > MAX_CLIENT_METADATA_BYTES) throw new RangeError('too large');
    body = JSON.parse(text);
  } catch {
    return oauthError(
      new OAuthError(
        'invalid_client_metadata',
        `The body must be a JSON object of client metadata (RFC 7591), at most ${MAX_CLIENT_METADATA_BYTES} bytes.`,
      ),
    );
  }
  const parsed = ClientMetadata.safeParse(body);
  if (!parsed.success)
    return oauthError(
      new OAuthError(
        'invalid_client_metadata',
        `Invalid client metadata: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
      ),
    );
  const metadata = parsed.data;
  if ((metadata.token_endpoint_auth_method ?? 'none') !== 'none') {
    return oauthError(
      new OAuthError(
        'invalid_client_metadata',
        'Only public clients are supported: token_endpoint_auth_method must be "none".',
      ),
    );
  }
  if (
    metadata.redirect_uris.length === 0 ||
    metadata.redirect_uris.length > 10 ||
    !metadata.redirect_uris.every(isAllowedRedirectUri)
  ) {
    return oauthError(
      new OAuthError(
        'invalid_redirect_uri',
        'redirect_uris must hold 1 to 10 https URIs or loopback http URIs (127.0.0.1, [::1], localhost), without fragments.',
      ),
    );
  }
  const grantTypes = metadata.grant_types ?? ['authorization_code', 'refresh_token'];
  if (!grantTypes.every((grant) => grant === 'authorization_code' || grant === 'refresh_token')) {
    return oauthError(
      new OAuthError('invalid_client_metadata', 'grant_types may only hold authorization_code and refresh_token.'),
    );
  }
  if (!(metadata.response_types ?? ['code']).every((type) => type === 'code'))
    return oauthError(new OAuthError('invalid_client_metadata', 'response_types may only hold code.'));
  const registered = {
    ...metadata,
    token_endpoint_auth_method: 'none',
    grant_types: grantTypes,
    response_types: ['code'],
  };
  const client = await registerClient(runtime.store, runtime.clock, {
    client_name: metadata.client_name,
    redirect_uris: metadata.redirect_uris,
    metadata: registered,
  });
  const information: OAuthClientInformationFull = {
    ...registered,
    client_id: client.client_id,
    client_id_issued_at: client.client_id_issued_at,
  };
  return json(201, information);
}

/**
 * `GET /oauth/authorize` (RFC 6749 §4.1.1, RFC 7636, RFC 8707; DESIGN D30). An unknown client or a
 * redirect URI it did not register gets an error page, never a redirect. Once the redirect is known
 * valid, other faults go back to it with `error` and `state` (§4.1.2.1): `response_type` other than `code`,
 * a missing or `plain` PKCE challenge, a `resource` other than the tool server, unknown abilities in
 * `scope`. A valid request is stored and the browser sent to the dashboard's consent page.
 */
async function authorize(runtime: Runtime, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const query = url.searchParams;
  const clientId = query.get('client_id') ?? '';
  const client = clientId ? await findClient(runtime.store, clientId) : null;
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

/** The internal operation of each supported `grant_type` (DESIGN D35). */
const GRANT_OPERATIONS = {
  authorization_code: { id: 'oauthAuthorizationCodeGrant', fields: ['code', 'redirect_uri', 'code_verifier'] },
  refresh_token: { id: 'oauthRefreshTokenGrant', fields: ['refresh_token'] },
} as const;

/**
 * `POST /oauth/token` (RFC 6749 §3.2, form-encoded): `authorization_code` or `refresh_token`, each an internal
 * operation run by `invokeOperation` (the presented code or refresh token is the credential; its team's activity
 * log gets the entry, refusals included); errors per §5.2.
 */
async function token(runtime: Runtime, request: Request, requestId: string, clientIp: string): Promise<Response> {
  if (!/^application\/x-www-form-urlencoded/i.test(request.headers.get('content-type') ?? '')) {
    return oauthError(
      new OAuthError('invalid_request', 'The token request must be application/x-www-form-urlencoded.'),
    );
  }
  const form = new URLSearchParams(await request.text());
  const clientId = form.get('client_id') ?? '';
  if (request.headers.get('authorization'))
    return oauthError(
      new OAuthError(
        'invalid_client',
        'Clients are public (token_endpoint_auth_method none): send client_id in the body, no credentials.',
        401,
      ),
    );
  const client = clientId ? await findClient(runtime.store, clientId) : null;
  if (!client) return oauthError(new OAuthError('invalid_client', 'Unknown client_id.', 401));
  const grantType = form.get('grant_type');
  const grant =
    grantType && Object.hasOwn(GRANT_OPERATIONS, grantType)
      ? GRANT_OPERATIONS[grantType as keyof typeof GRANT_OPERATIONS]
      : null;
  if (!grant)
    return oauthError(
      new OAuthError(
        grantType ? 'unsupported_grant_type' : 'invalid_request',
        grantType ? `grant_type ${grantType.slice(0, 40)} is not supported.` : 'grant_type is required.',
      ),
    );
  const required = grant.fields[0];
  if (!form.get(required)) return oauthError(new OAuthError('invalid_request', `${required} is required.`));
  const input: Record<string, string> = { client_id: clientId };
  for (const field of grant.fields) {
    const value = form.get(field);
    if (value !== null) input[field] = value;
  }
  let refused = null as OAuthError | null;
  const handler = handlerOf(grant.id);
  const outcome = await invokeOperation({
    runtime,
    principal: null,
    operation: pipelineOperationById(grant.id),
    handler: (args, context) =>
      handler(args, context).catch((error: unknown) => {
        if (error instanceof OAuthError) refused = error;
        throw error;
      }),
    surface: 'rest',
    requestId,
    clientIp,
    decode: () => {
      const parsed = inputSchemaOf(pipelineOperationById(grant.id), { withIdempotencyKey: false }).safeParse(input);
      if (!parsed.success) throw new OAuthError('invalid_request', 'The token request’s parameters are too long.');
      return { input: parsed.data, idempotencyKey: null, fingerprint: [], cursorField: 'form.cursor' };
    },
  });
  if (outcome.ok) return json(200, outcome.result);
  return oauthError(refused ?? new OAuthError('invalid_request', outcome.problem.detail, outcome.problem.status));
}

/**
 * The tool server's OAuth authorization server (DESIGN D30, D35) on the web layer: the RFC 8414 metadata (no
 * token, not limited) and `/oauth/register`, `/oauth/authorize`, `/oauth/token`, each limited per client IP
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
  app.post('/oauth/register', limited, (c) => register(c.get('runtime'), c.req.raw));
  app.get('/oauth/authorize', limited, (c) => authorize(c.get('runtime'), c.req.raw));
  app.post('/oauth/token', limited, (c) => token(c.get('runtime'), c.req.raw, c.get('requestId'), c.get('clientIp')));
  for (const [path, method] of [
    ['/oauth/register', 'POST'],
    ['/oauth/authorize', 'GET'],
    ['/oauth/token', 'POST'],
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
