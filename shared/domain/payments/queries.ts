import type { Principal } from '../../auth/principal.js';
import { canAccessSubscriberData, listedSubscriber, requireProjectAccess } from '../../auth/authorize.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { keys, secondaryIndex, sortKeyPrefix } from '../../store/keys.js';
import type { Store } from '../../store/store.js';
import { decodeCursor, encodeCursor, type Page } from '../../store/pages.js';
import type { Item } from '../../store/requests.js';
import { parseStoredPayment, parseStoredSubscriberPayment } from './record.js';
import type { ListPaymentsQuery, Payment } from './schema.js';

/**
 * Persistence and use cases of payments (DESIGN D14, D15, D16). One item per payment (`keys.payment`); a project's listed through the sparse GSI (sort key = creation time, id),
 * a subscriber's through index items in its per-project partition; provider payments found by `keys.providerPayment`. Every status change is ONE transaction with its
 * `payment.*` event (first) and the D15 transition it drives (through `createSubscription` / `changeSubscriptionWith`). Items carry `revision`.
 */

/**
 * The stored payment item (read through `toPayment` and `revisionOf`, never cast): the public fields, `revision` and `provider_refund_id` (the provider's id of the LAST refund we made,
 * Stripe `re_...`), written with its `payment.refunded`, so the inbound `charge.refunded` for it changes nothing.
 */
export type StoredPayment = Item;

const notFound = (paymentId: string) => new ProblemError('NOT_FOUND', `No payment ${paymentId}.`);

/** The public payment of a stored item (throws StoredRecordError naming its key when it does not match). */
export function toPayment(item: Item): Payment {
  const stored = parseStoredPayment(item);
  return {
    id: stored.id,
    project_id: stored.project_id,
    subscriber_id: stored.subscriber_id,
    subscription_id: stored.subscription_id,
    amount: stored.amount,
    amount_refunded: stored.amount_refunded ?? 0,
    currency: stored.currency,
    status: stored.status,
    provider: stored.provider,
    provider_payment_id: stored.provider_payment_id ?? null,
    billing_reason: stored.billing_reason,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
  };
}

/** The stored payment of the principal's team (strongly consistent). Errors: NOT_FOUND (absent, foreign, out of scope, another subscriber's in the portal). */
export async function loadPayment(store: Store, principal: Principal, paymentId: string): Promise<StoredPayment> {
  const item = await store.get(keys.payment(principal.teamId, paymentId));
  if (!item) throw notFound(paymentId);
  const payment = toPayment(item);
  if (!canAccessSubscriberData(principal, payment.project_id, payment.subscriber_id)) throw notFound(paymentId);
  return item;
}

/**
 * Reads one payment by id within the principal's team (`GET /v1/payments/{id}`): one GetItem.
 * Errors: NOT_FOUND when absent, of another team, or of a project outside the token's project scope.
 */
export async function getPayment(store: Store, principal: Principal, paymentId: string): Promise<Payment> {
  return toPayment(await loadPayment(store, principal, paymentId));
}

/** A timestamp of a query as the keys hold it (`toISOString`, milliseconds and `Z`). */
const keyTime = (timestamp: string) => isoTime(Date.parse(timestamp));

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

/**
 * Lists a project's payments, newest first (DESIGN D12), optionally by subscriber (index items + one BatchGet), `[created_after, created_before)`, status or provider (page filters:
 * a page may be short with `next_cursor` set); a portal principal sees only its own (D27). Errors: NOT_FOUND; VALIDATION_FAILED (date range, a cursor of another list).
 */
export async function listPayments(
  store: Store,
  principal: Principal,
  projectId: string,
  query: Omit<ListPaymentsQuery, 'limit'> & { limit: number },
): Promise<Page<Payment>> {
  requireProjectAccess(principal, projectId);
  const teamId = principal.teamId;
  const from = query.created_after ? keyTime(query.created_after) : null;
  const to = query.created_before ? keyTime(query.created_before) : null;
  if (from !== null && to !== null && from >= to) {
    throw new ProblemError(
      'VALIDATION_FAILED',
      'The date range is empty: created_before must be after created_after.',
      {
        errors: [{ path: 'created_before', message: 'must be after created_after' }],
      },
    );
  }
  const matches = (payment: Payment) =>
    (!query.status || payment.status === query.status) && (!query.provider || payment.provider === query.provider);
  const projectExists = store.get(keys.project(teamId, projectId), { projection: 'pk' });
  const subscriberId = listedSubscriber(principal, query.subscriber_id);
  if (subscriberId) {
    const partition = keys.subscriberPaymentsPartition(teamId, projectId, subscriberId);
    const startKey = decodeCursor(query.cursor, partition, { sortKeyPrefix: sortKeyPrefix.subscriberPayment });
    const range = rangeCondition('sk', sortKeyPrefix.subscriberPayment, from, to);
    const [project, index] = await Promise.all([
      projectExists,
      store.query({
        KeyConditionExpression: `pk = :pk AND ${range.expression}`,
        ExpressionAttributeValues: { ':pk': partition, ...range.values },
        ScanIndexForward: false,
        Limit: query.limit,
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }),
    ]);
    if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
    const ids = index.items.map((item) => parseStoredSubscriberPayment(item).payment_id);
    const items = await store.batchGet(ids.map((id) => keys.payment(teamId, id)));
    const byId = new Map(items.map(toPayment).map((payment) => [payment.id, payment]));
    const data = ids.flatMap((id) => {
      const payment = byId.get(id);
      return payment && matches(payment) ? [payment] : [];
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
  const [project, result] = await Promise.all([
    projectExists,
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
  if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return { data: result.items.map(toPayment), next_cursor: encodeCursor(result.lastEvaluatedKey) };
}
