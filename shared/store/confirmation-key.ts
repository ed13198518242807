import * as z from '../schemas/zod.js';
import { ITEM_ABSENT } from './expressions.js';
import { entity, keys } from './keys.js';
import { recordParser } from './records.js';
import { ConditionFailedError, type Store } from './store.js';

/**
 * The tool server's confirmation key as stored (DESIGN D5): one item for the service, holding only the key wrapped by
 * the credentials key (D16), made by the first call that needs it.
 */

const StoredConfirmationKey = z.object({ wrapped_key: z.string() });
const parseStoredConfirmationKey = recordParser(entity.mcpConfirmationKey, StoredConfirmationKey);

/**
 * The wrapped confirmation key: the stored one, else `wrap()`'s, stored if no other call stored one first (then that
 * one). Throws StoredRecordError for an item that does not match.
 */
export async function loadOrStoreWrappedConfirmationKey(store: Store, wrap: () => Promise<string>): Promise<string> {
  const key = keys.mcpConfirmationKey();
  const stored = await store.get(key, { consistent: true });
  if (stored) return parseStoredConfirmationKey(stored).wrapped_key;
  const wrapped = await wrap();
  try {
    await store.put({
      Item: { ...key, entity: entity.mcpConfirmationKey, wrapped_key: wrapped },
      ConditionExpression: ITEM_ABSENT,
    });
    return wrapped;
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    const raced = await store.get(key, { consistent: true });
    if (!raced) throw error;
    return parseStoredConfirmationKey(raced).wrapped_key;
  }
}
