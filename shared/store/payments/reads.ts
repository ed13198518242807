import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import {
  parseStoredProviderCustomer,
  parseStoredProviderPayment,
  parseStoredSubscriberPayment,
} from '../../domain/payments/record.js';
import type { Payment } from '../../domain/payments/schema.js';
import { keys, secondaryIndex, sortKeyPrefix } from '../keys.js';
import { decodeCursor, encodeCursor, type Page } from '../pages.js';
import type { Item } from '../requests.js';
import { itemWithKey, type Store } from '../store.js';
import { projectExists } from '../subscriptions/reads.js';

/**
 * Reads of payments (DESIGN D12, D14, D16): one item per payment (`keys.payment`); a project's listed through the
 * sparse GSI (sort key = creation time, id), a subscriber's through index items in its per-project partition;
 * provider payments, customers and subscriptions found by their lookup items.
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

/**
 * The lookup of a provider payment: our payment and the subscription it pays for, or undefined (strongly consistent).
 */
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
 * What one import page reads at once (DESIGN D34): the links of `customerIds` and `subscriptionIds` to ours (a
 * BatchGet of each, ≤ 100 ids), then the stored items of the subscribers linked to those customers (one BatchGet).
 * Maps: provider customer id → subscriber id, provider subscription id → subscription id, subscriber id → its item.
 */
export async function readProviderLinks(
  store: Store,
  teamId: string,
  projectId: string,
  provider: PaymentProvider,
  ids: { customerIds: readonly string[]; subscriptionIds: readonly string[] },
): Promise<{ customers: Map<string, string>; subscriptions: Map<string, string>; subscribers: Map<string, Item> }> {
  const customerKeys = ids.customerIds.map(
    (id) => [id, keys.providerCustomer(teamId, projectId, provider, id)] as const,
  );
  const subscriptionKeys = ids.subscriptionIds.map(
    (id) => [id, keys.providerSubscription(teamId, projectId, provider, id)] as const,
  );
  // BatchGetItem takes ≤ 100 keys: one call per kind, at the same time.
  const [customerLinks, subscriptionLinks] = await Promise.all(
    [customerKeys, subscriptionKeys].map((pairs) => store.batchGet(pairs.map(([, key]) => key))),
  );
  const customers = new Map<string, string>();
  for (const [id, key] of customerKeys) {
    const item = itemWithKey(customerLinks, key);
    if (item) customers.set(id, parseStoredProviderCustomer(item).subscriber_id);
  }
  const subscriptions = new Map<string, string>();
  for (const [id, key] of subscriptionKeys) {
    const item = itemWithKey(subscriptionLinks, key);
    if (item) subscriptions.set(id, String(item.subscription_id));
  }
  const subscriberItems = await store.batchGet(
    [...new Set(customers.values())].map((subscriberId) => keys.subscriber(teamId, projectId, subscriberId)),
  );
  const subscribers = new Map(subscriberItems.map((item) => [String(item.id), item]));
  return { customers, subscriptions, subscribers };
}
