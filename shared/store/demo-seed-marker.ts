import { ITEM_ABSENT } from './expressions.js';
import { keys } from './keys.js';
import type { Store } from './store.js';

/** The local demo's seed marker (DESIGN §5): one item that says the demo team was seeded into this store. */
export const demoSeedMarker = {
  /**
   * Stores the marker with the seeding time `seededAt` (ISO 8601; one PutItem, only if absent): throws
   * ConditionFailedError when the demo was seeded already.
   */
  async put(store: Store, seededAt: string): Promise<void> {
    await store.put({ Item: { ...keys.demoSeedMarker(), seeded_at: seededAt }, ConditionExpression: ITEM_ABSENT });
  },
};
