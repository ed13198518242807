import type { Coupon, PromotionCode } from '../domain/coupons/schema.js';
import type { ProblemError } from '../errors.js';
import { ITEM_ABSENT, ITEM_EXISTS, deleteItemsUnder, readByIds } from './expressions.js';
import { entity, keys, sortKeyPrefix } from './keys.js';
import { decodeCursor, encodeCursor, type Page } from './pages.js';
import type { Item } from './requests.js';
import type { Store } from './store.js';
import type { Transaction } from './unit-of-work.js';

/**
 * The coupon store (DESIGN D14, D33): a project's coupons and promotion codes in one partition. A coupon item keeps the
 * list of its codes (`promotion_codes`: the code strings); each code is an item of its own keyed by the code, holding
 * its redemption counter. Counters move with conditional updates, so limits hold under concurrency.
 */

/** A coupon as stored: its fields but the codes, which are listed by code string. */
export type StoredCoupon = Omit<Coupon, 'promotion_codes'> & { promotion_codes: string[] };

/** The condition that a counted item (`#status`, `times_redeemed`, `max_redemptions`) has room for one more. */
const ROOM_LEFT =
  '#status = :active AND (attribute_not_exists(max_redemptions) OR attribute_type(max_redemptions, :null_type) OR times_redeemed < max_redemptions)';

/** One redemption more on a coupon or code: with `strict`, only while it is active and under its limit. */
function countRedemption(
  tx: Transaction,
  key: Item,
  nowIso: string,
  strict: boolean,
  onConditionFailed: () => ProblemError,
): void {
  tx.update(key, {
    expression: 'SET times_redeemed = if_not_exists(times_redeemed, :zero) + :one, updated_at = :now',
    condition: strict ? `${ITEM_EXISTS} AND ${ROOM_LEFT}` : ITEM_EXISTS,
    names: strict ? { '#status': 'status' } : undefined,
    values: {
      ':zero': 0,
      ':one': 1,
      ':now': nowIso,
      ...(strict ? { ':active': 'active', ':null_type': 'NULL' } : {}),
    },
    onConditionFailed,
  });
}

/**
 * The coupon store adapter: reads and lists of a project's coupons and promotion codes (Store port), their creation,
 * archiving and redemptions added to a transaction, and `removeAll` for a deleted project.
 */
export const couponStore = {
  /**
   * Deletes every coupon and promotion code of a (deleted) project, outside any transaction. Returns how many items.
   */
  async removeAll(store: Store, teamId: string, projectId: string): Promise<number> {
    return deleteItemsUnder(store, keys.couponPartition(teamId, projectId));
  },

  /** The stored coupon of a project (strongly consistent), or undefined. */
  async read(store: Store, teamId: string, projectId: string, couponId: string): Promise<Item | undefined> {
    return store.get(keys.coupon(teamId, projectId, couponId));
  },

  /** The stored promotion code `code` (upper case) of a project, or undefined. */
  async readCode(store: Store, teamId: string, projectId: string, code: string): Promise<Item | undefined> {
    return store.get(keys.promotionCode(teamId, projectId, code));
  },

  /** The stored promotion codes among `codes` of a project, in no particular order. */
  async readCodes(store: Store, teamId: string, projectId: string, codes: readonly string[]): Promise<Item[]> {
    return readByIds(store, codes, (code) => keys.promotionCode(teamId, projectId, code));
  },

  /** Every promotion code of a project (a project has tens, not thousands: the pages are read to the end). */
  async listCodes(store: Store, teamId: string, projectId: string): Promise<Item[]> {
    const items: Item[] = [];
    let startKey: Item | undefined;
    do {
      const result = await store.query({
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: {
          ':pk': keys.couponPartition(teamId, projectId),
          ':prefix': sortKeyPrefix.promotionCode,
        },
        ExclusiveStartKey: startKey,
      });
      items.push(...result.items);
      startKey = result.lastEvaluatedKey;
    } while (startKey);
    return items;
  },

  /** One page of a project's coupons, oldest id order (D12). Errors: VALIDATION_FAILED (cursor of another list). */
  async listPage(
    store: Store,
    teamId: string,
    projectId: string,
    query: { limit: number; cursor?: string },
  ): Promise<Page<Item>> {
    const partition = keys.couponPartition(teamId, projectId);
    const startKey = decodeCursor(query.cursor, partition, { sortKeyPrefix: sortKeyPrefix.coupon });
    const result = await store.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': partition, ':prefix': sortKeyPrefix.coupon },
      Limit: query.limit,
      ExclusiveStartKey: startKey,
    });
    return { data: result.items, next_cursor: encodeCursor(result.lastEvaluatedKey) };
  },

  /** Adds to `tx` the put of a new coupon, only if absent. */
  create(tx: Transaction, teamId: string, coupon: StoredCoupon): void {
    tx.put(
      { ...keys.coupon(teamId, coupon.project_id, coupon.id), entity: entity.coupon, team_id: teamId, ...coupon },
      { condition: ITEM_ABSENT },
    );
  },

  /** Adds to `tx` the put of a new promotion code, unless the project has that code already (`taken`). */
  createCode(tx: Transaction, teamId: string, code: PromotionCode, taken: () => ProblemError): void {
    tx.put(
      {
        ...keys.promotionCode(teamId, code.project_id, code.code),
        entity: entity.promotionCode,
        team_id: teamId,
        ...code,
      },
      { condition: ITEM_ABSENT, onConditionFailed: taken },
    );
  },

  /** Adds to `tx` a new code's place in its coupon's list, while the coupon is active (else `archived`). */
  appendCode(
    tx: Transaction,
    teamId: string,
    coupon: Pick<Coupon, 'id' | 'project_id'>,
    code: string,
    nowIso: string,
    archived: () => ProblemError,
  ): void {
    tx.update(keys.coupon(teamId, coupon.project_id, coupon.id), {
      expression: 'SET promotion_codes = list_append(promotion_codes, :code), updated_at = :now',
      condition: `${ITEM_EXISTS} AND #status = :active`,
      names: { '#status': 'status' },
      values: { ':code': [code], ':now': nowIso, ':active': 'active' },
      onConditionFailed: archived,
    });
  },

  /** Adds to `tx` the archiving of a coupon or one code (`key` from keys.coupon / keys.promotionCode). */
  archive(tx: Transaction, key: Item, nowIso: string): void {
    tx.update(key, {
      expression: 'SET #status = :archived, updated_at = :now',
      condition: ITEM_EXISTS,
      names: { '#status': 'status' },
      values: { ':archived': 'archived', ':now': nowIso },
    });
  },

  /**
   * Adds to `tx` one redemption of `code` of coupon `couponId`. `strict` (we decide the redemption): only while both
   * are active and under their limits, else `refused`; not strict (the provider already applied it): counted
   * regardless.
   */
  redeem(
    tx: Transaction,
    teamId: string,
    projectId: string,
    redemption: { couponId: string; code: string | null; nowIso: string; strict: boolean },
    refused: () => ProblemError,
  ): void {
    const { couponId, code, nowIso, strict } = redemption;
    countRedemption(tx, keys.coupon(teamId, projectId, couponId), nowIso, strict, refused);
    if (code) countRedemption(tx, keys.promotionCode(teamId, projectId, code), nowIso, strict, refused);
  },
};
