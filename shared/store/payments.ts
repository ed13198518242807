import type { PaymentProvider } from '../catalogues/payment-providers.js';
import {
  parseStoredProviderCustomer,
  parseStoredProviderPayment,
  parseStoredSubscriberPayment,
} from '../domain/payments/record.js';
import type { Payment } from '../domain/payments/schema.js';
import { existsAtRevision, ITEM_ABSENT, ITEM_EXISTS, REVISION_BUMP } from './expressions.js';
import { entity, keys, secondaryIndex, sortKeyPrefix } from './keys.js';
import { decodeCursor, encodeCursor, type Page } from './pages.js';
import { revisionOf } from './records.js';
import type { Item } from './requests.js';
import { ConditionFailedError, type Store } from './store.js';
import { projectExists } from './subscriptions/reads.js';
import type { Transaction } from './unit-of-work.js';

/**
 * The store of payments (DESIGN D12, D14, D16): one item per payment (`keys.payment`, with `revision` and its
 * refund reservations); a project's listed through the sparse GSI (sort key = creation time, id), a subscriber's
 * through index items in its per-project partition; provider payments, customers and subscriptions found by
 * their lookup items.
 */

/** The stored payment item (strongly consistent), or undefined. */
export async function readPayment(store: Store, teamId: string, paymentId: string): Promise<Item | undefined> {
  return store.get(keys.payment(teamId, paymentId));
}

/**
 * A sort-key condition over `attribute` for a date range (`from` inclusive, `to` exclusive; keys are
 * `<prefix><time>#<id>`, so the bare `<prefix><time>` bounds sort before every key of that time).
 */
function rangeCondition(
  attribute: string,
  prefix: string,
  from: string | null,
  to: string | null,
): { expression: string; values: Record<string, unknown> } {
  if (from !== null && to !== null)
    return {
      expression: `${attribute} BETWEEN :from AND :to`,
      values: { ':from': `${prefix}${from}`, ':to': `${prefix}${to}` },
    };
  if (from !== null) return { expression: `${attribute} >= :from`, values: { ':from': `${prefix}${from}` } };
  if (to !== null) return { expression: `${attribute} < :to`, values: { ':to': `${prefix}${to}` } };
  return { expression: `begins_with(${attribute}, :prefix)`, values: { ':prefix': prefix } };
}

/** What {@link listPaymentsOfProject} reads: a page, a creation-time range as keys hold times (ISO 8601), filters. */
export interface PaymentListQuery {
  /** Only this subscriber's payments (its index items, then one BatchGet), or null for the project's. */
  subscriberId: string | null;
  /** Created at or after (inclusive), before (exclusive); null: open. */
  from: string | null;
  to: string | null;
  status?: string;
  provider?: string;
  limit: number;
  cursor?: string;
}

/**
 * A page of a project's payments, newest first, in `[from, to)`, filtered by status and provider (a page may be
 * short with `next_cursor` set), mapped by `map`; null when the project is gone. Errors: VALIDATION_FAILED (cursor).
 */
export async function listPaymentsOfProject(
  store: Store,
  teamId: string,
  projectId: string,
  query: PaymentListQuery,
  map: (item: Item) => Payment,
): Promise<Page<Payment> | null> {
  const { from, to } = query;
  const found = projectExists(store, teamId, projectId);
  if (query.subscriberId) {
    const partition = keys.subscriberPaymentsPartition(teamId, projectId, query.subscriberId);
    const startKey = decodeCursor(query.cursor, partition, { sortKeyPrefix: sortKeyPrefix.subscriberPayment });
    const range = rangeCondition('sk', sortKeyPrefix.subscriberPayment, from, to);
    const [exists, index] = await Promise.all([
      found,
      store.query({
        KeyConditionExpression: `pk = :pk AND ${range.expression}`,
        ExpressionAttributeValues: { ':pk': partition, ...range.values },
        ScanIndexForward: false,
        Limit: query.limit,
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }),
    ]);
    if (!exists) return null;
    const ids = index.items.map((item) => parseStoredSubscriberPayment(item).payment_id);
    const items = await store.batchGet(ids.map((id) => keys.payment(teamId, id)));
    const byId = new Map(items.map(map).map((payment) => [payment.id, payment]));
    const data = ids.flatMap((id) => {
      const payment = byId.get(id);
      return payment &&
        (!query.status || payment.status === query.status) &&
        (!query.provider || payment.provider === query.provider)
        ? [payment]
        : [];
    });
    return { data, next_cursor: encodeCursor(index.lastEvaluatedKey) };
  }
  const partition = keys.projectPaymentsIndex(teamId, projectId);
  const startKey = decodeCursor(query.cursor, partition, {
    partitionAttribute: secondaryIndex.partitionKey,
    keyAttributes: secondaryIndex.cursorAttributes,
    sortKeyPrefix: sortKeyPrefix.payment,
  });
  const range = from !== null || to !== null ? rangeCondition('#gsi_sk', '', from, to) : null;
  const filters: string[] = [];
  const names: Record<string, string> = {
    '#gsi_pk': secondaryIndex.partitionKey,
    ...(range ? { '#gsi_sk': secondaryIndex.sortKey } : {}),
  };
  const values: Record<string, unknown> = { ':pk': partition, ...range?.values };
  if (query.status) {
    filters.push('#status = :status');
    names['#status'] = 'status';
    values[':status'] = query.status;
  }
  if (query.provider) {
    filters.push('provider = :provider');
    values[':provider'] = query.provider;
  }
  const [exists, result] = await Promise.all([
    found,
    store.query({
      IndexName: secondaryIndex.name,
      KeyConditionExpression: range ? `#gsi_pk = :pk AND ${range.expression}` : '#gsi_pk = :pk',
      FilterExpression: filters.length ? filters.join(' AND ') : undefined,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
      Limit: query.limit,
      ExclusiveStartKey: startKey,
    }),
  ]);
  if (!exists) return null;
  return { data: result.items.map(map), next_cursor: encodeCursor(result.lastEvaluatedKey) };
}

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

/** Replaces a payment's refund reservations with `reservations` (revision + 1), conditional on the revision of `read`. */
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
 * Adds the update of a payment to `next` (status, amount refunded, `updated_at`; revision + 1), conditional on the
 * revision of `read`, with the provider's refund id when a refund made one, settling reservation `reservationKey`.
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
    expression: `SET #status = :status, amount_refunded = :amount_refunded, updated_at = :updated_at, ${REVISION_BUMP}${refund}${settle}`,
    condition: guard.condition,
    names: {
      '#status': 'status',
      ...(reservationKey ? { '#reservations': RESERVATIONS, '#reservation_key': reservationKey } : {}),
    },
    values: {
      ':status': next.status,
      ':amount_refunded': next.amount_refunded,
      ':updated_at': next.updated_at,
      ...guard.values,
      ...(providerRefundId ? { ':provider_refund_id': providerRefundId } : {}),
    },
  });
}

/** The lookup of a provider payment: our payment and the subscription it pays for, or undefined (strongly consistent). */
export async function readProviderPaymentRef(
  store: Store,
  teamId: string,
  projectId: string,
  provider: PaymentProvider,
  providerPaymentId: string,
): Promise<{ payment_id: string; subscription_id: string } | undefined> {
  const item = await store.get(keys.providerPayment(teamId, projectId, provider, providerPaymentId));
  return item ? parseStoredProviderPayment(item) : undefined;
}

/** Adds the lookup item of a provider payment (→ payment, subscription), conditional on it being new (a second payment loses). */
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

/** The subscriber a provider customer is (its link item, strongly consistent), or undefined. */
export async function readProviderCustomerSubscriber(
  store: Store,
  teamId: string,
  projectId: string,
  provider: PaymentProvider,
  customerId: string,
): Promise<string | undefined> {
  const item = await store.get(keys.providerCustomer(teamId, projectId, provider, customerId));
  return item ? parseStoredProviderCustomer(item).subscriber_id : undefined;
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

/** The link item of a provider subscription (strongly consistent), or undefined when none of ours has that id. */
export async function readProviderSubscriptionLink(
  store: Store,
  teamId: string,
  projectId: string,
  provider: PaymentProvider,
  providerSubscriptionId: string,
): Promise<Item | undefined> {
  return store.get(keys.providerSubscription(teamId, projectId, provider, providerSubscriptionId));
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
