import { parseStoredRefresh } from '../oauth/records.js';
import { ITEM_ABSENT, conditionally } from './expressions.js';
import { entity, keys } from './keys.js';
import type { Store } from './store.js';
import { housekeepingTtl } from './ttl.js';

/** A new refresh token as stored: its id, grant, client and secret's SHA-256 (hex). */
interface NewRefreshToken {
  id: string;
  grant_id: string;
  client_id: string;
  secret_sha256: string;
  /** Epoch MILLISECONDS after which the refresh token is void. */
  expires_at_ms: number;
}

/**
 * The OAuth refresh tokens' persistence (DESIGN D30): one item per refresh token in a partition of its own, keyed by
 * its id (a ULID), holding the SHA-256 of its secret and its grant; spent once on rotation (`spent_at`), removed by
 * TTL a day after it expired.
 */
export const oauthRefreshTokenStore = {
  /**
   * Stores new refresh token `refresh` (one conditional PutItem); its TTL (epoch seconds) follows `expires_at_ms`
   * (epoch ms). Throws ConditionFailedError when its id is taken.
   */
  async create(store: Store, refresh: NewRefreshToken): Promise<void> {
    await store.put({
      Item: {
        ...keys.oauthRefresh(refresh.id),
        entity: entity.oauthRefresh,
        ...refresh,
        expires_at: housekeepingTtl(refresh.expires_at_ms),
      },
      ConditionExpression: ITEM_ABSENT,
    });
  },

  /** The stored refresh token `refreshId` (one GetItem), spent, expired or not, or undefined. */
  async find(store: Store, refreshId: string) {
    const item = await store.get(keys.oauthRefresh(refreshId));
    return item ? parseStoredRefresh(item) : undefined;
  },

  /**
   * Spends refresh token `refreshId` at `nowIso` (ISO 8601; one conditional UpdateItem): true once, false when it was
   * already spent.
   */
  async markSpent(store: Store, refreshId: string, nowIso: string): Promise<boolean> {
    return conditionally(
      store.update({
        Key: keys.oauthRefresh(refreshId),
        UpdateExpression: 'SET spent_at = :now',
        ConditionExpression: 'attribute_not_exists(spent_at)',
        ExpressionAttributeValues: { ':now': nowIso },
      }),
    );
  },
};
