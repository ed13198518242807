import type { OAuthClientInformationFull } from '@modelcontextprotocol/server';
import type { Runtime } from '../runtime.js';
import { ClientMetadata, MAX_CLIENT_METADATA_BYTES } from './client-metadata.js';
import { isAllowedRedirectUri, registerClient } from './clients.js';
import { OAuthError } from './grants.js';
import { json, oauthError } from './responses.js';

/**
 * `POST /oauth/register` (RFC 7591 §3): public clients with `https` or loopback `http` redirect URIs; 201 with the
 * client information.
 */
export async function register(runtime: Runtime, request: Request): Promise<Response> {
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
