import { parseStoredAuthorizationRequest, type AuthorizationRequest } from '../oauth/records.js';
import { ITEM_ABSENT, ITEM_EXISTS, conditionally } from './expressions.js';
import { entity, keys } from './keys.js';
import type { Store } from './store.js';
import { housekeepingTtl } from './ttl.js';

/**
 * The pending OAuth authorization requests' persistence (DESIGN D30): one item per request in a partition of its own,
 * keyed by its id, used up once by a conditional delete, removed by TTL a day after it expired.
 */
export const oauthAuthorizationRequestStore = {
  /**
   * Stores pending request `request` (one conditional PutItem); its TTL (epoch seconds) follows `expires_at_ms` (epoch
   * ms). Throws ConditionFailedError when its id is taken.
   */
  async save(store: Store, request: AuthorizationRequest): Promise<void> {
    await store.put({
      Item: {
        ...keys.oauthRequest(request.id),
        entity: entity.oauthRequest,
        ...request,
        expires_at: housekeepingTtl(request.expires_at_ms),
      },
      ConditionExpression: ITEM_ABSENT,
    });
  },

  /** The stored request `requestId` (one GetItem), expired or not, or undefined. */
  async find(store: Store, requestId: string): Promise<AuthorizationRequest | undefined> {
    const item = await store.get(keys.oauthRequest(requestId));
    return item ? parseStoredAuthorizationRequest(item) : undefined;
  },

  /** Deletes request `requestId` (one conditional DeleteItem): true once, false when it was already gone. */
  async consume(store: Store, requestId: string): Promise<boolean> {
    return conditionally(store.delete({ Key: keys.oauthRequest(requestId), ConditionExpression: ITEM_EXISTS }));
  },
};
