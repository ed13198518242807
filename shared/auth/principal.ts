import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import baseX from 'base-x';
import type { Ability } from '../catalogues/abilities.js';
import { systemClock } from '../clock.js';
import { ProblemError } from '../errors.js';
import { parseTokenCredential } from '../domain/tokens/record.js';
import { tokenCredentials } from '../store/tokens/authentication.js';
import type { Store } from '../store/store.js';
import type { Item } from '../store/requests.js';

const base62 = baseX('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz');
/** `svc_live_<ULID>_<base62 secret of ≥ 32 random bytes>` (interface "Bearer tokens" 2, DESIGN D2). */
const TOKEN_PATTERN = /^svc_live_([0-9A-HJKMNP-TV-Z]{26})_([0-9A-Za-z]{40,64})$/;
/** A bearer token's id: a ULID (the `<id>` of {@link TOKEN_PATTERN}). */
const TOKEN_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
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
  /**
   * The subscriber acting in the portal (DESIGN D27); absent or null otherwise. When set, the principal may
   * call only the portal's operations (`authorizeOperation`) and sees only this subscriber's subscriber,
   * subscriptions and payments: any other id is NOT_FOUND, as a foreign one (`canAccessSubscriberData`).
   */
  subscriberId?: string | null;
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
  /** The OAuth grant that issued the bearer token (DESIGN D30); absent or null for other tokens and principals. */
  oauthGrantId?: string | null;
  /** True for the service's operator (`operatorPrincipal`, shared/auth/operator.ts); absent otherwise. */
  operator?: boolean;
}

/** The prefix of {@link Principal.tokenId} for a team member acting in the dashboard. */
const MEMBER_ACTOR_PREFIX = 'member:';

/** `member:<uuid>`: the {@link Principal.tokenId} of team member `memberId` acting in the dashboard (DESIGN D21). */
function memberActorId(memberId: string): string {
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
export function memberPrincipal(input: {
  teamId: string;
  memberId: string;
  abilities: Iterable<Ability>;
  team?: Principal['team'];
}): Principal {
  return {
    tokenId: memberActorId(input.memberId),
    memberId: input.memberId,
    teamId: input.teamId,
    abilities: new Set(input.abilities),
    projectIds: null,
    team: input.team ?? null,
  };
}

/**
 * Who an activity entry names (DESIGN D5, D21, D27): the token, or for a dashboard action the team member;
 * a portal or join-page action names neither (its entry's surface is `portal`; the subscriber is the object acted on).
 */
export function actorOf(principal: Principal): { token_id: string | null; member_id: string | null } {
  if (principal.memberId) return { token_id: null, member_id: principal.memberId };
  // Only a bearer token's id (a ULID) names a token; a portal subscriber, a join page or the operator names none.
  return { token_id: TOKEN_ID.test(principal.tokenId) ? principal.tokenId : null, member_id: null };
}

/** SHA-256 of a UTF-8 string (token secrets are stored only as this hash, DESIGN D2). */
export function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/**
 * The lower-case hex SHA-256 of an e-mail address as compared (trimmed, lower case): the key of the address's lookup
 * items (team members' uniqueness, subscribers' sign-in links), so no key holds an address.
 */
export function emailSha256(email: string): string {
  return sha256(email.trim().toLowerCase()).toString('hex');
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
 * SHA-256 (hex) of 32 random bytes drawn at start-up: what a presented secret is compared with when the
 * token id names no token, so an unknown id costs the same hash and comparison as a wrong secret and
 * the answer's timing says nothing about which ids exist (DESIGN D2). No secret is known
 * to hash to it.
 */
const UNKNOWN_TOKEN_SECRET_SHA256 = createHash('sha256').update(randomBytes(32)).digest('hex');

/**
 * Compares a presented token secret with a stored SHA-256 (64 hex characters): hashes the secret,
 * decodes the stored hex and compares the two 32-byte digests in constant time (`timingSafeEqual`).
 * The one secret check of every authentication (DESIGN D2); never throws for a 64-hex-character hash.
 */
export function secretMatchesHash(secret: string, storedSha256Hex: string): boolean {
  return timingSafeEqual(sha256(secret), Buffer.from(storedSha256Hex, 'hex'));
}

/** A secret check with the signature of {@link secretMatchesHash} (tests inject a spy to count the work). */
export type SecretCheck = (secret: string, storedSha256Hex: string) => boolean;

/** The outcome of {@link checkToken}. */
export type TokenCheck =
  | {
      ok: true;
      principal: Principal;
      /** The token's `last_used_at` stamp (ISO 8601), absent until first stamped. */ lastUsedAt: string | undefined;
    }
  | {
      ok: false;
      /** AUTHENTICATION_REQUIRED with `WWW-Authenticate: Bearer`. */
      error: ProblemError;
      /**
       * The token, when the presented secret matched it but it may not be used (revoked, or its team
       * deleted): the caller provably holds it, so the refusal can be attributed to its team (DESIGN D5).
       * Null for an unknown id and for a wrong secret alike, which get the same error after the same work.
       */
      holder: { id: string; teamId: string } | null;
    };

/**
 * Checks `secret` against the token item; the secret check runs once on every path (unknown id: a hash no secret
 * matches), so unknown id and wrong secret cost and read the same. AUTHENTICATION_REQUIRED (interface "Bearer tokens"
 * 6) for those, then revoked, deleted team (D19) or expired (`expires_at_ms` <= `nowMs`; OAuth tokens only, D30).
 */
export function checkToken(
  item: Item | undefined,
  secret: string,
  check: SecretCheck = secretMatchesHash,
  nowMs: number = systemClock.nowMs(),
): TokenCheck {
  const stored = item ? parseTokenCredential(item) : undefined;
  const matches = check(secret, stored ? stored.secret_sha256 : UNKNOWN_TOKEN_SECRET_SHA256);
  if (!matches || !stored) return { ok: false, error: unauthenticated('The bearer token is not valid.'), holder: null };
  const holder = { id: stored.id, teamId: stored.team_id };
  if (stored.revoked_at) return { ok: false, error: unauthenticated('The bearer token has been revoked.'), holder };
  // Set on every token of a deleted team (DESIGN D19); unlike a revocation it leaves the token's
  // abilities to the webhook fan-out, so the team's final events still reach its endpoints.
  if (stored.team_deleted_at)
    return { ok: false, error: unauthenticated('The bearer token’s team has been deleted.'), holder };
  if (stored.expires_at_ms !== undefined && stored.expires_at_ms <= nowMs)
    return { ok: false, error: unauthenticated('The bearer token has expired.'), holder };
  const projectIds = stored.scopes
    .filter((scope) => scope.startsWith('scope:project:'))
    .map((scope) => scope.slice('scope:project:'.length));
  return {
    ok: true,
    principal: {
      tokenId: stored.id,
      teamId: stored.team_id,
      abilities: new Set(stored.abilities),
      projectIds: projectIds.length ? projectIds : null,
      team: stored.team_snapshot ?? null,
      oauthGrantId: stored.oauth_grant_id ?? null,
    },
    lastUsedAt: stored.last_used_at ?? undefined,
  };
}

/**
 * {@link checkToken} that returns the {@link Principal} and throws its AUTHENTICATION_REQUIRED
 * (with `WWW-Authenticate: Bearer`) for an unknown, wrong, revoked or deleted team's token.
 */
function verifyToken(item: Item | undefined, secret: string): Principal {
  const checked = checkToken(item, secret);
  if (!checked.ok) throw checked.error;
  return checked.principal;
}

/**
 * Resolves the `Authorization` header to a {@link Principal} ({@link parseBearer} + one strongly
 * consistent GetItem + {@link verifyToken}), on every call, so a revocation applies to the next call
 * (interface "Bearer tokens" 6). Throws AUTHENTICATION_REQUIRED. One DynamoDB request.
 */
export async function authenticate(store: Store, authorization: string | undefined): Promise<Principal> {
  const { tokenId, secret } = parseBearer(authorization);
  return verifyToken(await tokenCredentials.read(store, tokenId), secret);
}
