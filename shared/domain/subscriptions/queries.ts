import type { Principal } from '../../auth/principal.js';
import { canAccessSubscriberData, listedSubscriber, requireProjectAccess } from '../../auth/authorize.js';
import { ProblemError } from '../../errors.js';
import { keys, secondaryIndex, sortKeyPrefix } from '../../store/keys.js';
import type { Store } from '../../store/store.js';
import { decodeCursor, encodeCursor, type Page } from '../../store/pages.js';
import type { Item } from '../../store/requests.js';
import { parseStoredSubscriptionIndex, toSubscription } from './records.js';
import type { ListSubscriptionsQuery, Subscription } from './schema.js';

/**
 * Persistence and use cases of subscriptions (DESIGN D6, D14, D15): one partition per subscription, a project's through the sparse GSI, a subscriber's through index items
 * ({@link writeSubscriptionIndex}) and access-summary sets ({@link accessSetChange}). Every change is ONE transaction conditional on `revision`, with its ONE `subscription.*` event,
 * access events, the `live_subscription_count` and live plan counters (`ADD`), and the `subscription.clock` deadline matching {@link nextDueTrigger} (`deadline_at`).
 */

/** The stored subscription item as read: the public fields plus `revision` and `deadline_at`, read through `toSubscription`, `revisionOf` and `deadlineAtOf` (never cast). */
export type StoredSubscription = Item;

const notFound = (subscriptionId: string) => new ProblemError('NOT_FOUND', `No subscription ${subscriptionId}.`);

/** The stored subscription of the principal's team (strongly consistent). Errors: NOT_FOUND (absent, foreign, out of scope, another subscriber's in the portal). */
export async function loadSubscription(
  store: Store,
  principal: Principal,
  subscriptionId: string,
): Promise<StoredSubscription> {
  const item = await store.get(keys.subscription(principal.teamId, subscriptionId));
  if (!item) throw notFound(subscriptionId);
  const subscription = toSubscription(item);
  if (!canAccessSubscriberData(principal, subscription.project_id, subscription.subscriber_id))
    throw notFound(subscriptionId);
  return item;
}

/**
 * Reads one subscription by id within the principal's team (`GET /v1/subscriptions/{id}`): one GetItem.
 * Errors: NOT_FOUND when absent, of another team, or of a project outside the token's project scope.
 */
export async function getSubscription(
  store: Store,
  principal: Principal,
  subscriptionId: string,
): Promise<Subscription> {
  return toSubscription(await loadSubscription(store, principal, subscriptionId));
}

/**
 * Lists a project's subscriptions in creation order, paged (DESIGN D12), optionally only a subscriber's
 * (`subscriber_id`: the subscriber's index items, then one BatchGet), a plan's (`plan_id`) or a status's
 * (`status`); a portal principal's list is always its own subscriber's (D27). Filters apply to the page read,
 * so a page may be short while `next_cursor` is set. Errors: NOT_FOUND (project absent, foreign or out of scope); VALIDATION_FAILED for a cursor of another list.
 */
export async function listSubscriptions(
  store: Store,
  principal: Principal,
  projectId: string,
  query: Pick<ListSubscriptionsQuery, 'limit' | 'cursor' | 'status' | 'plan_id' | 'subscriber_id'>,
): Promise<Page<Subscription>> {
  requireProjectAccess(principal, projectId);
  const teamId = principal.teamId;
  const matches = (subscription: Subscription) =>
    (!query.status || subscription.status === query.status) &&
    (!query.plan_id || subscription.plan_id === query.plan_id);
  const subscriberId = listedSubscriber(principal, query.subscriber_id);
  if (subscriberId) {
    const partition = keys.subscriberSubscriptionsPartition(teamId, projectId, subscriberId);
    const startKey = decodeCursor(query.cursor, partition, { sortKeyPrefix: sortKeyPrefix.subscriberSubscription });
    const [project, index] = await Promise.all([
      store.get(keys.project(teamId, projectId), { projection: 'pk' }),
      store.query({
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': partition, ':prefix': sortKeyPrefix.subscriberSubscription },
        Limit: query.limit,
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }),
    ]);
    if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
    const ids = index.items.map((item) => parseStoredSubscriptionIndex(item).subscription_id);
    const items = await store.batchGet(ids.map((id) => keys.subscription(teamId, id)));
    const byId = new Map(items.map(toSubscription).map((subscription) => [subscription.id, subscription]));
    const data = ids.flatMap((id) => {
      const subscription = byId.get(id);
      return subscription && matches(subscription) ? [subscription] : [];
    });
    return { data, next_cursor: encodeCursor(index.lastEvaluatedKey) };
  }
  const partition = keys.projectSubscriptionsIndex(teamId, projectId);
  const startKey = decodeCursor(query.cursor, partition, {
    partitionAttribute: secondaryIndex.partitionKey,
    keyAttributes: secondaryIndex.cursorAttributes,
    sortKeyPrefix: sortKeyPrefix.subscription,
  });
  const filters: string[] = [];
  const names: Record<string, string> = { '#gsi_pk': secondaryIndex.partitionKey };
  const values: Record<string, unknown> = { ':pk': partition };
  if (query.status) {
    filters.push('#status = :status');
    names['#status'] = 'status';
    values[':status'] = query.status;
  }
  if (query.plan_id) {
    filters.push('plan_id = :plan_id');
    values[':plan_id'] = query.plan_id;
  }
  const [project, result] = await Promise.all([
    store.get(keys.project(teamId, projectId), { projection: 'pk' }),
    store.query({
      IndexName: secondaryIndex.name,
      KeyConditionExpression: '#gsi_pk = :pk',
      FilterExpression: filters.length ? filters.join(' AND ') : undefined,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      Limit: query.limit,
      ExclusiveStartKey: startKey,
    }),
  ]);
  if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return { data: result.items.map(toSubscription), next_cursor: encodeCursor(result.lastEvaluatedKey) };
}
