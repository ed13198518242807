import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { isAbility, type Ability } from '../catalogues/abilities.js';
import { newTokenSecret, sha256 } from '../auth/principal.js';
import { isoTime, type Clock } from '../clock.js';
import { recordActivity } from '../domain/activity/repository.js';
import { abilitiesInProjects, memberAbilities } from '../domain/team-members/abilities.js';
import { findMember } from '../domain/team-members/records.js';
import { mintToken, revokeToken } from '../domain/tokens/repository.js';
import { ProblemError } from '../errors.js';
import { newUlid } from '../ids.js';
import { entity, keys } from '../store/keys.js';
import { ConditionFailedError, type Store } from '../store/store.js';
import type { Item } from '../store/requests.js';
import { parseStoredAuthorizationRequest, parseStoredClient, parseStoredCode, parseStoredGrant, parseStoredRefresh, type AuthorizationRequest } from './records.js';

/**
 * The tool server's OAuth 2.1 authorization server, its stored side (DESIGN D30): registered public
 * clients, pending authorization requests (validated by `/oauth/authorize`, approved on the dashboard's
 * consent page), single-use authorization codes bound to a PKCE challenge, and grants — one family of
 * rotating refresh tokens each — that issue ordinary D2 access tokens expiring after an hour. Codes and
 * refresh tokens are stored as SHA-256 hashes only; the client holds `<prefix>_<ULID>_<secret>`.
 */

/** An authorization code is valid this long (milliseconds): 60 seconds. */
export const AUTHORIZATION_CODE_LIFETIME_MS = 60 * 1000;
/** An access token issued to an OAuth client works this long (milliseconds): 1 hour. */
export const ACCESS_TOKEN_LIFETIME_MS = 60 * 60 * 1000;
/** A refresh token is valid this long after it was issued (milliseconds): 30 days. */
export const REFRESH_TOKEN_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;
/** A validated authorization request waits this long for the member's consent (milliseconds): 10 minutes. */
const AUTHORIZATION_REQUEST_LIFETIME_MS = 10 * 60 * 1000;
/** How long expired items outlive their expiry before DynamoDB's TTL may drop them, in seconds. */
const HOUSEKEEPING_SECONDS = 24 * 60 * 60;

const CODE_PATTERN = /^oac_([0-9A-HJKMNP-TV-Z]{26})_([0-9A-Za-z]{40,64})$/;
const REFRESH_PATTERN = /^ort_([0-9A-HJKMNP-TV-Z]{26})_([0-9A-Za-z]{40,64})$/;
/** RFC 7636 §4.1: 43–128 unreserved characters. */
const VERIFIER_PATTERN = /^[A-Za-z0-9._~-]{43,128}$/;

/** An OAuth error of RFC 6749 §5.2 (token endpoint) or RFC 7591 §3.2.2 (registration): the `error` code, a description and the HTTP status. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }
}

/** A registered client as stored (RFC 7591 metadata the service keeps). */
export interface OAuthClientRecord {
  client_id: string;
  client_id_issued_at: number;
  client_name: string | null;
  redirect_uris: string[];
  /** The registration response's other metadata, echoed as registered. */
  metadata: Record<string, unknown>;
}

/** True for a redirect URI a public client may register: `https`, or `http` on a loopback host (127.0.0.1, [::1], localhost); never with a fragment. */
export function isAllowedRedirectUri(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.hash || value.includes('#')) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
}

/**
 * Stores a new public client (RFC 7591; DESIGN D30) with a random `client_id`; the caller validated the
 * metadata. Clients are stored per client, not per team: they register before anyone signs in.
 */
export async function registerClient(store: Store, clock: Clock, input: { client_name?: string; redirect_uris: string[]; metadata: Record<string, unknown> }): Promise<OAuthClientRecord> {
  const record: OAuthClientRecord = {
    client_id: randomUUID(),
    client_id_issued_at: Math.floor(clock.nowMs() / 1000),
    client_name: input.client_name?.slice(0, 100) ?? null,
    redirect_uris: input.redirect_uris,
    metadata: input.metadata,
  };
  await store.put({ Item: { ...keys.oauthClient(record.client_id), entity: entity.oauthClient, ...record }, ConditionExpression: 'attribute_not_exists(pk)' });
  return record;
}

/** The registered client `clientId`, or null. */
export async function findClient(store: Store, clientId: string): Promise<OAuthClientRecord | null> {
  if (!/^[0-9a-f-]{36}$/.test(clientId)) return null;
  const item = await store.get(keys.oauthClient(clientId));
  if (!item) return null;
  const client = parseStoredClient(item);
  return { ...client, client_name: client.client_name ?? null, metadata: client.metadata ?? {} };
}

export type { AuthorizationRequest };

/** Stores a validated authorization request for {@link AUTHORIZATION_REQUEST_LIFETIME_MS}; returns its id (a random UUID, the consent page's parameter). */
export async function saveAuthorizationRequest(store: Store, clock: Clock, input: Omit<AuthorizationRequest, 'id' | 'expires_at_ms'>): Promise<AuthorizationRequest> {
  const expiresAtMs = clock.nowMs() + AUTHORIZATION_REQUEST_LIFETIME_MS;
  const request: AuthorizationRequest = { ...input, id: randomUUID(), expires_at_ms: expiresAtMs };
  await store.put({
    Item: { ...keys.oauthRequest(request.id), entity: entity.oauthRequest, ...request, expires_at: Math.floor(expiresAtMs / 1000) + HOUSEKEEPING_SECONDS },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
  return request;
}

/** The pending authorization request `requestId`, or null when unknown, used or expired. */
export async function findAuthorizationRequest(store: Store, clock: Clock, requestId: string): Promise<AuthorizationRequest | null> {
  if (!/^[0-9a-f-]{36}$/.test(requestId)) return null;
  const item = await store.get(keys.oauthRequest(requestId));
  const request = item ? parseStoredAuthorizationRequest(item) : null;
  return request && request.expires_at_ms > clock.nowMs() ? request : null;
}

/** Deletes a pending request once (consent or refusal); false when it was already gone (a second click). */
async function consumeAuthorizationRequest(store: Store, requestId: string): Promise<boolean> {
  try {
    await store.delete({ Key: keys.oauthRequest(requestId), ConditionExpression: 'attribute_exists(pk)' });
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}

/** The `redirect_uri` with `params` added to its query (RFC 6749 §4.1.2). */
export function redirectWith(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null && value !== undefined) url.searchParams.set(name, value);
  return url.href;
}

/**
 * The member refused (or the request was already answered): consumes the request and returns the
 * client's `redirect_uri` with `error=access_denied` and the `state`.
 */
export async function denyAuthorizationRequest(store: Store, request: AuthorizationRequest): Promise<string> {
  await consumeAuthorizationRequest(store, request.id);
  return redirectWith(request.redirect_uri, { error: 'access_denied', state: request.state });
}

/**
 * The member consented (DESIGN D30): consumes the request (once) and stores a single-use authorization
 * code (valid {@link AUTHORIZATION_CODE_LIFETIME_MS}) bound to the client, the redirect URI, the PKCE
 * challenge, the member and the abilities and projects consented to (the caller narrowed them to what the
 * member holds). Returns the client's `redirect_uri` with `code` and `state`, or with
 * `error=access_denied` when the request was already answered.
 */
export async function approveAuthorizationRequest(
  store: Store,
  clock: Clock,
  request: AuthorizationRequest,
  consent: { teamId: string; memberId: string; abilities: readonly Ability[]; projectIds: readonly string[] },
): Promise<string> {
  if (!(await consumeAuthorizationRequest(store, request.id))) return redirectWith(request.redirect_uri, { error: 'access_denied', state: request.state });
  const nowMs = clock.nowMs();
  const id = newUlid(nowMs);
  const secret = newTokenSecret();
  const expiresAtMs = nowMs + AUTHORIZATION_CODE_LIFETIME_MS;
  await store.put({
    Item: {
      ...keys.oauthCode(id),
      entity: entity.oauthCode,
      id,
      secret_sha256: sha256(secret).toString('hex'),
      client_id: request.client_id,
      client_name: request.client_name,
      redirect_uri: request.redirect_uri,
      code_challenge: request.code_challenge,
      resource: request.resource,
      team_id: consent.teamId,
      member_id: consent.memberId,
      abilities: [...consent.abilities],
      project_ids: [...consent.projectIds],
      expires_at_ms: expiresAtMs,
      expires_at: Math.floor(expiresAtMs / 1000) + HOUSEKEEPING_SECONDS,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
  return redirectWith(request.redirect_uri, { code: `oac_${id}_${secret}`, state: request.state });
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
  const expected = typeof storedHex === 'string' && storedHex.length === 64 ? Buffer.from(storedHex, 'hex') : Buffer.alloc(32);
  return timingSafeEqual(sha256(secret), expected) && typeof storedHex === 'string';
}

/** RFC 7636 §4.6 `S256`: BASE64URL(SHA256(verifier)) equals the challenge (constant time). */
function pkceMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

const invalidGrant = (description: string) => new OAuthError('invalid_grant', description);

/** Sets `revoked_at` on grant `grantId` (first time kept) and revokes every access token it issued; a grant that is gone is ignored. */
async function revokeGrantFamily(store: Store, clock: Clock, grantId: string): Promise<void> {
  const now = isoTime(clock.nowMs());
  let updated: Item | undefined;
  try {
    updated = await store.update({
      Key: keys.oauthGrant(grantId),
      UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':now': now },
      ReturnValues: 'ALL_NEW',
    });
  } catch (error) {
    if (error instanceof ConditionFailedError) return;
    throw error;
  }
  const grant = parseStoredGrant(updated!);
  for (const tokenId of grant.access_token_ids ?? []) {
    await revokeToken(store, clock, grant.team_id, tokenId).catch((error) => {
      if (!(error instanceof ProblemError && error.code === 'NOT_FOUND')) throw error;
    });
  }
}

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
    if (error instanceof ProblemError && ['CONFLICT', 'NOT_FOUND'].includes(error.code)) throw invalidGrant('The team member or team of this grant is no longer active.');
    throw error;
  }
  const refreshId = newUlid(nowMs);
  const refreshSecret = newTokenSecret();
  const refreshExpiresAtMs = nowMs + REFRESH_TOKEN_LIFETIME_MS;
  await store.put({
    Item: {
      ...keys.oauthRefresh(refreshId),
      entity: entity.oauthRefresh,
      id: refreshId,
      grant_id: grant.id,
      client_id: grant.client_id,
      secret_sha256: sha256(refreshSecret).toString('hex'),
      expires_at_ms: refreshExpiresAtMs,
      expires_at: Math.floor(refreshExpiresAtMs / 1000) + HOUSEKEEPING_SECONDS,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
  await store.update({
    Key: keys.oauthGrant(grant.id),
    UpdateExpression: 'SET access_token_ids = list_append(if_not_exists(access_token_ids, :empty), :token)',
    ExpressionAttributeValues: { ':empty': [], ':token': [access.id] },
  });
  return {
    tokens: { access_token: access.token, token_type: 'Bearer', expires_in: ACCESS_TOKEN_LIFETIME_MS / 1000, refresh_token: `ort_${refreshId}_${refreshSecret}`, scope: access.abilities.join(' ') },
    accessTokenId: access.id,
  };
}

/** Where a grant or refresh is recorded in the team's activity log. */
interface ActivityContext {
  requestId: string;
  startedMs: number;
}

/** Writes the activity entry of a grant or refresh (surface `rest`), naming the access token it issued. */
async function recordGrantActivity(store: Store, clock: Clock, teamId: string, accessTokenId: string, operation: string, context: ActivityContext): Promise<void> {
  await recordActivity(store, clock, teamId, {
    token_id: accessTokenId,
    surface: 'rest',
    operation,
    outcome: 'ok',
    status: 200,
    duration_ms: Math.max(0, Math.round(clock.nowMs() - context.startedMs)),
    request_id: context.requestId,
  });
}

/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3, RFC 7636 §4.5; DESIGN D30): the code is used up on its
 * first presentation (a second one also revokes what the first issued), must be unexpired (60 s), issued
 * to `clientId` for `redirectUri`, and its PKCE challenge must match `codeVerifier`. Starts a grant and
 * issues its first tokens. Errors: {@link OAuthError} `invalid_grant` or `invalid_request`.
 */
export async function exchangeAuthorizationCode(
  store: Store,
  clock: Clock,
  input: { code: string; clientId: string; redirectUri: string | undefined; codeVerifier: string | undefined },
  context: ActivityContext,
): Promise<IssuedTokens> {
  if (!input.codeVerifier || !VERIFIER_PATTERN.test(input.codeVerifier)) throw new OAuthError('invalid_request', 'code_verifier is required: 43 to 128 characters of [A-Za-z0-9-._~] (RFC 7636).');
  const parts = CODE_PATTERN.exec(input.code);
  const item = parts ? await store.get(keys.oauthCode(parts[1])) : undefined;
  const code = item ? parseStoredCode(item) : undefined;
  if (!parts || !code || !matchesHash(parts[2], code.secret_sha256)) throw invalidGrant('The authorization code is not valid.');
  const nowMs = clock.nowMs();
  try {
    await store.update({
      Key: keys.oauthCode(parts[1]),
      UpdateExpression: 'SET used_at = :now',
      ConditionExpression: 'attribute_not_exists(used_at)',
      ExpressionAttributeValues: { ':now': isoTime(nowMs) },
    });
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    // RFC 6749 §4.1.2: a code presented twice revokes the tokens issued from it.
    const spent = await store.get(keys.oauthCode(parts[1]));
    const grantId = spent ? parseStoredCode(spent).grant_id : undefined;
    if (grantId !== undefined) await revokeGrantFamily(store, clock, grantId);
    throw invalidGrant('The authorization code has already been used.');
  }
  if (code.expires_at_ms <= nowMs) throw invalidGrant('The authorization code has expired (codes are valid for 60 seconds).');
  if (code.client_id !== input.clientId) throw invalidGrant('The authorization code was issued to another client.');
  if (code.redirect_uri !== input.redirectUri) throw invalidGrant('redirect_uri does not match the one of the authorization request.');
  if (!pkceMatches(input.codeVerifier, code.code_challenge)) throw invalidGrant('The PKCE code_verifier does not match the code_challenge.');
  const grant = {
    id: newUlid(nowMs),
    team_id: code.team_id,
    member_id: code.member_id,
    client_id: code.client_id,
    client_name: code.client_name ?? null,
  };
  const abilities = code.abilities;
  const projectIds = code.project_ids;
  await store.put({
    Item: {
      ...keys.oauthGrant(grant.id),
      entity: entity.oauthGrant,
      ...grant,
      abilities,
      project_ids: projectIds,
      resource: code.resource,
      created_at: isoTime(nowMs),
      access_token_ids: [],
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  });
  await store.update({ Key: keys.oauthCode(parts[1]), UpdateExpression: 'SET grant_id = :grant', ExpressionAttributeValues: { ':grant': grant.id } });
  const { tokens, accessTokenId } = await issueTokens(store, clock, grant, abilities, projectIds);
  await recordGrantActivity(store, clock, grant.team_id, accessTokenId, 'oauthAuthorizationCodeGrant', context);
  return tokens;
}

/**
 * `grant_type=refresh_token` (RFC 6749 §6, OAuth 2.1 §4.3.1; DESIGN D30): the refresh token is rotated —
 * used up and replaced — and a new access token issued, holding the grant's abilities still held by the
 * member. Presenting a spent refresh token revokes the whole grant: every refresh token and access token of
 * the family. Errors: {@link OAuthError} `invalid_grant`.
 */
export async function refreshGrant(store: Store, clock: Clock, input: { refreshToken: string; clientId: string }, context: ActivityContext): Promise<IssuedTokens> {
  const parts = REFRESH_PATTERN.exec(input.refreshToken);
  const item = parts ? await store.get(keys.oauthRefresh(parts[1])) : undefined;
  const refresh = item ? parseStoredRefresh(item) : undefined;
  if (!parts || !refresh || !matchesHash(parts[2], refresh.secret_sha256)) throw invalidGrant('The refresh token is not valid.');
  if (refresh.client_id !== input.clientId) throw invalidGrant('The refresh token was issued to another client.');
  const grantId = refresh.grant_id;
  const nowMs = clock.nowMs();
  try {
    await store.update({
      Key: keys.oauthRefresh(parts[1]),
      UpdateExpression: 'SET spent_at = :now',
      ConditionExpression: 'attribute_not_exists(spent_at)',
      ExpressionAttributeValues: { ':now': isoTime(nowMs) },
    });
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    await revokeGrantFamily(store, clock, grantId);
    throw invalidGrant('The refresh token has already been used; the grant is revoked. Authorize again.');
  }
  if (refresh.expires_at_ms <= nowMs) throw invalidGrant('The refresh token has expired (30 days). Authorize again.');
  const grantItem = await store.get(keys.oauthGrant(grantId));
  const grant = grantItem ? parseStoredGrant(grantItem) : undefined;
  if (!grant || grant.revoked_at) throw invalidGrant('The grant has been revoked. Authorize again.');
  const member = await findMember(store, grant.team_id, grant.member_id);
  if (!member || member.status !== 'active') throw invalidGrant('The team member of this grant is no longer active.');
  const held = abilitiesInProjects(await memberAbilities(store, grant.team_id, member), grant.project_ids);
  const abilities = grant.abilities.filter((ability): ability is Ability => isAbility(ability) && held.has(ability));
  const { tokens, accessTokenId } = await issueTokens(
    store,
    clock,
    { id: grantId, team_id: grant.team_id, member_id: grant.member_id, client_id: grant.client_id, client_name: grant.client_name ?? null },
    abilities,
    grant.project_ids,
  );
  await recordGrantActivity(store, clock, grant.team_id, accessTokenId, 'oauthRefreshTokenGrant', context);
  return tokens;
}
