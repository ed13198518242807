import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import { entity, keys, secondaryIndex } from '../../store/keys.js';
import { revisionOf } from '../../store/records.js';
import type { Transaction } from '../../store/unit-of-work.js';
import type { SubscriptionChange } from '../subscriptions/writes.js';
import { writePaymentMetrics } from '../metrics/writes.js';
import { toPayment, type StoredPayment } from './queries.js';
import type { Payment, PaymentStatus } from './schema.js';
import { settleReservationClause } from './refund-reservations.js';

/** The writes of payments (DESIGN D14, D16): a new payment with its index item and event, an update conditional on its revision, the provider payment lookup. */

/** The stored item of a new payment (GSI keys for the project's list, revision 1). */
function storedPayment(teamId: string, payment: Payment): StoredPayment {
  return {
    ...keys.payment(teamId, payment.id),
    entity: entity.payment,
    team_id: teamId,
    [secondaryIndex.partitionKey]: keys.projectPaymentsIndex(teamId, payment.project_id),
    [secondaryIndex.sortKey]: keys.projectPaymentsIndexSortKey(payment.created_at, payment.id),
    ...payment,
    revision: 1,
  };
}

/** The data of a `payment.*` event: the payment, its subscription after the change, its subscriber (consented contact data; the fan-out redacts per endpoint owner, D10). */
export function eventData(payment: Payment, change: SubscriptionChange) {
  return { payment, subscription: change.after, subscriber: change.subscriber };
}

/** The `payment.*` event of a payment's current status. */
export const eventOf = (status: PaymentStatus) => `payment.${status}` as const;

/** Adds a new payment, its subscriber index item and its event to `tx`. */
export function writeNewPayment(tx: Transaction, teamId: string, payment: Payment, change: SubscriptionChange): void {
  tx.put(storedPayment(teamId, payment), { condition: 'attribute_not_exists(pk)' });
  writePaymentMetrics(tx, teamId, null, payment);
  tx.put(
    {
      pk: keys.subscriberPaymentsPartition(teamId, payment.project_id, payment.subscriber_id),
      sk: keys.subscriberPaymentSortKey(payment.created_at, payment.id),
      entity: entity.subscriberPayment,
      team_id: teamId,
      payment_id: payment.id,
    },
    { condition: 'attribute_not_exists(pk)' },
  );
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
  const revision = revisionOf(entity.payment, item);
  const settle = reservationKey ? settleReservationClause(reservationKey) : null;
  writePaymentMetrics(tx, teamId, toPayment(item), next);
  tx.update(keys.payment(teamId, next.id), {
    expression: `SET #status = :status, amount_refunded = :amount_refunded, updated_at = :updated_at, revision = :next_revision${providerRefundId ? ', provider_refund_id = :provider_refund_id' : ''}${settle ? ` ${settle.clause}` : ''}`,
    condition: 'attribute_exists(pk) AND revision = :revision',
    names: { '#status': 'status', ...settle?.names },
    values: {
      ':status': next.status,
      ':amount_refunded': next.amount_refunded,
      ':updated_at': next.updated_at,
      ':revision': revision,
      ':next_revision': revision + 1,
      ...(providerRefundId ? { ':provider_refund_id': providerRefundId } : {}),
    },
  });
}

/**
 * Adds to `tx` the lookup item of a provider payment (`keys.providerPayment` → `payment_id`, `subscription_id`), conditional
 * on it not existing (a second payment for the same provider payment is a lost race).
 */
export function addProviderPaymentRef(
  tx: Transaction,
  teamId: string,
  payment: Payment,
  provider: PaymentProvider,
  providerPaymentId: string,
): void {
  tx.put(
    {
      ...keys.providerPayment(teamId, payment.project_id, provider, providerPaymentId),
      entity: entity.providerPayment,
      team_id: teamId,
      project_id: payment.project_id,
      payment_id: payment.id,
      subscription_id: payment.subscription_id,
    },
    { condition: 'attribute_not_exists(pk)' },
  );
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
