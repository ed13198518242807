import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import baseX from 'base-x';
import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import type { Ability } from '../catalogues/abilities.js';
import { isAbility } from '../catalogues/abilities.js';
import type { Clock } from '../clock.js';
import { isoTime } from '../clock.js';
import { ProblemError } from '../errors.js';
import { newUlid } from '../ids.js';
import { keys } from '../store/keys.js';
import { getTeam } from '../teams.js';
import type { Store } from '../store/store.js';
import { decodeCursor, encodeCursor } from '../store/store.js';

const base62 = baseX('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz');
/** `svc_live_<ULID>_<base62 secret of ≥ 32 random bytes>` (interface "Bearer tokens" 2, DESIGN D2). */
const TOKEN_PATTERN = /^svc_live_([0-9A-HJKMNP-TV-Z]{26})_([0-9A-Za-z]{40,64})$/;

/** Who is calling: resolved from a bearer token on every request (interface "Bearer tokens"). */
export interface Principal {
  tokenId: string;
  /** From `scope:team:<uuid>`, fixed at minting. Every read and write uses this team. */
  teamId: string;
  abilities: ReadonlySet<Ability>;
  /** From `scope:project:<uuid>` entries; null when the token is not narrowed to projects. */
  projectIds: readonly string[] | null;
  /**
   * The team as it was when the token was minted (teams cannot be renamed yet; a future rename must
   * rewrite its tokens' snapshots through the team-tokens index). Lets the smoke test answer from the
   * token read alone. Null for tokens minted before snapshots existed.
   */
  team?: { id: string; name: string; created_at: string } | null;
}

/** A token as stored and listed (never with its secret or hash). */
export interface TokenRecord {
  id: string;
  team_id: string;
  name: string | null;
  abilities: Ability[];
  scopes: string[];
  created_at: string;
  revoked_at: string | null;
}

interface StoredToken extends TokenRecord {
  secret_sha256: string;
  team_snapshot?: { id: string; name: string; created_at: string };
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

function publicToken(item: StoredToken): TokenRecord {
  return {
    id: item.id,
    team_id: item.team_id,
    name: item.name ?? null,
    abilities: item.abilities,
    scopes: item.scopes,
    created_at: item.created_at,
    revoked_at: item.revoked_at ?? null,
  };
}

const unauthenticated = (detail: string) =>
  new ProblemError('AUTHENTICATION_REQUIRED', detail, { headers: { 'WWW-Authenticate': 'Bearer realm="membership"' } });

/**
 * Mints a token for a team. `input.team` (the team record) becomes the token's team snapshot; when
 * absent it is read here, and an unknown team throws NOT_FOUND. Only the SHA-256 of the secret is stored (DESIGN D2); the bearer string
 * is returned here and never again. `projectIds` add `scope:project:<uuid>` entries.
 * When `issuer` is given (minting through the API), the new token may not hold an ability or a
 * project scope the issuer lacks: throws TOKEN_MISSING_ABILITY (interface "Bearer tokens", DESIGN D2).
 * Every project id must name a project of the team: NOT_FOUND otherwise (another team's project is
 * reported exactly like a missing one).
 * @returns the stored record plus `token` (the bearer string, shown once)
 */
export async function mintToken(
  store: Store,
  clock: Clock,
  input: { teamId: string; abilities: readonly string[]; projectIds?: readonly string[]; name?: string | null; issuer?: Principal; team?: { id: string; name: string; created_at: string } },
): Promise<TokenRecord & { token: string }> {
  if (input.team && input.team.id !== input.teamId) throw new Error('mintToken: team snapshot does not match teamId');
  const unknown = input.abilities.filter((ability) => !isAbility(ability));
  if (unknown.length) {
    throw new ProblemError('VALIDATION_FAILED', `Unknown abilities: ${unknown.join(', ')}`, {
      errors: unknown.map((ability) => ({ path: 'abilities', message: `${ability} is not in service://enums/ability` })),
    });
  }
  const abilities = [...new Set(input.abilities)] as Ability[];
  const projectIds = [...new Set(input.projectIds ?? [])];
  if (input.issuer) {
    const missing = abilities.filter((ability) => !input.issuer!.abilities.has(ability));
    if (missing.length) throw new ProblemError('TOKEN_MISSING_ABILITY', `A token can only grant abilities it holds; missing: ${missing.join(', ')}.`);
    if (input.issuer.projectIds) {
      const outside = projectIds.length === 0 ? ['(all projects)'] : projectIds.filter((id) => !input.issuer!.projectIds!.includes(id));
      if (outside.length) throw new ProblemError('TOKEN_MISSING_ABILITY', `A project-scoped token can only grant its own projects; outside its scope: ${outside.join(', ')}.`);
    }
  }
  const team = input.team ?? (await getTeam(store, input.teamId));
  await requireProjectsOfTeam(store, input.teamId, projectIds);
  const nowMs = clock.nowMs();
  const id = newUlid(nowMs);
  const secret = base62.encode(randomBytes(32)).padStart(44, '0');
  const record: StoredToken = {
    id,
    team_id: input.teamId,
    name: input.name ?? null,
    abilities,
    scopes: [`scope:team:${input.teamId}`, ...projectIds.map((projectId) => `scope:project:${projectId}`)],
    created_at: isoTime(nowMs),
    revoked_at: null,
    secret_sha256: sha256(secret).toString('hex'),
    team_snapshot: { id: team.id, name: team.name, created_at: team.created_at },
  };
  await store.document.send(
    new PutCommand({
      TableName: store.tableName,
      // `revoked_at` is absent until revocation, so `if_not_exists` in revokeToken keeps the first time.
      Item: { ...keys.token(id), entity: 'token', gsi1pk: keys.teamTokensIndex(input.teamId), gsi1sk: id, ...record, revoked_at: undefined },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return { ...publicToken(record), token: `svc_live_${id}_${secret}` };
}

/** Throws NOT_FOUND unless every id names a project of `teamId` (one strongly consistent GetItem per id). */
async function requireProjectsOfTeam(store: Store, teamId: string, projectIds: readonly string[]): Promise<void> {
  const found = await Promise.all(
    projectIds.map(async (projectId) => {
      const result = await store.document.send(new GetCommand({ TableName: store.tableName, Key: keys.project(teamId, projectId), ProjectionExpression: 'pk', ConsistentRead: true }));
      return result.Item ? null : projectId;
    }),
  );
  const missing = found.filter((id): id is string => id !== null);
  if (missing.length) throw new ProblemError('NOT_FOUND', `No project ${missing.join(', ')}.`);
}

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
 * (item undefined), wrong or revoked token (interface "Bearer tokens" 6).
 */
export function verifyToken(item: Record<string, unknown> | undefined, secret: string): Principal {
  const stored = item as StoredToken | undefined;
  const presented = sha256(secret);
  const expected = stored ? Buffer.from(stored.secret_sha256, 'hex') : Buffer.alloc(32);
  const matches = timingSafeEqual(presented, expected);
  if (!matches || !stored) throw unauthenticated('The bearer token is not valid.');
  if (stored.revoked_at) throw unauthenticated('The bearer token has been revoked.');
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
  const result = await store.document.send(new GetCommand({ TableName: store.tableName, Key: keys.token(tokenId), ConsistentRead: true }));
  return verifyToken(result.Item, secret);
}

/**
 * Revokes a token of `teamId` (sets `revoked_at`). Throws NOT_FOUND when the token does not exist or
 * belongs to another team (no existence leak). Revoking twice keeps the first `revoked_at`.
 */
export async function revokeToken(store: Store, clock: Clock, teamId: string | null, tokenId: string): Promise<TokenRecord> {
  try {
    const result = await store.document.send(
      new UpdateCommand({
        TableName: store.tableName,
        Key: keys.token(tokenId),
        UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
        ConditionExpression: teamId ? 'attribute_exists(pk) AND team_id = :team' : 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': isoTime(clock.nowMs()), ...(teamId ? { ':team': teamId } : {}) },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const item = result.Attributes as StoredToken;
    return publicToken(item);
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw new ProblemError('NOT_FOUND', `No token ${tokenId}.`);
    throw error;
  }
}

/** Lists a team's tokens (never secrets), oldest first, paged (DESIGN D12). */
export async function listTokens(store: Store, teamId: string, page: { limit: number; cursor?: string }): Promise<{ data: TokenRecord[]; next_cursor: string | null }> {
  const partition = keys.teamTokensIndex(teamId);
  const result = await store.document.send(
    new QueryCommand({
      TableName: store.tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': partition },
      Limit: page.limit,
      ExclusiveStartKey: decodeCursor(page.cursor, partition, { partitionAttribute: 'gsi1pk', keyAttributes: ['gsi1pk', 'gsi1sk', 'pk', 'sk'] }),
    }),
  );
  return { data: (result.Items as StoredToken[]).map(publicToken), next_cursor: encodeCursor(result.LastEvaluatedKey) };
}
