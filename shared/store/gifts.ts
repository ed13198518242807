import { parseGiftRef, parseStoredGift, type StoredGift } from '../domain/gifts/record.js';
import type { Gift, GiftStatus } from '../domain/gifts/schema.js';
import { setFields } from './expressions.js';
import { entity, keys, sortKeyPrefix } from './keys.js';
import { queryPage, type Page } from './pages.js';
import type { Store } from './store.js';
import type { Transaction } from './unit-of-work.js';

/**
 * The gift store (DESIGN D33): a project's gifts in one partition, each with a reference item by id; every change of
 * status is conditional on the status it leaves, so a redelivered payment event or a deadline run twice changes
 * nothing the second time.
 */
export const giftStore = {
  /** Adds a new gift (`pending_payment`) and its reference item to `tx`, on condition that the gift is new. */
  create(tx: Transaction, teamId: string, gift: Gift): void {
    tx.put(
      { ...keys.gift(teamId, gift.project_id, gift.id), entity: entity.gift, team_id: teamId, ...gift },
      { condition: 'attribute_not_exists(pk)' },
    );
    tx.put({ ...keys.giftRef(teamId, gift.id), entity: entity.giftRef, team_id: teamId, project_id: gift.project_id });
  },

  /** A project's gift (strongly consistent), or null. */
  async read(store: Store, teamId: string, projectId: string, giftId: string): Promise<StoredGift | null> {
    const item = await store.get(keys.gift(teamId, projectId, giftId), { consistent: true });
    return item ? parseStoredGift(item) : null;
  },

  /** The project of gift `giftId` of the team, or null. */
  async projectOf(store: Store, teamId: string, giftId: string): Promise<string | null> {
    const item = await store.get(keys.giftRef(teamId, giftId));
    return item ? parseGiftRef(item).project_id : null;
  },

  /** A page of a project's gifts in id order, optionally of one status. Errors: VALIDATION_FAILED (cursor). */
  list(
    store: Store,
    teamId: string,
    projectId: string,
    query: { limit: number; cursor?: string; status?: GiftStatus },
  ): Promise<Page<StoredGift>> {
    return queryPage(store, {
      partition: keys.giftPartition(teamId, projectId),
      sortKeyPrefix: sortKeyPrefix.gift,
      limit: query.limit,
      cursor: query.cursor,
      map: parseStoredGift,
      filter: query.status
        ? { expression: '#status = :status', names: { '#status': 'status' }, values: { ':status': query.status } }
        : undefined,
    });
  },

  /**
   * Sets fields of a gift in `tx` on condition that its status is still `from` (a lost race or a repeat throws
   * `ConditionFailedError`); `remove` names attributes to drop.
   */
  transition(
    tx: Transaction,
    teamId: string,
    gift: Pick<Gift, 'id' | 'project_id'>,
    from: GiftStatus,
    fields: Record<string, unknown>,
    remove: readonly string[] = [],
  ): void {
    const set = setFields(fields);
    const names: Record<string, string> = { ...set.names, '#status_from': 'status' };
    const removes = remove.map((field, index) => {
      names[`#remove${index}`] = field;
      return `#remove${index}`;
    });
    tx.update(keys.gift(teamId, gift.project_id, gift.id), {
      expression: `SET ${set.clause}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
      condition: 'attribute_exists(pk) AND #status_from = :status_from',
      names,
      values: { ...set.values, ':status_from': from },
    });
  },

  /** Records that the recipient's e-mail left: drops the held code (once; a repeat finds nothing to drop). */
  async markEmailed(store: Store, teamId: string, gift: Pick<Gift, 'id' | 'project_id'>, nowIso: string) {
    await store.update({
      Key: keys.gift(teamId, gift.project_id, gift.id),
      UpdateExpression: 'SET emailed_at = :now REMOVE code',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':now': nowIso },
    });
  },
};
