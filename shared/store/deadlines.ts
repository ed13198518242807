import type { Deadline } from '../deadlines/deadline.js';
import { keys, secondaryIndex } from './keys.js';
import type { Item, Key } from './requests.js';
import type { Store } from './store.js';

/**
 * The deadlines' reads of the worker (DESIGN D14, D15): a page of a deadline index shard, due first, and a deadline
 * re-read by key. The items are written by the units of work of their objects (`shared/deadlines/deadline.ts`).
 */
export const deadlineStore = {
  /**
   * One page (≤ `limit`) of index shard `shard`: the deadlines (of any team) whose index sort key is before
   * `bound` (`dueSortKeyBound`), oldest first, read on from `startKey`; one Query of the secondary index.
   */
  async pageDue(
    store: Store,
    shard: number,
    bound: string,
    startKey: Key | undefined,
    limit: number,
  ): Promise<{ items: Item[]; lastEvaluatedKey: Key | undefined }> {
    return store.query({
      IndexName: secondaryIndex.name,
      KeyConditionExpression: '#pk = :pk AND #sk < :bound',
      ExpressionAttributeNames: { '#pk': secondaryIndex.partitionKey, '#sk': secondaryIndex.sortKey },
      ExpressionAttributeValues: { ':pk': keys.deadlineIndex(shard), ':bound': bound },
      Limit: limit,
      ExclusiveStartKey: startKey,
    });
  },

  /**
   * The stored item of `deadline` (its team, kind and subject: one strongly consistent GetItem), or undefined when it
   * was applied meanwhile.
   */
  read(store: Store, deadline: Pick<Deadline, 'teamId' | 'kind' | 'subjectId'>): Promise<Item | undefined> {
    return store.get(keys.deadline(deadline.teamId, deadline.kind, deadline.subjectId));
  },
};
