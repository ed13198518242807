import type { OAuthClientRecord } from '../oauth/clients.js';
import { parseStoredClient } from '../oauth/records.js';
import { ITEM_ABSENT } from './expressions.js';
import { entity, keys } from './keys.js';
import type { Store } from './store.js';

/**
 * The registered OAuth clients' persistence (RFC 7591; DESIGN D30): one item per client in a partition of its own,
 * keyed by its `client_id` (clients register before any team is known).
 */
export const oauthClientStore = {
  /** Stores new client `record` (one conditional PutItem). Throws ConditionFailedError when its client_id is taken. */
  async create(store: Store, record: OAuthClientRecord): Promise<void> {
    await store.put({
      Item: { ...keys.oauthClient(record.client_id), entity: entity.oauthClient, ...record },
      ConditionExpression: ITEM_ABSENT,
    });
  },

  /** The stored client `clientId` (one GetItem), or undefined. Throws StoredRecordError for a malformed item. */
  async find(store: Store, clientId: string) {
    const item = await store.get(keys.oauthClient(clientId));
    return item ? parseStoredClient(item) : undefined;
  },
};
