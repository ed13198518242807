import { AUTHENTICATED, defineInternalOperation } from '../../operations/definition.js';
import { Uuid } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';
import { ClientMetadata } from '../../oauth/client-metadata.js';

/** A pending authorization request's id (the consent page's `request`). */
const ConsentRequest = z.strictObject({ request: z.string().check(z.maxLength(64)) });
/** Where the browser goes next: the client's `redirect_uri` with `code` or `error`, and `state` (RFC 6749 §4.1.2). */
const ConsentAnswer = z.object({ redirect_to: z.string() });
/** The token endpoint's answer (RFC 6749 §5.1). */
const IssuedTokens = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number(),
  refresh_token: z.string(),
  scope: z.string(),
});
const Text = z.string().check(z.maxLength(2048));

/**
 * The tool server's OAuth authorization server as operations (DESIGN D30, D35): a client's dynamic registration
 * (public, and no team's: nothing to log), a team member's consent (surface `dashboard`) and the token endpoint's
 * issuance (public: the code or refresh token in the body is the credential; its
 * team's activity log gets the entry, surface `rest`) and revocation (RFC 7009). Consent and issuance are sign-in
 * actions, exempt from the billing lockdown (D20: the access tokens they issue are refused creator writes like any
 * other token).
 */
export const tokensInternalOperations = {
  registerOAuthClient: defineInternalOperation({
    id: 'registerOAuthClient',
    summary: 'Register a public OAuth client (RFC 7591 dynamic registration): its client id and metadata.',
    tag: 'Tokens',
    ability: null,
    teamWide: false,
    // The metadata as sent: unknown fields are dropped (RFC 7591 §2), so it is not the strict body itself.
    body: z.strictObject({ metadata: ClientMetadata }),
    output: z.looseObject({ client_id: z.string(), client_id_issued_at: z.number() }),
    events: [],
    write: true,
  }),
  approveOAuthConsent: defineInternalOperation({
    id: 'approveOAuthConsent',
    summary:
      'Allow a pending OAuth authorization request: a single-use code for the requested abilities the member holds.',
    tag: 'Tokens',
    ability: 'mcp:full',
    teamWide: false,
    body: z.extend(ConsentRequest, { project_id: z.optional(Uuid) }),
    output: ConsentAnswer,
    events: [],
    write: true,
    lockdown: 'exempt',
  }),
  denyOAuthConsent: defineInternalOperation({
    id: 'denyOAuthConsent',
    summary: 'Deny a pending OAuth authorization request (the client gets `access_denied`).',
    tag: 'Tokens',
    ability: AUTHENTICATED,
    teamWide: false,
    body: ConsentRequest,
    output: ConsentAnswer,
    events: [],
    write: true,
    lockdown: 'exempt',
  }),
  oauthAuthorizationCodeGrant: defineInternalOperation({
    id: 'oauthAuthorizationCodeGrant',
    summary: 'Exchange an authorization code (PKCE) for an access token and a refresh token (a new grant).',
    tag: 'Tokens',
    ability: null,
    teamWide: false,
    body: z.strictObject({
      client_id: Text,
      code: Text,
      redirect_uri: z.optional(Text),
      code_verifier: z.optional(Text),
    }),
    output: IssuedTokens,
    events: [],
    write: true,
    lockdown: 'exempt',
  }),
  oauthRefreshTokenGrant: defineInternalOperation({
    id: 'oauthRefreshTokenGrant',
    summary: 'Rotate a refresh token: a new access token and refresh token of the same grant.',
    tag: 'Tokens',
    ability: null,
    teamWide: false,
    body: z.strictObject({ client_id: Text, refresh_token: Text }),
    output: IssuedTokens,
    events: [],
    write: true,
    lockdown: 'exempt',
  }),
  oauthRevokeToken: defineInternalOperation({
    id: 'oauthRevokeToken',
    summary: 'Revoke the grant of a presented access token or refresh token (RFC 7009); unknown tokens are ignored.',
    tag: 'Tokens',
    ability: null,
    teamWide: false,
    body: z.strictObject({ token: Text, token_type_hint: z.optional(Text), client_id: z.optional(Text) }),
    output: z.object({ revoked: z.boolean() }),
    events: [],
    write: true,
    lockdown: 'exempt',
  }),
};
