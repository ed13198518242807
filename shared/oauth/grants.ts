import { createHash, timingSafeEqual } from 'node:crypto';
import { isAbility, type Ability } from '../catalogues/abilities.js';
import { newTokenSecret, sha256 } from '../auth/principal.js';
import { DAY_MS, HOUR_MS, isoTime, type Clock } from '../clock.js';
import { abilitiesInProjects, memberAbilities } from '../domain/team-members/abilities.js';
import { findMember } from '../domain/team-members/records.js';
import { mintToken, revokeOAuthGrant, revokeTokens } from '../domain/tokens/repository.js';
import { lockdownGuard } from '../domain/billing/lockdown.js';
import { ProblemError } from '../errors.js';
import { newUlid } from '../ids.js';
import { oauthAuthorizationCodeStore } from '../store/oauth-authorization-codes.js';
import { oauthGrantStore } from '../store/oauth-grants.js';
import { oauthRefreshTokenStore } from '../store/oauth-refresh-tokens.js';
import type { Store } from '../store/store.js';
import { liveGrantOf } from './incremental-consent.js';

/**
 * The token endpoint's side of the OAuth authorization server (DESIGN D30): exchanging an authorization code
 * for a grant — one family of rotating refresh tokens — that issues ordinary D2 access tokens expiring after
 * an hour. Codes and refresh tokens are stored as SHA-256 hashes only; the client holds `<prefix>_<ULID>_<secret>`.
 */

/** An access token issued to an OAuth client works this long (milliseconds): 1 hour. */
export const ACCESS_TOKEN_LIFETIME_MS = HOUR_MS;
/** A refresh token is valid this long after it was issued (milliseconds): 30 days. */
export const REFRESH_TOKEN_LIFETIME_MS = 30 * DAY_MS;

const CODE_PATTERN = /^oac_([0-9A-HJKMNP-TV-Z]{26})_([0-9A-Za-z]{40,64})$/;
/** A refresh token as the client holds it: `ort_<ULID>_<secret>`. */
export const REFRESH_PATTERN = /^ort_([0-9A-HJKMNP-TV-Z]{26})_([0-9A-Za-z]{40,64})$/;
/** RFC 7636 §4.1: 43–128 unreserved characters. */
const VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

/**
 * An OAuth error of RFC 6749 §5.2 (token endpoint) or RFC 7591 §3.2.2 (registration): the `error` code, a description
 * and the HTTP status the endpoint answers. A ProblemError (AUTHENTICATION_REQUIRED for `invalid_client`, else
 * VALIDATION_FAILED) so the pipeline records it as a refusal (DESIGN D35).
 */
export class OAuthError extends ProblemError {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly oauthStatus = 400,
  ) {
    super(error === 'invalid_client' ? 'AUTHENTICATION_REQUIRED' : 'VALIDATION_FAILED', description);
    this.name = 'OAuthError';
  }
}

/** The token endpoint's successful answer (RFC 6749 §5.1). */
export interface IssuedTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** Constant-time comparison of a presented secret with a stored SHA-256 (hex); false for a missing hash. */
function matchesHash(secret: string, storedHex: unknown): boolean {
  const expected =
    typeof storedHex === 'string' && storedHex.length === 64 ? Buffer.from(storedHex, 'hex') : Buffer.alloc(32);
  return timingSafeEqual(sha256(secret), expected) && typeof storedHex === 'string';
}

/** RFC 7636 §4.6 `S256`: BASE64URL(SHA256(verifier)) equals the challenge (constant time). */
function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

/**
 * Issues an access token (an ordinary D2 token bound to the member, expiring after
 * {@link ACCESS_TOKEN_LIFETIME_MS}) and a new refresh token of grant `grant`, and records the token on the
 * grant. Returns the token endpoint's answer and the access token's id.
 */
async function issueTokens(
  store: Store,
  clock: Clock,
  grant: { id: string; team_id: string; member_id: string; client_name: string | null; client_id: string },
  abilities: readonly Ability[],
  projectIds: readonly string[],
): Promise<{ tokens: IssuedTokens; accessTokenId: string }> {
  const nowMs = clock.nowMs();
  let access: Awaited<ReturnType<typeof mintToken>>;
  try {
    access = await mintToken(store, clock, {
      teamId: grant.team_id,
      abilities,
      projectIds,
      name: `OAuth grant: ${(grant.client_name ?? grant.client_id).slice(0, 80)}`,
      memberId: grant.member_id,
      expiresAtMs: nowMs + ACCESS_TOKEN_LIFETIME_MS,
      oauthGrantId: grant.id,
    });
  } catch (error) {
    if (error instanceof ProblemError && ['CONFLICT', 'NOT_FOUND'].includes(error.code))
      throw invalidGrant('The team member or team of this grant is no longer active.');
    throw error;
  }
  const refreshId = newUlid(nowMs);
  const refreshSecret = newTokenSecret();
  await oauthRefreshTokenStore.create(store, {
    id: refreshId,
    grant_id: grant.id,
    client_id: grant.client_id,
    secret_sha256: sha256(refreshSecret).toString('hex'),
    expires_at_ms: nowMs + REFRESH_TOKEN_LIFETIME_MS,
  });
  await oauthGrantStore.addAccessToken(store, grant.id, access.id);
  return {
    tokens: {
      access_token: access.token,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_LIFETIME_MS / 1000,
      refresh_token: `ort_${refreshId}_${refreshSecret}`,
      scope: access.abilities.join(' '),
    },
    accessTokenId: access.id,
  };
}

/**
 * The requested abilities member `memberId` still holds in `projectIds` (all of the team's when empty): a grant never
 * outlives a demotion. Errors: {@link OAuthError} `invalid_grant` when the member is no longer active.
 */
async function abilitiesStillHeld(
  store: Store,
  teamId: string,
  memberId: string,
  requested: readonly string[],
  projectIds: readonly string[],
): Promise<Ability[]> {
  const member = await findMember(store, teamId, memberId);
  if (!member || member.status !== 'active') throw invalidGrant('The team member of this grant is no longer active.');
  const held = abilitiesInProjects(await memberAbilities(store, teamId, member), projectIds);
  return requested.filter((ability): ability is Ability => isAbility(ability) && held.has(ability));
}

/**
 * A spent refresh token presented again (RFC 9700 §4.14.2): the whole grant is revoked. Always throws `invalid_grant`.
 */
async function refusedReuse(store: Store, clock: Clock, grantId: string): Promise<never> {
  await revokeOAuthGrant(store, clock, grantId);
  throw invalidGrant('The refresh token has already been used; the grant is revoked. Authorize again.');
}

/**
 * Issuing a token is a creator write (DESIGN D20): refused with BILLING_LOCKED (402) while the team is locked, as
 * minting one on the dashboard is. Checked after a reuse is detected; a refresh token is not spent, so it works again
 * once the invoices are paid.
 */
async function refuseWhenLocked(store: Store, teamId: string): Promise<void> {
  await lockdownGuard(teamId).verify(store);
}

/**
 * Names the team (and the access token issued) for the pipeline's activity entry (DESIGN D35): called once the
 * presented code or refresh token is known to be the caller's, and again once an access token was issued.
 */
type IdentifyGrant = (actor: { teamId: string; tokenId?: string | null }) => void;

/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.5; DESIGN D30): the code is used up on its
 * first presentation (a second one also revokes what the first issued), must be unexpired (60 s), issued
 * to `clientId` for `redirectUri`, and its PKCE challenge must match `codeVerifier`. Starts a grant, or adds the
 * code's abilities to the client's live grant to the member (incremental consent), and issues its tokens. Errors:
 * {@link OAuthError} `invalid_grant` or `invalid_request`.
 */
export async function exchangeAuthorizationCode(
  store: Store,
  clock: Clock,
  input: { code: string; clientId: string; redirectUri: string | undefined; codeVerifier: string | undefined },
  identify: IdentifyGrant,
): Promise<IssuedTokens> {
  if (!input.codeVerifier || !VERIFIER_PATTERN.test(input.codeVerifier))
    throw new OAuthError(
      'invalid_request',
      'code_verifier is required: 43 to 128 characters of [A-Za-z0-9-._~] (RFC 7636).',
    );
  const parts = CODE_PATTERN.exec(input.code);
  const code = parts ? await oauthAuthorizationCodeStore.find(store, parts[1]) : undefined;
  if (!parts || !code || !matchesHash(parts[2], code.secret_sha256))
    throw invalidGrant('The authorization code is not valid.');
  identify({ teamId: code.team_id });
  const nowMs = clock.nowMs();
  if (!(await oauthAuthorizationCodeStore.markUsed(store, parts[1], isoTime(nowMs)))) {
    // RFC 6749 §4.1.2: a code presented twice revokes the tokens issued from it. The mark tells a first
    // presentation still issuing (no grant yet) to revoke its own grant once it has issued.
    const grantId = await oauthAuthorizationCodeStore.markReused(store, parts[1], isoTime(nowMs));
    if (grantId !== undefined) await revokeOAuthGrant(store, clock, grantId);
    throw invalidGrant('The authorization code has already been used.');
  }
  if (code.expires_at_ms <= nowMs)
    throw invalidGrant('The authorization code has expired (codes are valid for 60 seconds).');
  await refuseWhenLocked(store, code.team_id);
  if (code.client_id !== input.clientId) throw invalidGrant('The authorization code was issued to another client.');
  if (code.redirect_uri !== input.redirectUri)
    throw invalidGrant('redirect_uri does not match the one of the authorization request.');
  if (!pkceMatches(input.codeVerifier, code.code_challenge))
    throw invalidGrant('The PKCE code_verifier does not match the code_challenge.');
  const projectIds = code.project_ids;
  // Incremental consent: the client's live grant to this member gains the new abilities and keeps its own.
  const live = await liveGrantOf(store, {
    teamId: code.team_id,
    memberId: code.member_id,
    clientId: code.client_id,
    projectIds,
  });
  const grant = {
    id: live?.id ?? newUlid(nowMs),
    team_id: code.team_id,
    member_id: code.member_id,
    client_id: code.client_id,
    client_name: code.client_name ?? null,
  };
  const requested = [...new Set([...(live?.abilities ?? []), ...code.abilities])];
  const abilities = await abilitiesStillHeld(store, code.team_id, code.member_id, requested, projectIds);
  if (live) await oauthGrantStore.replaceAbilities(store, grant.id, abilities);
  else
    await oauthGrantStore.create(store, {
      ...grant,
      abilities,
      project_ids: projectIds,
      resource: code.resource,
      created_at: isoTime(nowMs),
    });
  await oauthAuthorizationCodeStore.recordGrant(store, parts[1], grant.id);
  const { tokens, accessTokenId } = await issueTokens(store, clock, grant, abilities, projectIds);
  identify({ teamId: grant.team_id, tokenId: accessTokenId });
  // As on a refresh, the new access token replaces the grant's earlier ones.
  if (live) await revokeTokens(store, clock, grant.team_id, live.accessTokenIds);
  if (await oauthAuthorizationCodeStore.wasReused(store, parts[1])) {
    await revokeOAuthGrant(store, clock, grant.id);
    throw invalidGrant('The authorization code has already been used.');
  }
  return tokens;
}

/**
 * `grant_type=refresh_token` (RFC 6749 §6, OAuth 2.1 §4.3.1; DESIGN D30): the refresh token is rotated — used up and
 * replaced — and a new access token issued, holding the grant's abilities still held by the member; it replaces the
 * grant's earlier access tokens, which are revoked. Presenting a spent refresh token revokes the whole grant: every
 * refresh token and access token of the family. Errors: {@link OAuthError} `invalid_grant`.
 */
export async function refreshGrant(
  store: Store,
  clock: Clock,
  input: { refreshToken: string; clientId: string },
  identify: IdentifyGrant,
): Promise<IssuedTokens> {
  const parts = REFRESH_PATTERN.exec(input.refreshToken);
  const refresh = parts ? await oauthRefreshTokenStore.find(store, parts[1]) : undefined;
  if (!parts || !refresh || !matchesHash(parts[2], refresh.secret_sha256))
    throw invalidGrant('The refresh token is not valid.');
  if (refresh.client_id !== input.clientId) throw invalidGrant('The refresh token was issued to another client.');
  const grantId = refresh.grant_id;
  const grant = await oauthGrantStore.find(store, grantId);
  if (grant) identify({ teamId: grant.team_id });
  if (refresh.spent_at !== undefined) await refusedReuse(store, clock, grantId);
  // Before the token is spent: it works again once the invoices are paid.
  if (grant) await refuseWhenLocked(store, grant.team_id);
  const nowMs = clock.nowMs();
  if (!(await oauthRefreshTokenStore.markSpent(store, parts[1], isoTime(nowMs))))
    await refusedReuse(store, clock, grantId);
  if (refresh.expires_at_ms <= nowMs) throw invalidGrant('The refresh token has expired (30 days). Authorize again.');
  const current = await oauthGrantStore.find(store, grantId);
  if (!grant || !current || current.revoked_at) throw invalidGrant('The grant has been revoked. Authorize again.');
  const abilities = await abilitiesStillHeld(store, grant.team_id, grant.member_id, grant.abilities, grant.project_ids);
  const { tokens, accessTokenId } = await issueTokens(
    store,
    clock,
    {
      id: grantId,
      team_id: grant.team_id,
      member_id: grant.member_id,
      client_id: grant.client_id,
      client_name: grant.client_name ?? null,
    },
    abilities,
    grant.project_ids,
  );
  identify({ teamId: grant.team_id, tokenId: accessTokenId });
  // The new access token replaces the earlier ones: a grant is one live token (and one row on the dashboard).
  await revokeTokens(store, clock, grant.team_id, grant.access_token_ids ?? []);
  return tokens;
}
