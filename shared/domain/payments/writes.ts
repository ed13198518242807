import { putNewPayment, putSubscriberPaymentIndex, writePaymentChange } from '../../store/payments/writes.js';
import type { Transaction } from '../../store/unit-of-work.js';
import type { SubscriptionChange } from '../subscriptions/writes.js';
import { writePaymentMetrics } from '../metrics/writes.js';
import { toPayment, type StoredPayment } from './queries.js';
import type { Payment, PaymentStatus } from './schema.js';

/**
 * The writes of payments (DESIGN D14, D16): a new payment with its index item, metrics and event, an update conditional
 * on its revision with its metrics.
 */

/**
 * The data of a `payment.*` event: the payment, its subscription after the change, its subscriber (consented contact
 * data; the fan-out redacts per endpoint owner, D10).
 */
export function eventData(payment: Payment, change: SubscriptionChange) {
  return { payment, subscription: change.after, subscriber: change.subscriber };
}

/** The `payment.*` event of a payment's current status. */
export const eventOf = (status: PaymentStatus) => `payment.${status}` as const;

/** Adds a new payment, its subscriber index item and its event to `tx`. */
export function writeNewPayment(tx: Transaction, teamId: string, payment: Payment, change: SubscriptionChange): void {
  putNewPayment(tx, teamId, payment);
  writePaymentMetrics(tx, teamId, null, payment);
  putSubscriberPaymentIndex(tx, teamId, payment);
  tx.emit({ type: eventOf(payment.status), projectId: payment.project_id, data: eventData(payment, change) });
}

/**
 * Adds the update of a payment to `next` (conditional on the revision read) to `tx`, with the provider's
 * refund id when a refund made one, settling the refund's reservation `reservationKey` when it had one.
 */
export function writePaymentUpdate(
  tx: Transaction,
  teamId: string,
  item: StoredPayment,
  next: Payment,
  providerRefundId: string | null = null,
  reservationKey: string | null = null,
): void {
  writePaymentMetrics(tx, teamId, toPayment(item), next);
  writePaymentChange(tx, teamId, item, next, providerRefundId, reservationKey);
}

/**
 * Adds a new payment of a subscription being created (its first payment, e.g. a Stripe Checkout in
 * payment mode) to the creation's transaction: the payment, its subscriber index item and its
 * `payment.*` event (DESIGN D16). `change` is the creation as the subscriptions module reports it.
 */
export function addPaymentOfNewSubscription(
  tx: Transaction,
  teamId: string,
  payment: Payment,
  change: SubscriptionChange,
): void {
  writeNewPayment(tx, teamId, payment, change);
}
