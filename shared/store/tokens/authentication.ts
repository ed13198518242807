import { itemWithKey, type Store } from '../store.js';
import { keys } from '../keys.js';
import type { Item, Key } from '../requests.js';
import { ITEM_EXISTS, conditionally } from '../expressions.js';

/**
 * The token item's persistence on the authentication path (DESIGN D2): the reads that verify a bearer
 * token and the `last_used_at` stamp. The items come back unparsed: `checkToken` verifies them in the same
 * work whether or not the token exists.
 */

/**
 * The token adapter of the authentication path: the token item's reads (alone or with other items, unparsed) and its
 * `last_used_at` stamp.
 */
export const tokenCredentials = {
  /** The stored item of token `tokenId` (one strongly consistent GetItem), or undefined when none. */
  async read(store: Store, tokenId: string): Promise<Item | undefined> {
    return store.get(keys.token(tokenId));
  },

  /**
   * Token `tokenId`'s item together with the items under `alongside` (a rate window's counter, a session),
   * in ONE strongly consistent BatchGetItem: `alongside` items by position, undefined where absent.
   */
  async readWith(
    store: Store,
    tokenId: string,
    alongside: readonly Key[],
  ): Promise<{ token: Item | undefined; alongside: (Item | undefined)[] }> {
    const tokenKey = keys.token(tokenId);
    const items = await store.batchGet([tokenKey, ...alongside]);
    return { token: itemWithKey(items, tokenKey), alongside: alongside.map((key) => itemWithKey(items, key)) };
  },

  /**
   * Stamps `last_used_at = nowIso` on token `tokenId` unless it was stamped after `thresholdIso` (ISO times):
   * one conditional UpdateItem, so concurrent calls write it once. A lost race, or a token deleted meanwhile,
   * writes nothing and is not an error; store failures propagate.
   */
  async stampLastUsed(store: Store, tokenId: string, nowIso: string, thresholdIso: string): Promise<void> {
    await conditionally(
      store.update({
        Key: keys.token(tokenId),
        UpdateExpression: 'SET last_used_at = :now',
        ConditionExpression: `${ITEM_EXISTS} AND (attribute_not_exists(last_used_at) OR last_used_at <= :threshold)`,
        ExpressionAttributeValues: { ':now': nowIso, ':threshold': thresholdIso },
      }),
    );
  },
};
