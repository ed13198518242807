import { ConditionFailedError, itemWithKey, type Store } from '../../store/store.js';
import { keys } from '../../store/keys.js';
import type { Item, Key } from '../../store/requests.js';

/**
 * The token item's persistence on the authentication path (DESIGN D2): the reads that verify a bearer
 * token and the `last_used_at` stamp. The items come back unparsed: `checkToken` verifies them in the same
 * work whether or not the token exists.
 */

/** The stored item of token `tokenId` (one strongly consistent GetItem), or undefined when none. */
export async function readTokenItem(store: Store, tokenId: string): Promise<Item | undefined> {
  return store.get(keys.token(tokenId));
}

/**
 * Token `tokenId`'s item together with the items under `alongside` (a rate window's counter, a session),
 * in ONE strongly consistent BatchGetItem: `alongside` items by position, undefined where absent.
 */
export async function readTokenWith(
  store: Store,
  tokenId: string,
  alongside: readonly Key[],
): Promise<{ token: Item | undefined; alongside: (Item | undefined)[] }> {
  const tokenKey = keys.token(tokenId);
  const items = await store.batchGet([tokenKey, ...alongside]);
  return { token: itemWithKey(items, tokenKey), alongside: alongside.map((key) => itemWithKey(items, key)) };
}

/**
 * Stamps `last_used_at = nowIso` on token `tokenId` unless it was stamped after `thresholdIso` (ISO times):
 * one conditional UpdateItem, so concurrent calls write it once. A lost race, or a token deleted meanwhile,
 * writes nothing and is not an error; store failures propagate.
 */
export async function stampTokenLastUsed(
  store: Store,
  tokenId: string,
  nowIso: string,
  thresholdIso: string,
): Promise<void> {
  try {
    await store.update({
      Key: keys.token(tokenId),
      UpdateExpression: 'SET last_used_at = :now',
      ConditionExpression:
        'attribute_exists(pk) AND (attribute_not_exists(last_used_at) OR last_used_at <= :threshold)',
      ExpressionAttributeValues: { ':now': nowIso, ':threshold': thresholdIso },
    });
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
  }
}
