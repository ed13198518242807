import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import baseX from 'base-x';
import type { Ability } from '../catalogues/abilities.js';
import { ProblemError } from '../errors.js';
import { keys } from '../store/keys.js';
import type { Item, Store } from '../store/store.js';

const base62 = baseX('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz');
/** `svc_live_<ULID>_<base62 secret of ≥ 32 random bytes>` (interface "Bearer tokens" 2, DESIGN D2). */
const TOKEN_PATTERN = /^svc_live_([0-9A-HJKMNP-TV-Z]{26})_([0-9A-Za-z]{40,64})$/;
/** Random bytes in a token secret (DESIGN D2: at least 32). */
const TOKEN_SECRET_BYTES = 32;

/**
 * Who is calling: resolved from a bearer token on every request (interface "Bearer tokens"), or — in the
 * dashboard only — from a team member's session ({@link memberPrincipal}, DESIGN D21).
 */
export interface Principal {
  /**
   * The bearer token's id (a ULID). For a team member acting in the dashboard there is no token: it is
   * `member:<uuid>` ({@link memberActorId}), the key under which that member is the principal (an
   * endpoint's owner, an idempotency fingerprint); it never names a token item.
   */
  tokenId: string;
  /** The team member acting in the dashboard (DESIGN D21); absent or null for a bearer token. */
  memberId?: string | null;
  /** From `scope:team:<uuid>`, fixed at minting. Every read and write uses this team. */
  teamId: string;
  abilities: ReadonlySet<Ability>;
  /** From `scope:project:<uuid>` entries; null when the token is not narrowed to projects. */
  projectIds: readonly string[] | null;
  /**
   * The team as it was when the token was minted. Not kept up to date: a rename does not rewrite it,
   * so nothing shows its name (the smoke test reads the team item, DESIGN D19). Null for tokens minted
   * before snapshots existed.
   */
  team?: { id: string; name: string; created_at: string } | null;
}

/** The prefix of {@link Principal.tokenId} for a team member acting in the dashboard. */
const MEMBER_ACTOR_PREFIX = 'member:';

/** `member:<uuid>`: the {@link Principal.tokenId} of team member `memberId` acting in the dashboard (DESIGN D21). */
export function memberActorId(memberId: string): string {
  return `${MEMBER_ACTOR_PREFIX}${memberId}`;
}

/** The team member id inside a {@link memberActorId}, or null when `actorId` is a token id. */
export function memberIdOfActor(actorId: string): string | null {
  return actorId.startsWith(MEMBER_ACTOR_PREFIX) ? actorId.slice(MEMBER_ACTOR_PREFIX.length) : null;
}

/**
 * The principal of team member `memberId` signed in to the dashboard (DESIGN D21): the member's team-wide
 * abilities (roles and groups' roles, `memberAbilities`), not narrowed to projects. The dashboard runs
 * every operation with it, so authorization is the API's.
 */
export function memberPrincipal(input: { teamId: string; memberId: string; abilities: Iterable<Ability>; team?: Principal['team'] }): Principal {
  return { tokenId: memberActorId(input.memberId), memberId: input.memberId, teamId: input.teamId, abilities: new Set(input.abilities), projectIds: null, team: input.team ?? null };
}

/** Who an activity entry names (DESIGN D5, D21): the token, or for a dashboard action the team member. */
export function actorOf(principal: Principal): { token_id: string | null; member_id: string | null } {
  return principal.memberId ? { token_id: null, member_id: principal.memberId } : { token_id: principal.tokenId, member_id: null };
}

/** SHA-256 of a UTF-8 string (token secrets are stored only as this hash, DESIGN D2). */
export function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** A new token secret: 32 random bytes in base62 (44 characters) — DESIGN D2. */
export function newTokenSecret(): string {
  return base62.encode(randomBytes(TOKEN_SECRET_BYTES)).padStart(44, '0');
}

/** The bearer string of a token: `svc_live_<id>_<secret>`. */
export function bearerString(tokenId: string, secret: string): string {
  return `svc_live_${tokenId}_${secret}`;
}

const unauthenticated = (detail: string) =>
  new ProblemError('AUTHENTICATION_REQUIRED', detail, { headers: { 'WWW-Authenticate': 'Bearer realm="membership"' } });

/**
 * Parses `Authorization: Bearer svc_live_<id>_<secret>`. Throws AUTHENTICATION_REQUIRED (with
 * `WWW-Authenticate: Bearer`) when the header is missing or malformed. Cookies are never consulted.
 */
export function parseBearer(authorization: string | undefined): { tokenId: string; secret: string } {
  if (!authorization) throw unauthenticated('Send `Authorization: Bearer <token>`.');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw unauthenticated('The Authorization header must use the Bearer scheme.');
  const parts = TOKEN_PATTERN.exec(match[1]);
  if (!parts) throw unauthenticated('The bearer token is malformed; expected svc_live_<id>_<secret>.');
  return { tokenId: parts[1], secret: parts[2] };
}

/**
 * Checks a presented secret against the stored token item (read with a strongly consistent read)
 * in constant time and returns the {@link Principal}. Throws AUTHENTICATION_REQUIRED for an unknown
 * (item undefined), wrong or revoked token (interface "Bearer tokens" 6), and for a token of a deleted
 * team (`team_deleted_at`, DESIGN D19).
 */
export function verifyToken(item: Item | undefined, secret: string): Principal {
  const stored = item as
    | { id: string; team_id: string; abilities: Ability[]; scopes: string[]; revoked_at?: string | null; team_deleted_at?: string | null; secret_sha256: string; team_snapshot?: Principal['team'] }
    | undefined;
  const presented = sha256(secret);
  const expected = stored ? Buffer.from(stored.secret_sha256, 'hex') : Buffer.alloc(32);
  const matches = timingSafeEqual(presented, expected);
  if (!matches || !stored) throw unauthenticated('The bearer token is not valid.');
  if (stored.revoked_at) throw unauthenticated('The bearer token has been revoked.');
  // Set on every token of a deleted team (DESIGN D19); unlike a revocation it leaves the token's
  // abilities to the webhook fan-out, so the team's final events still reach its endpoints.
  if (stored.team_deleted_at) throw unauthenticated('The bearer token’s team has been deleted.');
  const projectIds = stored.scopes.filter((scope) => scope.startsWith('scope:project:')).map((scope) => scope.slice('scope:project:'.length));
  return {
    tokenId: stored.id,
    teamId: stored.team_id,
    abilities: new Set(stored.abilities),
    projectIds: projectIds.length ? projectIds : null,
    team: stored.team_snapshot ?? null,
  };
}

/**
 * Resolves the `Authorization` header to a {@link Principal} ({@link parseBearer} + one strongly
 * consistent GetItem + {@link verifyToken}), on every call, so a revocation applies to the next call
 * (interface "Bearer tokens" 6). Throws AUTHENTICATION_REQUIRED. One DynamoDB request.
 */
export async function authenticate(store: Store, authorization: string | undefined): Promise<Principal> {
  const { tokenId, secret } = parseBearer(authorization);
  return verifyToken(await store.get(keys.token(tokenId)), secret);
}
