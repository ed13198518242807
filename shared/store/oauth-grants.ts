import { parseStoredGrant } from '../oauth/records.js';
import { ITEM_ABSENT } from './expressions.js';
import { entity, keys } from './keys.js';
import type { Store } from './store.js';

/** A new grant as stored, before it issued any access token. */
interface NewGrant {
  id: string;
  team_id: string;
  member_id: string;
  client_id: string;
  client_name: string | null;
  abilities: string[];
  project_ids: string[];
  resource: string;
  /** ISO 8601. */
  created_at: string;
}

/**
 * The OAuth grants' persistence (DESIGN D30): one item per grant in a partition of its own, keyed by its id (a ULID),
 * holding the member, client, consented abilities and projects and the ids of the access tokens it issued. Revoking
 * a grant is the token store's (`tokenStore.revokeOAuthGrant`), as it revokes the tokens too.
 */
export const oauthGrantStore = {
  /** The stored grant `grantId` (one GetItem), revoked or not, or undefined. */
  async find(store: Store, grantId: string) {
    const item = await store.get(keys.oauthGrant(grantId));
    return item ? parseStoredGrant(item) : undefined;
  },

  /**
   * Stores new grant `grant` with no access tokens yet (one conditional PutItem). Throws ConditionFailedError when its
   * id is taken.
   */
  async create(store: Store, grant: NewGrant): Promise<void> {
    await store.put({
      Item: { ...keys.oauthGrant(grant.id), entity: entity.oauthGrant, ...grant, access_token_ids: [] },
      ConditionExpression: ITEM_ABSENT,
    });
  },

  /** Replaces the consented abilities of grant `grantId` (one UpdateItem): incremental consent. */
  async replaceAbilities(store: Store, grantId: string, abilities: readonly string[]): Promise<void> {
    await store.update({
      Key: keys.oauthGrant(grantId),
      UpdateExpression: 'SET abilities = :abilities',
      ExpressionAttributeValues: { ':abilities': abilities },
    });
  },

  /** Appends access token `accessTokenId` to the ones grant `grantId` issued (one UpdateItem). */
  async addAccessToken(store: Store, grantId: string, accessTokenId: string): Promise<void> {
    await store.update({
      Key: keys.oauthGrant(grantId),
      UpdateExpression: 'SET access_token_ids = list_append(if_not_exists(access_token_ids, :empty), :token)',
      ExpressionAttributeValues: { ':empty': [], ':token': [accessTokenId] },
    });
  },
};
