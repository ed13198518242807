import type { OAuthClientInformationFull } from '@modelcontextprotocol/server';
import type { Runtime } from '../runtime.js';
import { MAX_CLIENT_METADATA_BYTES, type ClientMetadata } from './client-metadata.js';
import { isAllowedRedirectUri, registerClient } from './clients.js';
import { OAuthError } from './grants.js';
import { json, oauthError } from './responses.js';
import { runPublicOperation, type Caller } from './public-operation.js';

/**
 * Registers a public client from its validated metadata (RFC 7591 §3; DESIGN D30): `https` or loopback `http` redirect
 * URIs, `authorization_code` and `refresh_token` grants, `code` responses, no client authentication. Returns the
 * client information; throws OAuthError `invalid_client_metadata` or `invalid_redirect_uri`.
 */
export async function registerPublicClient(
  runtime: Runtime,
  metadata: ClientMetadata,
): Promise<OAuthClientInformationFull & { client_id_issued_at: number }> {
  if ((metadata.token_endpoint_auth_method ?? 'none') !== 'none')
    throw new OAuthError(
      'invalid_client_metadata',
      'Only public clients are supported: token_endpoint_auth_method must be "none".',
    );
  if (
    metadata.redirect_uris.length === 0 ||
    metadata.redirect_uris.length > 10 ||
    !metadata.redirect_uris.every(isAllowedRedirectUri)
  )
    throw new OAuthError(
      'invalid_redirect_uri',
      'redirect_uris must hold 1 to 10 https URIs or loopback http URIs (127.0.0.1, [::1], localhost), without fragments.',
    );
  const grantTypes = metadata.grant_types ?? ['authorization_code', 'refresh_token'];
  if (!grantTypes.every((grant) => grant === 'authorization_code' || grant === 'refresh_token'))
    throw new OAuthError('invalid_client_metadata', 'grant_types may only hold authorization_code and refresh_token.');
  if (!(metadata.response_types ?? ['code']).every((type) => type === 'code'))
    throw new OAuthError('invalid_client_metadata', 'response_types may only hold code.');
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
  return { ...registered, client_id: client.client_id, client_id_issued_at: client.client_id_issued_at };
}

/**
 * `POST /oauth/register` (RFC 7591 §3): the JSON metadata runs as the public internal operation `registerOAuthClient`
 * through the pipeline (DESIGN D35; no team, so no activity entry); 201 with the client information.
 */
export async function register(runtime: Runtime, request: Request, caller: Caller): Promise<Response> {
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
  const outcome = await runPublicOperation(
    runtime,
    'registerOAuthClient',
    { metadata: body },
    caller,
    (detail) => new OAuthError('invalid_client_metadata', `Invalid client metadata: ${detail}`),
  );
  return outcome.ok ? json(201, outcome.result) : outcome.response;
}
