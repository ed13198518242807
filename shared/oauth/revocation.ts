import { parseBearer, secretMatchesHash } from '../auth/principal.js';
import type { Clock } from '../clock.js';
import { parseTokenCredential } from '../domain/tokens/record.js';
import { revokeOAuthGrant } from '../domain/tokens/repository.js';
import { oauthGrantStore } from '../store/oauth-grants.js';
import { oauthRefreshTokenStore } from '../store/oauth-refresh-tokens.js';
import type { Store } from '../store/store.js';
import { tokenCredentials } from '../store/tokens/authentication.js';
import { OAuthError, REFRESH_PATTERN } from './grants.js';

/**
 * Token revocation (RFC 7009; DESIGN D30): a client ends its grant by presenting one of its tokens. Revoking either
 * kind revokes the whole grant — its refresh tokens and every access token it issued (§2.1: a refresh token's access
 * tokens go too; an access token takes its grant along, as revoking it on the dashboard does).
 */

/** The grant a presented refresh token (`ort_…`) or OAuth access token (`svc_live_…`) belongs to, or null. */
async function grantOfToken(store: Store, token: string, hint: string | undefined): Promise<string | null> {
  const refresh = REFRESH_PATTERN.exec(token);
  if (refresh) {
    const stored = await oauthRefreshTokenStore.find(store, refresh[1]);
    return stored && stored.secret_sha256.length === 64 && secretMatchesHash(refresh[2], stored.secret_sha256)
      ? stored.grant_id
      : null;
  }
  if (hint === 'refresh_token' && !token.startsWith('svc_live_')) return null;
  let bearer: { tokenId: string; secret: string };
  try {
    bearer = parseBearer(`Bearer ${token}`);
  } catch {
    return null;
  }
  const item = await tokenCredentials.read(store, bearer.tokenId);
  const stored = item ? parseTokenCredential(item) : undefined;
  return stored && secretMatchesHash(bearer.secret, stored.secret_sha256) ? (stored.oauth_grant_id ?? null) : null;
}

/**
 * Revokes the grant of `token` (RFC 7009 §2.1). A token that is unknown, malformed, already revoked or not issued
 * through OAuth (a static token) is ignored, as §2.2 wants: the endpoint answers 200 either way. Calls `identify` with
 * the grant's team once the token is known to be the caller's. Returns whether a grant was found. Errors:
 * {@link OAuthError} `invalid_client` when the token was issued to another client than `clientId`.
 */
export async function revokePresentedToken(
  store: Store,
  clock: Clock,
  input: { token: string; tokenTypeHint?: string; clientId?: string },
  identify: (actor: { teamId: string }) => void,
): Promise<{ revoked: boolean }> {
  const grantId = await grantOfToken(store, input.token, input.tokenTypeHint);
  const grant = grantId ? await oauthGrantStore.find(store, grantId) : undefined;
  if (!grantId || !grant) return { revoked: false };
  identify({ teamId: grant.team_id });
  if (input.clientId !== undefined && input.clientId !== grant.client_id)
    throw new OAuthError('invalid_client', 'The token was issued to another client.', 401);
  await revokeOAuthGrant(store, clock, grantId);
  return { revoked: true };
}
