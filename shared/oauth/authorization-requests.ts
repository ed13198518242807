import { randomUUID } from 'node:crypto';
import { ABILITIES, type Ability } from '../catalogues/abilities.js';
import { newTokenSecret, sha256 } from '../auth/principal.js';
import { MINUTE_MS, type Clock } from '../clock.js';
import { newUlid } from '../ids.js';
import { oauthAuthorizationCodeStore } from '../store/oauth-authorization-codes.js';
import { oauthAuthorizationRequestStore } from '../store/oauth-authorization-requests.js';
import type { Store } from '../store/store.js';
import type { AuthorizationRequest } from './records.js';

/**
 * Pending authorization requests (DESIGN D30): validated by `/oauth/authorize`, then refused or approved on
 * the dashboard's consent page; approval stores the single-use authorization code bound to a PKCE challenge.
 */

/** An authorization code is valid this long (milliseconds): 60 seconds. */
export const AUTHORIZATION_CODE_LIFETIME_MS = MINUTE_MS;
/** A validated authorization request waits this long for the member's consent (milliseconds): 10 minutes. */
const AUTHORIZATION_REQUEST_LIFETIME_MS = 10 * MINUTE_MS;

/**
 * Stores a validated authorization request for {@link AUTHORIZATION_REQUEST_LIFETIME_MS}; returns its id (a random
 * UUID, the consent page's parameter).
 */
export async function saveAuthorizationRequest(
  store: Store,
  clock: Clock,
  input: Omit<AuthorizationRequest, 'id' | 'expires_at_ms'>,
): Promise<AuthorizationRequest> {
  const expiresAtMs = clock.nowMs() + AUTHORIZATION_REQUEST_LIFETIME_MS;
  const request: AuthorizationRequest = { ...input, id: randomUUID(), expires_at_ms: expiresAtMs };
  await oauthAuthorizationRequestStore.save(store, request);
  return request;
}

/** The pending authorization request `requestId`, or null when unknown, used or expired. */
export async function findAuthorizationRequest(
  store: Store,
  clock: Clock,
  requestId: string,
): Promise<AuthorizationRequest | null> {
  if (!/^[0-9a-f-]{36}$/.test(requestId)) return null;
  const request = await oauthAuthorizationRequestStore.find(store, requestId);
  return request && request.expires_at_ms > clock.nowMs() ? request : null;
}

/** The requested abilities a member holds team-wide, in catalogue order: what a consent can grant (DESIGN D30). */
export function grantableAbilities(
  held: ReadonlySet<Ability>,
  request: Pick<AuthorizationRequest, 'scope'>,
): Ability[] {
  const requested = new Set<string>(request.scope);
  return ABILITIES.map((ability) => ability.value).filter((ability) => requested.has(ability) && held.has(ability));
}

/** The `redirect_uri` with `params` added to its query (RFC 6749 §4.1.2). */
export function redirectWith(redirectUri: string, params: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params))
    if (value !== null && value !== undefined) url.searchParams.set(name, value);
  return url.href;
}

/**
 * The member refused (or the request was already answered): consumes the request and returns the
 * client's `redirect_uri` with `error=access_denied` and the `state`.
 */
export async function denyAuthorizationRequest(store: Store, request: AuthorizationRequest): Promise<string> {
  await oauthAuthorizationRequestStore.consume(store, request.id);
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
  if (!(await oauthAuthorizationRequestStore.consume(store, request.id)))
    return redirectWith(request.redirect_uri, { error: 'access_denied', state: request.state });
  const nowMs = clock.nowMs();
  const id = newUlid(nowMs);
  const secret = newTokenSecret();
  const expiresAtMs = nowMs + AUTHORIZATION_CODE_LIFETIME_MS;
  await oauthAuthorizationCodeStore.create(store, {
    id,
    secret_sha256: sha256(secret).toString('hex'),
    client_id: request.client_id,
    client_name:
      request.client_host && request.client_name
        ? `${request.client_name} (${request.client_host})`
        : (request.client_host ?? request.client_name),
    redirect_uri: request.redirect_uri,
    code_challenge: request.code_challenge,
    resource: request.resource,
    team_id: consent.teamId,
    member_id: consent.memberId,
    abilities: [...consent.abilities],
    project_ids: [...consent.projectIds],
    expires_at_ms: expiresAtMs,
  });
  return redirectWith(request.redirect_uri, { code: `oac_${id}_${secret}`, state: request.state });
}
