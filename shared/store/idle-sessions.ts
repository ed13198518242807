import { conditionally, ITEM_EXISTS } from './expressions.js';
import type { Key } from './requests.js';
import type { Store } from './store.js';
import { housekeepingTtl } from './ttl.js';

/**
 * The last-seen time of a session that ends by idleness (DESIGN D21 dashboard sessions, D27 portal sessions): the
 * session item's `last_seen_at_ms` and its TTL, a day after it would expire.
 */
export const idleSessions = {
  /**
   * Sets the last-seen time of session item `key` to `nowMs` and its TTL to a day after `nowMs + idleMs` (epoch ms;
   * one conditional UpdateItem): true when written, false when the item is gone (or revoked, with `unlessRevoked`).
   */
  touch(store: Store, key: Key, nowMs: number, idleMs: number, { unlessRevoked = false } = {}): Promise<boolean> {
    return conditionally(
      store.update({
        Key: key,
        UpdateExpression: 'SET last_seen_at_ms = :now, expires_at = :expires',
        ConditionExpression: unlessRevoked ? `${ITEM_EXISTS} AND attribute_not_exists(revoked_at)` : ITEM_EXISTS,
        ExpressionAttributeValues: { ':now': nowMs, ':expires': housekeepingTtl(nowMs + idleMs) },
      }),
    );
  },
};
