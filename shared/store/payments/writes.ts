import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import type { Payment } from '../../domain/payments/schema.js';
import { existsAtRevision, ITEM_ABSENT, ITEM_EXISTS, REVISION_BUMP } from '../expressions.js';
import { entity, keys, secondaryIndex } from '../keys.js';
import { revisionOf } from '../records.js';
import type { Item } from '../requests.js';
import { ConditionFailedError, type Store } from '../store.js';
import type { Transaction } from '../unit-of-work.js';

/**
 * Writes of payments (DESIGN D14, D16): a new payment (revision 1) with its subscriber index item, a change
 * conditional on the revision read, the refund reservations held on the payment item, and the lookup items of
 * provider payments, customers and subscriptions (the last with the `created` of the last event applied).
 */

/** The payment item's map of refund reservations: reservation key → `{ amount (minor units), reserved_at_ms }`. */
const RESERVATIONS = 'refund_reservations';

/** One refund reservation as stored. */
export interface StoredReservation {
  amount: number;
  reserved_at_ms: number;
}

/** The refund reservations stored on a payment item, by key (none: empty). */
export function reservationsOf(item: Item): Record<string, StoredReservation> {
  return (item[RESERVATIONS] ?? {}) as Record<string, StoredReservation>;
}

/**
 * Replaces a payment's refund reservations with `reservations` (revision + 1), conditional on the revision of `read`.
 */
export async function writeRefundReservations(
  store: Store,
  teamId: string,
  paymentId: string,
  read: Item,
  reservations: Record<string, StoredReservation>,
): Promise<void> {
  const guard = existsAtRevision(revisionOf(entity.payment, read));
  await store.update({
    Key: keys.payment(teamId, paymentId),
    UpdateExpression: `SET #reservations = :reservations, ${REVISION_BUMP}`,
    ConditionExpression: guard.condition,
    ExpressionAttributeNames: { '#reservations': RESERVATIONS },
    ExpressionAttributeValues: { ':reservations': reservations, ...guard.values },
  });
}

/** Removes reservation `key` of a payment; a reservation already gone is fine. */
export async function releaseRefundReservation(
  store: Store,
  teamId: string,
  paymentId: string,
  key: string,
): Promise<void> {
  try {
    await store.update({
      Key: keys.payment(teamId, paymentId),
      UpdateExpression: 'REMOVE #reservations.#key',
      ConditionExpression: 'attribute_exists(#reservations.#key)',
      ExpressionAttributeNames: { '#reservations': RESERVATIONS, '#key': key },
    });
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
  }
}

/** Adds the put of a new payment (GSI keys for the project's list, revision 1), conditional on its id being free. */
export function putNewPayment(tx: Transaction, teamId: string, payment: Payment): void {
  const item: Item = {
    ...keys.payment(teamId, payment.id),
    entity: entity.payment,
    team_id: teamId,
    [secondaryIndex.partitionKey]: keys.projectPaymentsIndex(teamId, payment.project_id),
    [secondaryIndex.sortKey]: keys.projectPaymentsIndexSortKey(payment.created_at, payment.id),
    ...payment,
    revision: 1,
  };
  tx.put(item, { condition: ITEM_ABSENT });
}

/** Adds the payment's index item in its subscriber's partition, conditional on it being new. */
export function putSubscriberPaymentIndex(tx: Transaction, teamId: string, payment: Payment): void {
  tx.put(
    {
      pk: keys.subscriberPaymentsPartition(teamId, payment.project_id, payment.subscriber_id),
      sk: keys.subscriberPaymentSortKey(payment.created_at, payment.id),
      entity: entity.subscriberPayment,
      team_id: teamId,
      payment_id: payment.id,
    },
    { condition: ITEM_ABSENT },
  );
}

/**
 * Adds the update of a payment to `next` (status, amount, currency, amount refunded, mismatch, `updated_at`; revision +
 * 1), conditional on the revision of `read`, with the provider's refund id when a refund made one, settling reservation
 * `reservationKey`.
 */
export function writePaymentChange(
  tx: Transaction,
  teamId: string,
  read: Item,
  next: Payment,
  providerRefundId: string | null,
  reservationKey: string | null,
): void {
  const guard = existsAtRevision(revisionOf(entity.payment, read));
  const refund = providerRefundId ? ', provider_refund_id = :provider_refund_id' : '';
  const settle = reservationKey ? ' REMOVE #reservations.#reservation_key' : '';
  tx.update(keys.payment(teamId, next.id), {
    expression: `SET #status = :status, #amount = :amount, #currency = :currency, amount_refunded = :amount_refunded, #mismatch = :mismatch, updated_at = :updated_at, ${REVISION_BUMP}${refund}${settle}`,
    condition: guard.condition,
    names: {
      '#status': 'status',
      '#amount': 'amount',
      '#currency': 'currency',
      '#mismatch': 'mismatch',
      ...(reservationKey ? { '#reservations': RESERVATIONS, '#reservation_key': reservationKey } : {}),
    },
    values: {
      ':status': next.status,
      ':amount': next.amount,
      ':currency': next.currency,
      ':amount_refunded': next.amount_refunded,
      ':mismatch': next.mismatch,
      ':updated_at': next.updated_at,
      ...guard.values,
      ...(providerRefundId ? { ':provider_refund_id': providerRefundId } : {}),
    },
  });
}

/**
 * Adds the lookup item of a provider payment (→ payment, subscription), conditional on it being new (a second payment
 * loses).
 */
export function putProviderPaymentRef(
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
    { condition: ITEM_ABSENT },
  );
}

/** Adds the link of a provider customer to the subscriber it is, conditional on it being new. */
export function putProviderCustomer(
  tx: Transaction,
  teamId: string,
  projectId: string,
  provider: PaymentProvider,
  customerId: string,
  subscriberId: string,
): void {
  tx.put(
    {
      ...keys.providerCustomer(teamId, projectId, provider, customerId),
      entity: entity.providerCustomer,
      team_id: teamId,
      project_id: projectId,
      subscriber_id: subscriberId,
    },
    { condition: ITEM_ABSENT },
  );
}

/** Adds the link of a provider subscription to ours (no event applied yet), conditional on it being new. */
export function putProviderSubscriptionLink(
  tx: Transaction,
  teamId: string,
  projectId: string,
  provider: PaymentProvider,
  providerSubscriptionId: string,
  subscriptionId: string,
): void {
  tx.put(
    {
      ...keys.providerSubscription(teamId, projectId, provider, providerSubscriptionId),
      entity: entity.providerSubscription,
      team_id: teamId,
      project_id: projectId,
      subscription_id: subscriptionId,
    },
    { condition: ITEM_ABSENT },
  );
}

/**
 * Adds the move of a provider subscription link's last applied event (`attribute`) to `created` (unix SECONDS),
 * conditional on it not having moved past it meanwhile (a newer event applied concurrently).
 */
export function markProviderEventApplied(
  tx: Transaction,
  teamId: string,
  projectId: string,
  link: { provider: PaymentProvider; providerSubscriptionId: string; attribute: string },
  created: number,
): void {
  tx.update(keys.providerSubscription(teamId, projectId, link.provider, link.providerSubscriptionId), {
    expression: 'SET #last = :created',
    condition: `${ITEM_EXISTS} AND (attribute_not_exists(#last) OR #last <= :created)`,
    names: { '#last': link.attribute },
    values: { ':created': created },
  });
}
