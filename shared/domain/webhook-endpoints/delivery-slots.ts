import { isoTime } from '../../clock.js';
import type { Runtime } from '../../runtime.js';
import { keys } from '../../store/keys.js';
import { ConditionFailedError, type Store } from '../../store/store.js';
import type { Key, TransactionItem } from '../../store/requests.js';
import { AUTO_DISABLE_THRESHOLD } from './policy.js';
import { parseStoredFailureCount, parseStoredWebhookEndpoint, type StoredWebhookEndpoint } from './record.js';
import { RAISE_REVISION, rememberWebhookEndpoint } from './repository.js';

/**
 * What delivery attempts write on their endpoint (DESIGN D8, D24): the consecutive-failure counter with
 * auto-disable, and the per-endpoint concurrency slots (take, refuse, reclaim, give back).
 */

/**
 * The endpoint update that ends a successful attempt (DESIGN D8, D24), for the dispatcher's outcome
 * transaction: gives back the delivery's slot and resets `consecutive_failures` to 0, on condition that
 * the endpoint still exists (a condition failure means it was deleted meanwhile).
 */
export function successfulAttemptUpdate(teamId: string, endpointId: string, deliveryId: string): TransactionItem {
  return {
    Update: {
      Key: keys.webhookEndpoint(teamId, endpointId),
      UpdateExpression: 'SET consecutive_failures = :zero REMOVE in_flight.#delivery',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#delivery': deliveryId },
      ExpressionAttributeValues: { ':zero': 0 },
    },
  };
}

/**
 * Counts one failed attempt on its endpoint and gives back the delivery's slot, in one update
 * (interface "States", DESIGN D8, D24); the failure that reaches {@link AUTO_DISABLE_THRESHOLD} disables
 * the endpoint (`is_active=false`, `disabled_at`), and so does a `gone` answer (410, DESIGN D29) at once.
 * A deleted endpoint or a lost race is ignored. Throws only on store errors.
 */
export async function recordFailedAttempt(
  runtime: Pick<Runtime, 'store' | 'clock'>,
  teamId: string,
  endpointId: string,
  deliveryId: string,
  options: { gone?: boolean } = {},
): Promise<void> {
  const Key = keys.webhookEndpoint(teamId, endpointId);
  try {
    if (options.gone) {
      const now = isoTime(runtime.clock.nowMs());
      await runtime.store.update({
        Key,
        UpdateExpression: `SET is_active = :false, disabled_at = :now, updated_at = :now, ${RAISE_REVISION.clause} ADD consecutive_failures :one REMOVE in_flight.#delivery`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#delivery': deliveryId },
        ExpressionAttributeValues: { ':false': false, ':now': now, ':one': 1, ...RAISE_REVISION.values },
      });
      return;
    }
    const attributes = await runtime.store.update({
      Key,
      UpdateExpression: 'ADD consecutive_failures :one REMOVE in_flight.#delivery',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#delivery': deliveryId },
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    });
    if (parseStoredFailureCount(attributes!, Key) >= AUTO_DISABLE_THRESHOLD) {
      const now = isoTime(runtime.clock.nowMs());
      await runtime.store.update({
        Key,
        UpdateExpression: `SET is_active = :false, disabled_at = :now, updated_at = :now, ${RAISE_REVISION.clause}`,
        ConditionExpression: 'is_active = :true AND consecutive_failures >= :threshold',
        ExpressionAttributeValues: {
          ':false': false,
          ':true': true,
          ':now': now,
          ':threshold': AUTO_DISABLE_THRESHOLD,
          ...RAISE_REVISION.values,
        },
      });
    }
  } catch (error) {
    ignoreCondition(error);
  }
}

/** What {@link acquireDeliverySlot} found: a slot (with the endpoint as stored), a full cap, or no active endpoint. */
export type SlotAcquisition =
  { kind: 'acquired'; endpoint: StoredWebhookEndpoint } | { kind: 'full' } | { kind: 'stopped' };

/**
 * Takes an endpoint concurrency slot for `deliveryId` until `leaseUntilMs` (epoch ms) in one conditional update that returns the endpoint (D24, D14);
 * expired slots are reclaimed once when full. Returns `acquired`, `full` or `stopped` (deleted or disabled). Throws only on store errors.
 */
export async function acquireDeliverySlot(
  store: Store,
  teamId: string,
  endpointId: string,
  deliveryId: string,
  leaseUntilMs: number,
  nowMs: number,
): Promise<SlotAcquisition> {
  const Key = keys.webhookEndpoint(teamId, endpointId);
  const attempt = async () =>
    parseStoredWebhookEndpoint(
      (await store.update({
        Key,
        UpdateExpression: 'SET in_flight.#delivery = :lease',
        ConditionExpression: `attribute_exists(pk) AND is_active = :true AND ${SLOT_ROOM_CONDITION}`,
        ExpressionAttributeNames: { '#delivery': deliveryId },
        ExpressionAttributeValues: { ':lease': leaseUntilMs, ':true': true },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }))!,
    );
  for (let round = 0; ; round++) {
    try {
      const endpoint = await attempt();
      rememberWebhookEndpoint(store, endpoint);
      return { kind: 'acquired', endpoint };
    } catch (error) {
      if (error instanceof ConditionFailedError) {
        const current = error.item && parseStoredWebhookEndpoint(error.item);
        if (!current || !current.is_active) return { kind: 'stopped' };
        const expired = Object.entries(current.in_flight).filter(([, until]) => until < nowMs);
        if (round > 0 || expired.length === 0) return { kind: 'full' };
        await reclaimSlots(store, Key, expired);
        continue;
      }
      throw error;
    }
  }
}

/** A slot is free for delivery `#delivery`: it holds one already, or fewer than the cap are taken (D24). */
const SLOT_ROOM_CONDITION = '(attribute_exists(in_flight.#delivery) OR size(in_flight) < max_concurrency)';

/**
 * {@link acquireDeliverySlot}'s slot as a transaction item built from the dispatcher's cached `endpoint`: requires it active, at that copy's `revision`
 * (so url and secret are current) and with room. A refused condition returns the endpoint as found ({@link slotRefusal}).
 */
export function deliverySlotItem(
  endpoint: StoredWebhookEndpoint,
  deliveryId: string,
  leaseUntilMs: number,
): TransactionItem {
  return {
    Update: {
      Key: keys.webhookEndpoint(endpoint.team_id, endpoint.id),
      UpdateExpression: 'SET in_flight.#delivery = :lease',
      ConditionExpression: `attribute_exists(pk) AND is_active = :true AND revision = :revision AND ${SLOT_ROOM_CONDITION}`,
      ExpressionAttributeNames: { '#delivery': deliveryId },
      ExpressionAttributeValues: { ':lease': leaseUntilMs, ':true': true, ':revision': endpoint.revision },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * Why {@link deliverySlotItem} was refused, from the endpoint as found (`undefined`: deleted) and the
 * copy it was built from: `stopped` (deleted or disabled), `stale` (the copy is of another revision:
 * build the item again from the endpoint as found), `reclaim` (full, but
 * holding slots whose lease ran out before `nowMs`, epoch ms: take the slot the long way, which
 * reclaims them) or `full`.
 */
export function slotRefusal(
  endpoint: StoredWebhookEndpoint | undefined,
  used: StoredWebhookEndpoint,
  nowMs: number,
): 'stopped' | 'stale' | 'reclaim' | 'full' {
  if (!endpoint || !endpoint.is_active) return 'stopped';
  if (endpoint.revision !== used.revision) return 'stale';
  return Object.values(endpoint.in_flight).some((until) => until < nowMs) ? 'reclaim' : 'full';
}

/** Removes slots whose lease ran out, each on condition that it still holds the lease that was read. */
async function reclaimSlots(store: Store, Key: Key, expired: ReadonlyArray<readonly [string, number]>): Promise<void> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const conditions: string[] = [];
  expired.forEach(([deliveryId, until], index) => {
    names[`#d${index}`] = deliveryId;
    values[`:u${index}`] = until;
    conditions.push(`in_flight.#d${index} = :u${index}`);
  });
  await store
    .update({
      Key,
      UpdateExpression: `REMOVE ${expired.map((_, index) => `in_flight.#d${index}`).join(', ')}`,
      ConditionExpression: conditions.join(' AND '),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    })
    .catch(ignoreCondition);
}

/** Gives back a slot taken by {@link acquireDeliverySlot} without counting an outcome (the attempt was not made). */
export async function releaseDeliverySlot(
  store: Store,
  teamId: string,
  endpointId: string,
  deliveryId: string,
): Promise<void> {
  await store
    .update({
      Key: keys.webhookEndpoint(teamId, endpointId),
      UpdateExpression: 'REMOVE in_flight.#delivery',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#delivery': deliveryId },
    })
    .catch(ignoreCondition);
}

function ignoreCondition(error: unknown): void {
  if (!(error instanceof ConditionFailedError)) throw error;
}
