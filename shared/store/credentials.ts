import { conditionally } from './expressions.js';
import type { Item } from './requests.js';
import type { Store } from './store.js';

/**
 * The stored credentials' writes made outside a unit of work (DESIGN D16, D28): a credential replaced in place, e.g.
 * a subscriber's refreshed Discord tokens. The writes that join a transaction are in `shared/credentials/`.
 */
export const credentialStore = {
  /**
   * Puts credential `item` in place of the one read with `created_at` = `readCreatedAt` (one conditional PutItem):
   * true when stored, false when the stored credential changed meanwhile (e.g. a concurrent refresh).
   */
  replace(store: Store, item: Item, readCreatedAt: string): Promise<boolean> {
    return conditionally(
      store.put({
        Item: item,
        ConditionExpression: 'created_at = :created',
        ExpressionAttributeValues: { ':created': readCreatedAt },
      }),
    );
  },
};
