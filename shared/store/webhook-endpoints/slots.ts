import {
  parseStoredFailureCount,
  parseStoredWebhookEndpoint,
  type StoredWebhookEndpoint,
} from '../../domain/webhook-endpoints/record.js';
import { keys } from '../keys.js';
import { ConditionFailedError, type Store } from '../store.js';
import type { TransactionItem } from '../requests.js';
import { ITEM_EXISTS, RAISE_REVISION, conditionally } from '../expressions.js';

/**
 * What delivery attempts write on their endpoint's item (DESIGN D8, D24): the consecutive-failure counter,
 * disabling, and the concurrency slots (`in_flight`: delivery id → epoch ms at which the slot's lease runs out).
 */

/** A slot is free for delivery `#delivery`: it holds one already, or fewer than the cap are taken (D24). */
const SLOT_ROOM_CONDITION = '(attribute_exists(in_flight.#delivery) OR size(in_flight) < max_concurrency)';

/**
 * What {@link endpointSlots.take} found: the slot taken (with the endpoint after the update), or refused (the endpoint
 * as found; undefined: deleted).
 */
export type SlotTake = { taken: StoredWebhookEndpoint } | { refused: StoredWebhookEndpoint | undefined };

/** The update that disables an endpoint at `:now`, raising its revision. */
const DISABLE = `is_active = :false, disabled_at = :now, updated_at = :now, ${RAISE_REVISION.clause}`;

/**
 * The endpoint slot adapter: concurrency slots taken, reclaimed and given back, failed attempts counted, the endpoint
 * disabled after too many; `item` and `successfulAttemptItem` build transaction items instead of writing.
 */
export const endpointSlots = {
  /**
   * Takes the slot for `deliveryId` until `leaseUntilMs` (epoch ms) in one conditional update, on condition that the
   * endpoint exists, is active and has room; returns the endpoint after the update, or as found when refused.
   */
  async take(
    store: Store,
    teamId: string,
    endpointId: string,
    deliveryId: string,
    leaseUntilMs: number,
  ): Promise<SlotTake> {
    try {
      const attributes = await store.update({
        Key: keys.webhookEndpoint(teamId, endpointId),
        UpdateExpression: 'SET in_flight.#delivery = :lease',
        ConditionExpression: `${ITEM_EXISTS} AND is_active = :true AND ${SLOT_ROOM_CONDITION}`,
        ExpressionAttributeNames: { '#delivery': deliveryId },
        ExpressionAttributeValues: { ':lease': leaseUntilMs, ':true': true },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      });
      return { taken: parseStoredWebhookEndpoint(attributes!) };
    } catch (error) {
      if (error instanceof ConditionFailedError)
        return { refused: error.item && parseStoredWebhookEndpoint(error.item) };
      throw error;
    }
  },

  /**
   * {@link endpointSlots.take} as a transaction item built from a cached `endpoint`: also requires that copy's
   * `revision` (so url and secret are current). A refused condition reports the endpoint as found (`ALL_OLD`).
   */
  item(endpoint: StoredWebhookEndpoint, deliveryId: string, leaseUntilMs: number): TransactionItem {
    return {
      Update: {
        Key: keys.webhookEndpoint(endpoint.team_id, endpoint.id),
        UpdateExpression: 'SET in_flight.#delivery = :lease',
        ConditionExpression: `${ITEM_EXISTS} AND is_active = :true AND revision = :revision AND ${SLOT_ROOM_CONDITION}`,
        ExpressionAttributeNames: { '#delivery': deliveryId },
        ExpressionAttributeValues: { ':lease': leaseUntilMs, ':true': true, ':revision': endpoint.revision },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    };
  },

  /**
   * Removes slots whose lease ran out, each on condition that it still holds the lease that was read; a lost race
   * writes nothing.
   */
  async reclaim(
    store: Store,
    teamId: string,
    endpointId: string,
    expired: ReadonlyArray<readonly [deliveryId: string, leaseUntilMs: number]>,
  ): Promise<void> {
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const conditions: string[] = [];
    expired.forEach(([deliveryId, until], index) => {
      names[`#d${index}`] = deliveryId;
      values[`:u${index}`] = until;
      conditions.push(`in_flight.#d${index} = :u${index}`);
    });
    await conditionally(
      store.update({
        Key: keys.webhookEndpoint(teamId, endpointId),
        UpdateExpression: `REMOVE ${expired.map((_, index) => `in_flight.#d${index}`).join(', ')}`,
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  },

  /** Gives back the slot of `deliveryId` without counting an outcome; a deleted endpoint is ignored. */
  async release(store: Store, teamId: string, endpointId: string, deliveryId: string): Promise<void> {
    await conditionally(
      store.update({
        Key: keys.webhookEndpoint(teamId, endpointId),
        UpdateExpression: 'REMOVE in_flight.#delivery',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeNames: { '#delivery': deliveryId },
      }),
    );
  },

  /**
   * The transaction item that ends a successful attempt: gives back the delivery's slot and resets
   * `consecutive_failures` to 0, on condition that the endpoint exists (a failure means it was deleted meanwhile).
   */
  successfulAttemptItem(teamId: string, endpointId: string, deliveryId: string): TransactionItem {
    return {
      Update: {
        Key: keys.webhookEndpoint(teamId, endpointId),
        UpdateExpression: 'SET consecutive_failures = :zero REMOVE in_flight.#delivery',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeNames: { '#delivery': deliveryId },
        ExpressionAttributeValues: { ':zero': 0 },
      },
    };
  },

  /**
   * Counts one failed attempt and gives back its slot in one update; returns the consecutive failures after it, or null
   * when the endpoint is gone.
   */
  async countFailure(store: Store, teamId: string, endpointId: string, deliveryId: string): Promise<number | null> {
    const Key = keys.webhookEndpoint(teamId, endpointId);
    try {
      const attributes = await store.update({
        Key,
        UpdateExpression: 'ADD consecutive_failures :one REMOVE in_flight.#delivery',
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeNames: { '#delivery': deliveryId },
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'UPDATED_NEW',
      });
      return parseStoredFailureCount(attributes!, Key);
    } catch (error) {
      if (error instanceof ConditionFailedError) return null;
      throw error;
    }
  },

  /**
   * Counts one failed attempt, gives back its slot and disables the endpoint at `nowIso`, in one update; a deleted
   * endpoint is ignored.
   */
  async countFailureAndDisable(
    store: Store,
    teamId: string,
    endpointId: string,
    deliveryId: string,
    nowIso: string,
  ): Promise<void> {
    await conditionally(
      store.update({
        Key: keys.webhookEndpoint(teamId, endpointId),
        UpdateExpression: `SET ${DISABLE} ADD consecutive_failures :one REMOVE in_flight.#delivery`,
        ConditionExpression: ITEM_EXISTS,
        ExpressionAttributeNames: { '#delivery': deliveryId },
        ExpressionAttributeValues: { ':false': false, ':now': nowIso, ':one': 1, ...RAISE_REVISION.values },
      }),
    );
  },

  /**
   * Disables the endpoint at `nowIso` if it is active with at least `threshold` consecutive failures; otherwise writes
   * nothing.
   */
  async disableAfterFailures(
    store: Store,
    teamId: string,
    endpointId: string,
    threshold: number,
    nowIso: string,
  ): Promise<void> {
    await conditionally(
      store.update({
        Key: keys.webhookEndpoint(teamId, endpointId),
        UpdateExpression: `SET ${DISABLE}`,
        ConditionExpression: 'is_active = :true AND consecutive_failures >= :threshold',
        ExpressionAttributeValues: {
          ':false': false,
          ':true': true,
          ':now': nowIso,
          ':threshold': threshold,
          ...RAISE_REVISION.values,
        },
      }),
    );
  },
};
