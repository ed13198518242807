import type { Runtime } from '../runtime.js';
import { ClientMetadataDocumentError, resolveClient } from './client-id-metadata.js';
import { OAuthError } from './grants.js';
import { runPublicOperation, type Caller } from './public-operation.js';
import { CORS_HEADERS, json, oauthError } from './responses.js';

/** The internal operation of each supported `grant_type` (DESIGN D35). */
const GRANT_OPERATIONS = {
  authorization_code: { id: 'oauthAuthorizationCodeGrant', fields: ['code', 'redirect_uri', 'code_verifier'] },
  refresh_token: { id: 'oauthRefreshTokenGrant', fields: ['refresh_token'] },
} as const;

/** The form body of a token or revocation request, or the RFC 6749 §5.2 error answer for a wrong request. */
async function formOf(request: Request): Promise<URLSearchParams | Response> {
  if (!/^application\/x-www-form-urlencoded/i.test(request.headers.get('content-type') ?? ''))
    return oauthError(new OAuthError('invalid_request', 'The request must be application/x-www-form-urlencoded.'));
  if (request.headers.get('authorization'))
    return oauthError(
      new OAuthError(
        'invalid_client',
        'Clients are public (token_endpoint_auth_method none): send client_id in the body, no credentials.',
        401,
      ),
    );
  return new URLSearchParams(await request.text());
}

/**
 * `POST /oauth/token` (RFC 6749 §3.2, form-encoded): `authorization_code` or `refresh_token`, each an internal
 * operation run by the pipeline; the client is a registered one or a metadata document URL (fetched or cached);
 * errors per §5.2.
 */
export async function token(runtime: Runtime, request: Request, caller: Caller): Promise<Response> {
  const form = await formOf(request);
  if (form instanceof Response) return form;
  const clientId = form.get('client_id') ?? '';
  try {
    if (!clientId || !(await resolveClient(runtime, clientId)))
      return oauthError(new OAuthError('invalid_client', 'Unknown client_id.', 401));
  } catch (error) {
    if (error instanceof ClientMetadataDocumentError)
      return oauthError(new OAuthError('invalid_client', error.detail, 401));
    throw error;
  }
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
  const outcome = await runPublicOperation(runtime, grant.id, input, caller);
  return outcome.ok ? json(200, outcome.result) : outcome.response;
}

/**
 * `POST /oauth/revoke` (RFC 7009 §2.1, form-encoded `token`, optional `token_type_hint` and `client_id`): the internal
 * operation `oauthRevokeToken`; 200 with an empty body whether or not the token was known (§2.2), 400 without `token`,
 * 401 `invalid_client` for a token of another client.
 */
export async function revoke(runtime: Runtime, request: Request, caller: Caller): Promise<Response> {
  const form = await formOf(request);
  if (form instanceof Response) return form;
  const presented = form.get('token');
  if (!presented) return oauthError(new OAuthError('invalid_request', 'token is required.'));
  const input: Record<string, string> = { token: presented };
  for (const field of ['token_type_hint', 'client_id']) {
    const value = form.get(field);
    if (value) input[field] = value;
  }
  const outcome = await runPublicOperation(runtime, 'oauthRevokeToken', input, caller);
  return outcome.ok
    ? new Response(null, { status: 200, headers: { 'Cache-Control': 'no-store', ...CORS_HEADERS } })
    : outcome.response;
}
