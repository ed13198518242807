import type { Ability } from '../../catalogues/abilities.js';
import { isAbility } from '../../catalogues/abilities.js';
import type { Clock } from '../../clock.js';
import { isoTime } from '../../clock.js';
import { bearerString, newTokenSecret, sha256, type Principal } from '../../auth/principal.js';
import { ProblemError } from '../../errors.js';
import { newUlid } from '../../ids.js';
import type { Store } from '../../store/store.js';
import type { Page } from '../../store/pages.js';
import { tokenStore } from '../../store/tokens/tokens.js';
import { requireProjectsOfTeam } from '../projects/repository.js';
import { getTeam } from '../teams/repository.js';
import type { Team } from '../teams/schema.js';
import type { StoredToken } from './record.js';
import type { Token } from './schema.js';
import { housekeepingTtl } from '../../store/ttl.js';

/** A token as stored: the public fields plus its team. */
export type TokenRecord = Token & { team_id: string };

function toToken(stored: StoredToken): TokenRecord {
  return {
    id: stored.id,
    team_id: stored.team_id,
    name: stored.name ?? null,
    abilities: stored.abilities,
    scopes: stored.scopes,
    created_at: stored.created_at,
    revoked_at: stored.revoked_at ?? null,
    last_used_at: stored.last_used_at ?? null,
    member_id: stored.member_id ?? null,
    expires_at: stored.expires_at_ms === undefined ? null : isoTime(stored.expires_at_ms),
  };
}

/**
 * Mints a token (D2): only the secret's SHA-256 is stored, `token` is returned once. `issuer` cannot grant what it
 * lacks; `memberId` (D19) requires an active member; `expiresAtMs` (epoch ms, D30). Errors: NOT_FOUND (team or
 * project), TOKEN_MISSING_ABILITY, VALIDATION_FAILED, CONFLICT (member).
 */
export async function mintToken(
  store: Store,
  clock: Clock,
  input: {
    teamId: string;
    abilities: readonly string[];
    projectIds?: readonly string[];
    name?: string | null;
    issuer?: Principal;
    team?: Pick<Team, 'id' | 'name' | 'created_at'> & { deleted_at?: string | null };
    memberId?: string | null;
    expiresAtMs?: number;
    oauthGrantId?: string;
  },
): Promise<TokenRecord & { token: string }> {
  if (input.team && input.team.id !== input.teamId) throw new Error('mintToken: team snapshot does not match teamId');
  const unknown = input.abilities.filter((ability) => !isAbility(ability));
  if (unknown.length) {
    throw new ProblemError('VALIDATION_FAILED', `Unknown abilities: ${unknown.join(', ')}`, {
      errors: unknown.map((ability) => ({
        path: 'abilities',
        message: `${ability} is not in service://enums/ability`,
      })),
    });
  }
  const abilities = [...new Set(input.abilities)] as Ability[];
  const projectIds = [...new Set(input.projectIds ?? [])];
  if (input.issuer) {
    const issuer = input.issuer;
    const missing = abilities.filter((ability) => !issuer.abilities.has(ability));
    if (missing.length)
      throw new ProblemError(
        'TOKEN_MISSING_ABILITY',
        `A token can only grant abilities it holds; missing: ${missing.join(', ')}.`,
      );
    if (issuer.projectIds) {
      const outside =
        projectIds.length === 0 ? ['(all projects)'] : projectIds.filter((id) => !issuer.projectIds!.includes(id));
      if (outside.length)
        throw new ProblemError(
          'TOKEN_MISSING_ABILITY',
          `A project-scoped token can only grant its own projects; outside its scope: ${outside.join(', ')}.`,
        );
    }
  }
  const team = input.team ?? (await getTeam(store, input.teamId));
  if (team.deleted_at) throw new ProblemError('NOT_FOUND', `No team ${input.teamId}.`);
  // Another team's project is NOT_FOUND, exactly like a missing one
  await requireProjectsOfTeam(store, input.teamId, projectIds);
  const nowMs = clock.nowMs();
  const id = newUlid(nowMs);
  const secret = newTokenSecret();
  const record: TokenRecord = {
    id,
    team_id: input.teamId,
    name: input.name ?? null,
    abilities,
    scopes: [`scope:team:${input.teamId}`, ...projectIds.map((projectId) => `scope:project:${projectId}`)],
    created_at: isoTime(nowMs),
    revoked_at: null,
    last_used_at: null,
    member_id: input.memberId ?? null,
    expires_at: input.expiresAtMs === undefined ? null : isoTime(input.expiresAtMs),
  };
  const created = await tokenStore.create(
    store,
    {
      ...record,
      revoked_at: undefined,
      last_used_at: undefined,
      member_id: input.memberId ?? undefined,
      // Epoch milliseconds checked on every call; `expires_at` is the table's TTL attribute (epoch seconds).
      expires_at: input.expiresAtMs === undefined ? undefined : housekeepingTtl(input.expiresAtMs),
      expires_at_ms: input.expiresAtMs,
      oauth_grant_id: input.oauthGrantId,
      secret_sha256: sha256(secret).toString('hex'),
      team_snapshot: { id: team.id, name: team.name, created_at: team.created_at },
    },
    { activeMemberId: input.memberId ?? undefined },
  );
  if (!created)
    throw new ProblemError('CONFLICT', `Team member ${input.memberId} is no longer active; no token was minted.`);
  return { ...record, token: bearerString(id, secret) };
}

/**
 * Revokes a token of `teamId` (sets `revoked_at`). Throws NOT_FOUND when the token does not exist or belongs to
 * another team (no existence leak). Revoking twice keeps the first `revoked_at`. A token issued through OAuth also
 * revokes its grant (DESIGN D30), so the grant's refresh tokens stop working too.
 */
export async function revokeToken(store: Store, clock: Clock, teamId: string, tokenId: string): Promise<TokenRecord> {
  const token = await tokenStore.revoke(store, tokenId, teamId, isoTime(clock.nowMs()));
  if (!token) throw new ProblemError('NOT_FOUND', `No token ${tokenId}.`);
  if (token.oauth_grant_id !== undefined) await revokeOAuthGrant(store, clock, token.oauth_grant_id);
  return toToken(token);
}

/** The team of token `tokenId` (one BatchGetItem), or null when there is no such token: the operator CLI's lookup. */
export async function teamOfToken(store: Store, tokenId: string): Promise<string | null> {
  const [token] = await tokenStore.loadMany(store, [tokenId]);
  return token?.team_id ?? null;
}

/**
 * Revokes OAuth grant `grantId` and everything it issued (DESIGN D30): the grant (so its refresh tokens stop working)
 * and every access token of it, old and new, at once. A grant that is gone is ignored; running it twice is harmless.
 */
export async function revokeOAuthGrant(store: Store, clock: Clock, grantId: string): Promise<void> {
  const grant = await tokenStore.revokeOAuthGrant(store, grantId, isoTime(clock.nowMs()));
  if (grant) await revokeTokens(store, clock, grant.teamId, grant.accessTokenIds);
}

/** Revokes tokens `tokenIds` of team `teamId` at once (first `revoked_at` kept); ids that are gone are ignored. */
export async function revokeTokens(
  store: Store,
  clock: Clock,
  teamId: string,
  tokenIds: readonly string[],
): Promise<void> {
  const now = isoTime(clock.nowMs());
  await Promise.all(tokenIds.map((id) => tokenStore.revoke(store, id, teamId, now)));
}

/**
 * Lists a team's tokens (never secrets), oldest first, paged (DESIGN D12); revoked ones only with
 * `include_revoked` (a filtered page may hold fewer than `limit`). Errors: VALIDATION_FAILED for a cursor
 * of another list.
 */
export async function listTokens(
  store: Store,
  teamId: string,
  query: { limit: number; cursor?: string; include_revoked?: boolean },
): Promise<Page<TokenRecord>> {
  const page = await tokenStore.page(store, teamId, query);
  return { data: page.data.map(toToken), next_cursor: page.next_cursor };
}

/**
 * Revokes every live token minted on behalf of team member `memberId` (DESIGN D19: a removed member's
 * tokens stop working), through the team-tokens index; running it twice is harmless. The index is
 * eventually consistent, so a token minted in the same instant may be missed; minting checks the
 * member is active in the same transaction. Returns how many tokens it revoked.
 */
export async function revokeMemberTokens(
  store: Store,
  clock: Clock,
  teamId: string,
  memberId: string,
): Promise<number> {
  const now = isoTime(clock.nowMs());
  let revoked = 0;
  await tokenStore.forEach(store, teamId, { kind: 'live_of_member', memberId }, async (token) => {
    await tokenStore.stamp(store, teamId, token.id, 'revoked_at', now);
    revoked++;
  });
  return revoked;
}

/**
 * Marks a deleted team's tokens `team_deleted_at` (D19): authentication refuses them, but unlike revocation the fan-out
 * still sees their abilities (D6). `lastTokenId` (the caller's) is marked last so a crash leaves it able to retry.
 * Returns the count marked.
 */
export async function closeTeamTokens(
  store: Store,
  clock: Clock,
  teamId: string,
  lastTokenId?: string,
): Promise<number> {
  const now = isoTime(clock.nowMs());
  let marked = 0;
  await tokenStore.forEach(store, teamId, { kind: 'team_not_closed' }, async (token) => {
    if (token.id === lastTokenId) return;
    await tokenStore.stamp(store, teamId, token.id, 'team_deleted_at', now);
    marked++;
  });
  if (lastTokenId) {
    await tokenStore.stamp(store, teamId, lastTokenId, 'team_deleted_at', now);
    marked++;
  }
  return marked;
}

/**
 * The current abilities of each token in `tokenIds` (one BatchGetItem; DESIGN D6: endpoint owners are
 * re-read at fan-out). A revoked or missing token holds none.
 */
export async function currentTokenAbilities(
  store: Store,
  tokenIds: readonly string[],
): Promise<Map<string, ReadonlySet<Ability>>> {
  const unique = [...new Set(tokenIds)];
  const tokens = await tokenStore.loadMany(store, unique);
  const held = new Map<string, ReadonlySet<Ability>>(unique.map((tokenId) => [tokenId, new Set<Ability>()]));
  for (const token of tokens) if (!token.revoked_at) held.set(token.id, new Set(token.abilities));
  return held;
}
