import type { Ability } from '../../catalogues/abilities.js';
import { parseStoredToken, type StoredToken } from '../../domain/tokens/record.js';
import type { Team } from '../../domain/teams/schema.js';
import { entity, keys, secondaryIndex } from '../keys.js';
import { ConditionFailedError, type Store } from '../store.js';
import { queryPage, type Page } from '../pages.js';
import type { Key } from '../requests.js';
import { ITEM_EXISTS, ITEM_ABSENT, conditionally } from '../expressions.js';

/**
 * The token item's persistence (DESIGN D2, D19, D30): `TOKEN#<id>` in a partition of its own (read before any
 * team is known), listed per team through the sparse team-tokens index (sort key: the id, a ULID).
 * `revoked_at`, `last_used_at` and `member_id` are absent until set, so `if_not_exists` keeps the first time.
 */

/**
 * A new token as stored: its record (absent fields left undefined) plus the secret's hash, the team snapshot and the
 * TTL.
 */
export type NewStoredToken = StoredToken & {
  /** The table's TTL attribute (epoch SECONDS), after the expiry `expires_at_ms`; undefined: never expires. */
  expires_at: number | undefined;
  secret_sha256: string;
  team_snapshot: Pick<Team, 'id' | 'name' | 'created_at'>;
};

/** Which of a team's tokens {@link tokenStore.forEach} visits. */
export type TokenSelection =
  { kind: 'live_of_member'; memberId: string } | { kind: 'live_member_bound' } | { kind: 'team_not_closed' };

const LIVE = '(attribute_not_exists(revoked_at) OR revoked_at = :null)';

/** The FilterExpression and values of a {@link TokenSelection}. */
function selectionFilter(selection: TokenSelection): { expression: string; values: Record<string, unknown> } {
  if (selection.kind === 'live_of_member')
    return { expression: `${LIVE} AND member_id = :member`, values: { ':null': null, ':member': selection.memberId } };
  if (selection.kind === 'live_member_bound')
    return {
      expression: `${LIVE} AND attribute_exists(member_id) AND member_id <> :null`,
      values: { ':null': null },
    };
  return { expression: 'attribute_not_exists(team_deleted_at)', values: {} };
}

/**
 * The token store adapter: a token's creation, revocation, stamps and narrowing, an OAuth grant's revocation, tokens
 * read by id, and the team's tokens by page or one by one; every method takes the Store port.
 */
export const tokenStore = {
  /**
   * Stores a new token, in its team's token index. With `activeMemberId`, in one transaction with a check that
   * the team member is still active: returns false (nothing written) when it is not. Otherwise true.
   */
  async create(store: Store, token: NewStoredToken, options: { activeMemberId?: string } = {}): Promise<boolean> {
    const put = {
      Item: {
        ...keys.token(token.id),
        entity: entity.token,
        [secondaryIndex.partitionKey]: keys.teamTokensIndex(token.team_id),
        [secondaryIndex.sortKey]: token.id,
        ...token,
      },
      ConditionExpression: ITEM_ABSENT,
    };
    if (!options.activeMemberId) {
      await store.put(put);
      return true;
    }
    return conditionally(
      store.transactWrite([
        { Put: put },
        {
          ConditionCheck: {
            Key: keys.teamMember(token.team_id, options.activeMemberId),
            ConditionExpression: '#status = :active',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':active': 'active' },
          },
        },
      ]),
    );
  },

  /**
   * Sets `revoked_at = nowIso` unless already set (the first time stays), on a token of `teamId`. Returns the token as
   * revoked, or null when it does not exist or is another team's.
   */
  async revoke(store: Store, tokenId: string, teamId: string, nowIso: string): Promise<StoredToken | null> {
    try {
      const item = await store.update({
        Key: keys.token(tokenId),
        UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
        ConditionExpression: `${ITEM_EXISTS} AND team_id = :team`,
        ExpressionAttributeValues: { ':now': nowIso, ':team': teamId },
        ReturnValues: 'ALL_NEW',
      });
      return parseStoredToken(item!);
    } catch (error) {
      if (error instanceof ConditionFailedError) return null;
      throw error;
    }
  },

  /**
   * Marks OAuth grant `grantId` revoked at `nowIso` (keeps the first time); returns its team and the ids of every
   * access token it issued, or null for a grant that is gone.
   */
  async revokeOAuthGrant(
    store: Store,
    grantId: string,
    nowIso: string,
  ): Promise<{ teamId: string; accessTokenIds: string[] } | null> {
    try {
      const item = await store.update({
        Key: keys.oauthGrant(grantId),
        UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeValues: { ':now': nowIso },
        ReturnValues: 'ALL_NEW',
      });
      const ids = item!.access_token_ids;
      return {
        teamId: String(item!.team_id),
        accessTokenIds: Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [],
      };
    } catch (error) {
      if (error instanceof ConditionFailedError) return null;
      throw error;
    }
  },

  /**
   * One page of a team's tokens, oldest first; revoked ones only with `include_revoked` (a filtered page may hold
   * fewer than `limit`). Errors: VALIDATION_FAILED for a cursor of another list.
   */
  async page(
    store: Store,
    teamId: string,
    query: { limit: number; cursor?: string; include_revoked?: boolean },
  ): Promise<Page<StoredToken>> {
    return queryPage(store, {
      index: true,
      partition: keys.teamTokensIndex(teamId),
      limit: query.limit,
      cursor: query.cursor,
      map: parseStoredToken,
      filter: query.include_revoked ? undefined : { expression: LIVE, values: { ':null': null } },
    });
  },

  /** Pages through the team-tokens index (eventually consistent), calling `visit` with each selected token in turn. */
  async forEach(
    store: Store,
    teamId: string,
    selection: TokenSelection,
    visit: (token: StoredToken) => Promise<void>,
  ): Promise<void> {
    const filter = selectionFilter(selection);
    let startKey: Key | undefined;
    do {
      const page = await store.query({
        IndexName: secondaryIndex.name,
        KeyConditionExpression: '#pk = :pk',
        FilterExpression: filter.expression,
        ExpressionAttributeNames: { '#pk': secondaryIndex.partitionKey },
        ExpressionAttributeValues: { ':pk': keys.teamTokensIndex(teamId), ...filter.values },
        ExclusiveStartKey: startKey,
      });
      for (const item of page.items) await visit(parseStoredToken(item));
      startKey = page.lastEvaluatedKey;
    } while (startKey);
  },

  /** Sets `attribute` to `nowIso` on a token of `teamId` unless it is set already; a token that is gone is ignored. */
  async stamp(
    store: Store,
    teamId: string,
    tokenId: string,
    attribute: 'revoked_at' | 'team_deleted_at',
    nowIso: string,
  ): Promise<void> {
    await conditionally(
      store.update({
        Key: keys.token(tokenId),
        UpdateExpression: 'SET #stamp = if_not_exists(#stamp, :now)',
        ConditionExpression: `${ITEM_EXISTS} AND team_id = :team`,
        ExpressionAttributeNames: { '#stamp': attribute },
        ExpressionAttributeValues: { ':now': nowIso, ':team': teamId },
      }),
    );
  },

  /**
   * Replaces a token's abilities `read` with `allowed`, on condition that they are still `read`. False when they
   * changed or the token is gone.
   */
  narrow(store: Store, tokenId: string, read: readonly Ability[], allowed: readonly Ability[]): Promise<boolean> {
    return conditionally(
      store.update({
        Key: keys.token(tokenId),
        UpdateExpression: 'SET abilities = :allowed',
        ConditionExpression: `${ITEM_EXISTS} AND abilities = :read`,
        ExpressionAttributeValues: { ':allowed': allowed, ':read': read },
      }),
    );
  },

  /**
   * The stored tokens of `tokenIds` that exist (one strongly consistent BatchGetItem of up to 100), in no particular
   * order.
   */
  async loadMany(store: Store, tokenIds: readonly string[]): Promise<StoredToken[]> {
    return (await store.batchGet(tokenIds.map((tokenId) => keys.token(tokenId)))).map(parseStoredToken);
  },
};
