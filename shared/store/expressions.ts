import { ConditionFailedError } from './store.js';

/** Expression fragments and condition handling the store adapters share (DESIGN D14, D35), written once. */

/** Condition: an item exists under the request's key. */
export const ITEM_EXISTS = 'attribute_exists(pk)';

/** Condition: no item exists under the request's key yet. */
export const ITEM_IS_NEW = 'attribute_not_exists(pk)';

/**
 * The `SET` clause that raises an item's `revision` by one, with its values: part of every update that
 * changes what a cached copy of the item may be used for.
 */
export const RAISE_REVISION = {
  clause: 'revision = revision + :revision_one',
  values: { ':revision_one': 1 },
} as const;

/** Resolves true once `write` is made, false when its condition failed ({@link ConditionFailedError}); other errors reject. */
export async function conditionally(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}
