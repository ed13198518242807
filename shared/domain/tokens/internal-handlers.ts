import { ProblemError } from '../../errors.js';
import {
  approveAuthorizationRequest,
  denyAuthorizationRequest,
  findAuthorizationRequest,
  grantableAbilities,
} from '../../oauth/authorization-requests.js';
import { exchangeAuthorizationCode, refreshGrant } from '../../oauth/grants.js';
import { registerPublicClient } from '../../oauth/registration.js';
import { revokePresentedToken } from '../../oauth/revocation.js';
import type { InternalHandlersOf, OperationHandler } from '../../operations/handler.js';
import type { Runtime } from '../../runtime.js';
import { getProject } from '../projects/repository.js';
import { tokensModule } from './operations.js';

type Operations = NonNullable<typeof tokensModule.internal>;

/** The pending authorization request `id`, or NOT_FOUND (unknown, expired or already answered). */
async function pendingRequest(runtime: Runtime, id: string) {
  const pending = await findAuthorizationRequest(runtime.store, runtime.clock, id);
  if (!pending)
    throw new ProblemError('NOT_FOUND', 'This authorization request is unknown, expired or already answered.');
  return pending;
}

/**
 * Allow (D30): a code for the requested abilities the member holds, optionally narrowed to one of the team's
 * projects. Errors: NOT_FOUND (request or project), TOKEN_MISSING_ABILITY (nothing grantable includes `mcp:full`).
 */
const approveOAuthConsent: OperationHandler<Operations['approveOAuthConsent']> = async (
  input,
  { runtime, principal },
) => {
  const pending = await pendingRequest(runtime, input.request);
  const abilities = grantableAbilities(principal.abilities, pending);
  if (!abilities.includes('mcp:full'))
    throw new ProblemError(
      'TOKEN_MISSING_ABILITY',
      'The client did not ask for mcp:full, which the tool server requires.',
    );
  if (input.project_id) await getProject(runtime.store, principal, input.project_id);
  const redirect = await approveAuthorizationRequest(runtime.store, runtime.clock, pending, {
    teamId: principal.teamId,
    memberId: principal.memberId ?? '',
    abilities,
    projectIds: input.project_id ? [input.project_id] : [],
  });
  return { redirect_to: redirect };
};

/** Deny (D30): the client's redirect URI with `error=access_denied`. Errors: NOT_FOUND (request). */
const denyOAuthConsent: OperationHandler<Operations['denyOAuthConsent']> = async (input, { runtime }) => ({
  redirect_to: await denyAuthorizationRequest(runtime.store, await pendingRequest(runtime, input.request)),
});

/** `grant_type=authorization_code` (D30); errors are `OAuthError`s. */
const oauthAuthorizationCodeGrant: OperationHandler<Operations['oauthAuthorizationCodeGrant']> = async (
  input,
  { runtime, identify },
) =>
  exchangeAuthorizationCode(
    runtime.store,
    runtime.clock,
    {
      code: input.code,
      clientId: input.client_id,
      redirectUri: input.redirect_uri,
      codeVerifier: input.code_verifier,
    },
    (actor) => identify?.(actor),
  );

/** `grant_type=refresh_token` (D30); errors are `OAuthError`s. */
const oauthRefreshTokenGrant: OperationHandler<Operations['oauthRefreshTokenGrant']> = async (
  input,
  { runtime, identify },
) =>
  refreshGrant(
    runtime.store,
    runtime.clock,
    { refreshToken: input.refresh_token, clientId: input.client_id },
    (actor) => identify?.(actor),
  );

/** RFC 7009 revocation (D30): the presented token's grant; errors are `OAuthError`s. */
const oauthRevokeToken: OperationHandler<Operations['oauthRevokeToken']> = async (input, { runtime, identify }) =>
  revokePresentedToken(
    runtime.store,
    runtime.clock,
    { token: input.token, tokenTypeHint: input.token_type_hint, clientId: input.client_id },
    (actor) => identify?.(actor),
  );

/** Dynamic client registration (RFC 7591, D30): a public client; errors are `OAuthError`s. */
const registerOAuthClient: OperationHandler<Operations['registerOAuthClient']> = async (input, { runtime }) =>
  registerPublicClient(runtime, input.metadata);

/** Every handler of the tokens module's internal operations. */
export const tokensInternalHandlers = {
  registerOAuthClient,
  approveOAuthConsent,
  denyOAuthConsent,
  oauthAuthorizationCodeGrant,
  oauthRefreshTokenGrant,
  oauthRevokeToken,
} satisfies InternalHandlersOf<typeof tokensModule>;
