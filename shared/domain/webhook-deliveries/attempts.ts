import { isoTime } from '../../clock.js';
import type { DeliveryMessage } from '../../runtime.js';
import { keys } from '../../store/keys.js';
import { ConditionFailedError, TransactionCanceledError, type Store } from '../../store/store.js';
import type { TransactionItem } from '../../store/requests.js';
import { parseStoredWebhookEndpoint, type StoredWebhookEndpoint } from '../webhook-endpoints/record.js';
import { LEASE_MS, MAX_ATTEMPT_LOG, TIMER_EARLY_TOLERANCE_MS } from './policy.js';
import type { DeliveryAttempt } from './schema.js';
import type { AttemptTransition } from './state-machine.js';
import {
  INDEX_PK,
  INDEX_SK,
  asDelivery,
  dueSortKey,
  pendingIndexOf,
  type StoredDelivery,
  type StoredDeliveryAttempt,
} from './stored.js';

/** The writes of one attempt (DESIGN D7, D24): the lease (with the endpoint's slot), the outcome, the deferral. */

/**
 * Takes the `delivering` lease for attempt `message.attempt` with one conditional update, so a
 * duplicate or stale message never causes a second concurrent attempt (DESIGN D7). Succeeds when the
 * delivery is pending with `attempt - 1` attempts made and due (up to {@link TIMER_EARLY_TOLERANCE_MS}
 * early), or when a previous holder of this same attempt crashed (its lease expired). The lease lasts
 * {@link LEASE_MS}. Returns the delivery after the update, or null when it is not ours.
 */
export async function takeLease(store: Store, message: DeliveryMessage, nowMs: number): Promise<StoredDelivery | null> {
  try {
    const attributes = await store.update({ ...leaseUpdate(message, nowMs), ReturnValues: 'ALL_NEW' });
    return asDelivery(attributes!);
  } catch (error) {
    if (error instanceof ConditionFailedError) return null;
    throw error;
  }
}

/**
 * The lease update of {@link takeLease}. With `logRoom`, it also requires room for one more record in
 * the attempt log (fewer than {@link MAX_ATTEMPT_LOG}), so an outcome can append its record without
 * having read the log.
 */
function leaseUpdate(message: DeliveryMessage, nowMs: number, options: { logRoom?: boolean } = {}) {
  const condition =
    '(#status = :pending AND attempts = :previous AND due_at_ms <= :due_limit) OR (#status = :delivering AND attempts = :attempt AND lease_expires_at_ms < :now)';
  return {
    Key: keys.delivery(message.team_id, message.delivery_id),
    UpdateExpression: `SET #status = :delivering, attempts = :attempt, lease_expires_at_ms = :lease, ${INDEX_SK} = :sweep REMOVE sweeper_requeues`,
    ConditionExpression: options.logRoom
      ? `(${condition}) AND (attribute_not_exists(attempt_log) OR size(attempt_log) < :log_room)`
      : condition,
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':delivering': 'delivering',
      ':pending': 'pending',
      ':attempt': message.attempt,
      ':previous': message.attempt - 1,
      ':lease': nowMs + LEASE_MS,
      ':now': nowMs,
      ':due_limit': nowMs + TIMER_EARLY_TOLERANCE_MS,
      // While in flight the row sits in the pending index at its lease expiry, so the sweeper re-queues a crashed attempt.
      ':sweep': dueSortKey(nowMs + LEASE_MS, message.delivery_id),
      ...(options.logRoom ? { ':log_room': MAX_ATTEMPT_LOG } : {}),
    },
  };
}

/** What {@link takeLeaseWithSlot} found: both taken, the delivery not leasable, the slot refused (the endpoint as found, absent when deleted), or a conflict. */
export type LeaseWithSlot =
  | { kind: 'leased' }
  | { kind: 'lease_refused' }
  | { kind: 'slot_refused'; endpoint: StoredWebhookEndpoint | undefined }
  | { kind: 'conflict' };

/**
 * Takes the lease of attempt `message.attempt` ({@link takeLease}'s conditions, plus room in the attempt
 * log) and the endpoint's concurrency slot `slot` (a transaction item that asks for the endpoint as
 * found when its condition fails) in ONE TransactWriteItems, without reading the delivery
 * (DESIGN D7, D24). Nothing is written unless both are taken. Throws only on store errors.
 */
export async function takeLeaseWithSlot(
  store: Store,
  message: DeliveryMessage,
  slot: TransactionItem,
  nowMs: number,
): Promise<LeaseWithSlot> {
  try {
    await store.transactWrite([{ Update: leaseUpdate(message, nowMs, { logRoom: true }) }, slot]);
    return { kind: 'leased' };
  } catch (error) {
    if (error instanceof ConditionFailedError) {
      if (error.failedItems.includes(0)) return { kind: 'lease_refused' };
      const found = error.itemsAsFound[1];
      return { kind: 'slot_refused', endpoint: found && parseStoredWebhookEndpoint(found) };
    }
    if (error instanceof TransactionCanceledError) return { kind: 'conflict' };
    throw error;
  }
}

/**
 * Records an attempt's outcome (`transition`, attempt log — `'append'` adds `record` to the stored log) if this attempt's lease is still held.
 * Returns false when the lease was lost (another dispatcher took the attempt over and records it).
 */
export async function writeAttemptOutcome(
  store: Store,
  message: DeliveryMessage,
  record: DeliveryAttempt,
  log: readonly StoredDeliveryAttempt[] | 'append',
  transition: AttemptTransition,
  alongside?: TransactionItem,
): Promise<boolean> {
  let update: { expression: string; values: Record<string, unknown>; remove?: string };
  if (transition.outcome === 'succeeded') {
    update = {
      expression: '#status = :succeeded, next_attempt_at = :null, due_at_ms = :null, lease_expires_at_ms = :null',
      values: { ':succeeded': 'succeeded' },
      remove: `${INDEX_PK}, ${INDEX_SK}`,
    };
  } else if (transition.outcome === 'retry_scheduled') {
    update = {
      expression: `#status = :pending, next_attempt_at = :next, due_at_ms = :due, lease_expires_at_ms = :null, ${INDEX_PK} = :index, ${INDEX_SK} = :sort`,
      values: {
        ':pending': 'pending',
        ':next': isoTime(transition.nextAttemptAtMs),
        ':due': transition.dueAtMs,
        ':index': pendingIndexOf(message.delivery_id),
        ':sort': dueSortKey(transition.dueAtMs, message.delivery_id),
      },
    };
  } else {
    update = {
      expression: `#status = :pending, next_attempt_at = :null, due_at_ms = :due, lease_expires_at_ms = :null, ${INDEX_PK} = :index, ${INDEX_SK} = :sort`,
      values: {
        ':pending': 'pending',
        ':due': transition.dueAtMs,
        ':index': pendingIndexOf(message.delivery_id),
        ':sort': dueSortKey(transition.dueAtMs, message.delivery_id),
      },
    };
  }
  // A lease taken with room in the log (takeLeaseWithSlot) appends the record without having read the log.
  const appending = log === 'append';
  const logClause = appending
    ? 'attempt_log = list_append(if_not_exists(attempt_log, :no_log), :log)'
    : 'attempt_log = :log';
  const outcome = {
    Key: keys.delivery(message.team_id, message.delivery_id),
    UpdateExpression: `SET ${update.expression}, last_attempt_at = :attempted_at, ${logClause}${update.remove ? ` REMOVE ${update.remove}` : ''}`,
    ConditionExpression: '#status = :delivering AND attempts = :attempt',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ...update.values,
      ':null': null,
      ':delivering': 'delivering',
      ':attempt': message.attempt,
      ':attempted_at': record.attempted_at,
      ...(appending ? { ':log': [record], ':no_log': [] } : { ':log': log }),
    },
  };
  try {
    if (alongside) {
      try {
        await store.transactWrite([{ Update: outcome }, alongside]);
        return true;
      } catch (error) {
        // Only the companion's condition failed (its item is gone): record the outcome alone.
        if (!(error instanceof ConditionFailedError && !error.failedItems.includes(0))) throw error;
      }
    }
    await store.update(outcome);
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}

/**
 * Puts attempt `message.attempt` off without counting it (DESIGN D24: the endpoint's concurrency cap
 * was full): pending with `attempt - 1` attempts, due at `dueAtMs` (epoch ms), in the pending index at
 * that time. `leased`: the lease was taken and is given back (`delivering` with this attempt); otherwise
 * the delivery is still pending with `attempt - 1` attempts (the lease and slot transaction was refused
 * on the slot alone). Returns false when the delivery was no longer in that state.
 */
export async function writeDeferral(
  store: Store,
  message: DeliveryMessage & { kind: 'attempt' },
  dueAtMs: number,
  options: { leased: boolean } = { leased: true },
): Promise<boolean> {
  try {
    await store.update({
      Key: keys.delivery(message.team_id, message.delivery_id),
      UpdateExpression: `SET #status = :pending, attempts = :previous, next_attempt_at = :next, due_at_ms = :due, lease_expires_at_ms = :null, ${INDEX_PK} = :index, ${INDEX_SK} = :sort`,
      ConditionExpression: options.leased
        ? '#status = :delivering AND attempts = :attempt'
        : '#status = :pending AND attempts = :previous',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':pending': 'pending',
        ':previous': message.attempt - 1,
        ':next': isoTime(dueAtMs),
        ':due': dueAtMs,
        ':null': null,
        ':index': pendingIndexOf(message.delivery_id),
        ':sort': dueSortKey(dueAtMs, message.delivery_id),
        ...(options.leased ? { ':delivering': 'delivering', ':attempt': message.attempt } : {}),
      },
    });
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}
