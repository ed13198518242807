import { isoTime } from '../../clock.js';
import type { DeliveryMessage } from '../../runtime.js';
import { parseStoredWebhookEndpoint, type StoredWebhookEndpoint } from '../../domain/webhook-endpoints/record.js';
import type { DeliveryAttempt } from '../../domain/webhook-deliveries/schema.js';
import type { AttemptTransition } from '../../domain/webhook-deliveries/state-machine.js';
import { asDelivery, type StoredDelivery, type StoredDeliveryAttempt } from '../../domain/webhook-deliveries/stored.js';
import { INDEX_PK, INDEX_SK, dueSortKey, pendingIndexOf } from './indexes.js';
import { keys } from '../keys.js';
import { ConditionFailedError, TransactionCanceledError, type Store } from '../store.js';
import type { TransactionItem } from '../requests.js';
import { conditionally } from '../expressions.js';

/** The writes of one delivery attempt on its delivery item (DESIGN D7, D24): the lease, the outcome, the deferral. */

/** When a lease may be taken and until when it holds (epoch ms), as the dispatcher's policy decides. */
export interface LeaseTerms {
  nowMs: number;
  /**
   * The lease runs out then; while in flight the delivery sits in the pending index at this time (the sweeper's cue).
   */
  leaseUntilMs: number;
  /** A pending delivery due at or before this time may be leased (a timer may fire a little early). */
  dueLimitMs: number;
}

/**
 * What {@link deliveryAttempts.leaseWithSlot} found: both taken, the delivery not leasable, the slot refused (the
 * endpoint as found, absent when deleted), or a conflict.
 */
export type LeaseWithSlot =
  | { kind: 'leased' }
  | { kind: 'lease_refused' }
  | { kind: 'slot_refused'; endpoint: StoredWebhookEndpoint | undefined }
  | { kind: 'conflict' };

/**
 * The lease update: `delivering` with `message.attempt` attempts, on condition that the delivery is pending with
 * `attempt - 1` attempts and due by `dueLimitMs`, or that a previous holder of this same attempt let its lease run
 * out. With `maxLog`, it also requires room for one more record in the attempt log (fewer than `maxLog`).
 */
function leaseUpdate(message: DeliveryMessage, terms: LeaseTerms, maxLog?: number) {
  const condition =
    '(#status = :pending AND attempts = :previous AND due_at_ms <= :due_limit) OR (#status = :delivering AND attempts = :attempt AND lease_expires_at_ms < :now)';
  return {
    Key: keys.delivery(message.team_id, message.delivery_id),
    UpdateExpression: `SET #status = :delivering, attempts = :attempt, lease_expires_at_ms = :lease, ${INDEX_SK} = :sweep REMOVE sweeper_requeues`,
    ConditionExpression:
      maxLog === undefined
        ? condition
        : `(${condition}) AND (attribute_not_exists(attempt_log) OR size(attempt_log) < :log_room)`,
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':delivering': 'delivering',
      ':pending': 'pending',
      ':attempt': message.attempt,
      ':previous': message.attempt - 1,
      ':lease': terms.leaseUntilMs,
      ':now': terms.nowMs,
      ':due_limit': terms.dueLimitMs,
      ':sweep': dueSortKey(terms.leaseUntilMs, message.delivery_id),
      ...(maxLog === undefined ? {} : { ':log_room': maxLog }),
    },
  };
}

/** The `SET` part, values and `REMOVE` part of an attempt's outcome, by the state machine's transition. */
function outcomeUpdate(message: DeliveryMessage, transition: AttemptTransition) {
  if (transition.outcome === 'succeeded') {
    return {
      expression: '#status = :succeeded, next_attempt_at = :null, due_at_ms = :null, lease_expires_at_ms = :null',
      values: { ':succeeded': 'succeeded' } as Record<string, unknown>,
      remove: `${INDEX_PK}, ${INDEX_SK}`,
    };
  }
  const pending = {
    ':pending': 'pending',
    ':due': transition.dueAtMs,
    ':index': pendingIndexOf(message.delivery_id),
    ':sort': dueSortKey(transition.dueAtMs, message.delivery_id),
  };
  if (transition.outcome === 'retry_scheduled') {
    return {
      expression: `#status = :pending, next_attempt_at = :next, due_at_ms = :due, lease_expires_at_ms = :null, ${INDEX_PK} = :index, ${INDEX_SK} = :sort`,
      values: { ...pending, ':next': isoTime(transition.nextAttemptAtMs) } as Record<string, unknown>,
    };
  }
  return {
    expression: `#status = :pending, next_attempt_at = :null, due_at_ms = :due, lease_expires_at_ms = :null, ${INDEX_PK} = :index, ${INDEX_SK} = :sort`,
    values: pending as Record<string, unknown>,
  };
}

/**
 * The delivery attempt adapter: an attempt's lease (alone or with the endpoint's slot), its outcome and its deferral,
 * each a conditional write on the delivery item.
 */
export const deliveryAttempts = {
  /**
   * Takes the `delivering` lease for attempt `message.attempt` with one conditional update (see {@link leaseUpdate}),
   * so a duplicate or stale message never causes a second concurrent attempt (DESIGN D7). Returns the delivery
   * after the update, or null when it is not ours.
   */
  async lease(store: Store, message: DeliveryMessage, terms: LeaseTerms): Promise<StoredDelivery | null> {
    try {
      const attributes = await store.update({ ...leaseUpdate(message, terms), ReturnValues: 'ALL_NEW' });
      return asDelivery(attributes!);
    } catch (error) {
      if (error instanceof ConditionFailedError) return null;
      throw error;
    }
  },

  /**
   * Takes the lease (with room in the attempt log for one more record: fewer than `maxLog`) and the endpoint's slot
   * `slot` (a transaction item that reports the endpoint as found when refused) in ONE TransactWriteItems, without
   * reading the delivery (DESIGN D7, D24). Nothing is written unless both are taken. Throws only on store errors.
   */
  async leaseWithSlot(
    store: Store,
    message: DeliveryMessage,
    slot: TransactionItem,
    terms: LeaseTerms,
    maxLog: number,
  ): Promise<LeaseWithSlot> {
    try {
      await store.transactWrite([{ Update: leaseUpdate(message, terms, maxLog) }, slot]);
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
  },

  /**
   * Records an attempt's outcome (`transition`; the attempt log `log`, or `'append'`: `record` appended to the stored
   * log unread) if this attempt's lease is still held, with `alongside` in the same transaction when given (when only
   * `alongside`'s condition fails, the outcome is written alone). Returns false when the lease was lost.
   */
  async recordOutcome(
    store: Store,
    message: DeliveryMessage,
    record: DeliveryAttempt,
    log: readonly StoredDeliveryAttempt[] | 'append',
    transition: AttemptTransition,
    alongside?: TransactionItem,
  ): Promise<boolean> {
    const update = outcomeUpdate(message, transition);
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
  },

  /**
   * Puts attempt `message.attempt` off without counting it (DESIGN D24): pending with `attempt - 1` attempts, due
   * at `dueAtMs` (epoch ms), in the pending index then. `leased`: the lease is given back (the delivery must be
   * `delivering` this attempt); otherwise it must still be pending with `attempt - 1` attempts. Returns false when
   * the delivery was no longer in that state.
   */
  defer(store: Store, message: DeliveryMessage, dueAtMs: number, options: { leased: boolean }): Promise<boolean> {
    return conditionally(
      store.update({
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
      }),
    );
  },
};
