import { parseStoredSubscriberAccess } from '../../domain/subscribers/record.js';
import { parseStoredSubscriptionIndex, toSubscription } from '../../domain/subscriptions/records.js';
import type { ListSubscriptionsQuery, Subscription } from '../../domain/subscriptions/schema.js';
import { entity, keys, sortKeyPrefix } from '../keys.js';
import { decodeCursor, encodeCursor, listFilter, queryPage, type Page } from '../pages.js';
import { revisionOf } from '../records.js';
import type { Item, Key } from '../requests.js';
import { itemWithKey, type Store } from '../store.js';

/**
 * Reads of subscriptions (DESIGN D12, D14, D15): one partition per subscription, a project's through the sparse
 * GSI, a subscriber's through its index items and access summary. Items are returned parsed, but the stored
 * subscription itself, which the writes read `revision` and `deadline_at` from.
 */

/** The stored subscription item (strongly consistent), or undefined. */
export async function readSubscription(
  store: Store,
  teamId: string,
  subscriptionId: string,
): Promise<Item | undefined> {
  return store.get(keys.subscription(teamId, subscriptionId));
}

/**
 * The `revision` of a subscription (one projected GetItem; 0 when stored without one), or undefined when it is gone.
 */
export async function readSubscriptionRevision(
  store: Store,
  teamId: string,
  subscriptionId: string,
): Promise<number | undefined> {
  const item = await store.get(keys.subscription(teamId, subscriptionId), { projection: 'revision' });
  return item ? revisionOf(entity.subscription, item) : undefined;
}

/** The list filters {@link listProjectSubscriptions} and {@link listSubscriberSubscriptions} take. */
type ListQuery = Pick<ListSubscriptionsQuery, 'limit' | 'cursor' | 'status' | 'plan_id'>;

/**
 * The stored item of `deadline` (its team, kind and subject; strongly consistent), or undefined once applied or
 * dropped.
 */
export async function readDeadlineItem(
  store: Store,
  deadline: { teamId: string; kind: string; subjectId: string },
): Promise<Item | undefined> {
  return store.get(keys.deadline(deadline.teamId, deadline.kind, deadline.subjectId));
}

/** Whether the project exists (one projected, strongly consistent GetItem). */
export async function projectExists(store: Store, teamId: string, projectId: string): Promise<boolean> {
  return (await store.get(keys.project(teamId, projectId), { projection: 'pk' })) !== undefined;
}

/**
 * A page of a subscriber's subscriptions in creation order (its index items, then one BatchGet), filtered by
 * status and plan after the read; null when the project is gone. Errors: VALIDATION_FAILED (cursor of another list).
 */
export async function listSubscriberSubscriptions(
  store: Store,
  teamId: string,
  projectId: string,
  subscriberId: string,
  query: ListQuery,
): Promise<Page<Subscription> | null> {
  const partition = keys.subscriberSubscriptionsPartition(teamId, projectId, subscriberId);
  const startKey = decodeCursor(query.cursor, partition, { sortKeyPrefix: sortKeyPrefix.subscriberSubscription });
  const [found, index] = await Promise.all([
    projectExists(store, teamId, projectId),
    store.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': partition, ':prefix': sortKeyPrefix.subscriberSubscription },
      Limit: query.limit,
      ExclusiveStartKey: startKey,
      ConsistentRead: true,
    }),
  ]);
  if (!found) return null;
  const ids = index.items.map((item) => parseStoredSubscriptionIndex(item).subscription_id);
  const items = await store.batchGet(ids.map((id) => keys.subscription(teamId, id)));
  const byId = new Map(items.map(toSubscription).map((subscription) => [subscription.id, subscription]));
  const data = ids.flatMap((id) => {
    const subscription = byId.get(id);
    return subscription &&
      (!query.status || subscription.status === query.status) &&
      (!query.plan_id || subscription.plan_id === query.plan_id)
      ? [subscription]
      : [];
  });
  return { data, next_cursor: encodeCursor(index.lastEvaluatedKey) };
}

/**
 * A page of a project's subscriptions in creation order (the project's GSI partition), filtered by status and
 * plan in the query; null when the project is gone. Errors: VALIDATION_FAILED (cursor of another list).
 */
export async function listProjectSubscriptions(
  store: Store,
  teamId: string,
  projectId: string,
  query: ListQuery,
): Promise<Page<Subscription> | null> {
  const [found, page] = await Promise.all([
    projectExists(store, teamId, projectId),
    queryPage(store, {
      index: true,
      partition: keys.projectSubscriptionsIndex(teamId, projectId),
      sortKeyPrefix: sortKeyPrefix.subscription,
      limit: query.limit,
      cursor: query.cursor,
      map: toSubscription,
      filter: listFilter([
        { attribute: 'status', equals: query.status },
        { attribute: 'plan_id', equals: query.plan_id },
      ]),
    }),
  ]);
  return found ? page : null;
}

/** A subscription's summary as its index item in the subscriber's partition carries it. */
export type SubscriptionSummary = Pick<
  Subscription,
  'id' | 'status' | 'ends_at' | 'current_period_end' | 'plan_id' | 'status_changed_at'
>;

/**
 * The subscriber's partition in ONE strongly consistent Query: its access summary (undefined when the subscriber
 * is gone) and the summaries of its subscriptions (index items).
 */
export async function readSubscriberAccessPartition(
  store: Store,
  teamId: string,
  projectId: string,
  subscriberId: string,
): Promise<{
  summary: ReturnType<typeof parseStoredSubscriberAccess> | undefined;
  subscriptions: SubscriptionSummary[];
}> {
  const partition = await store.query({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.subscriberSubscriptionsPartition(teamId, projectId, subscriberId) },
    ConsistentRead: true,
  });
  const summarySortKey = keys.subscriberAccess(teamId, projectId, subscriberId).sk;
  const summary = partition.items.find((item) => item.sk === summarySortKey);
  const subscriptions = partition.items
    .filter((item) => String(item.sk).startsWith(sortKeyPrefix.subscriberSubscription))
    .map((item) => {
      const stored = parseStoredSubscriptionIndex(item);
      return {
        id: stored.subscription_id,
        status: stored.status,
        ends_at: stored.ends_at ?? null,
        current_period_end: stored.current_period_end ?? null,
        plan_id: stored.plan_id,
        status_changed_at: stored.status_changed_at,
      };
    });
  return { summary: summary ? parseStoredSubscriberAccess(summary) : undefined, subscriptions };
}

/**
 * Every subscription of a subscriber of a project (strongly consistent: the index items, then one BatchGet per
 * 100 — none when there is none), in no particular order; without `exceptId` when given.
 */
export async function subscriptionsOfSubscriber(
  store: Store,
  teamId: string,
  projectId: string,
  subscriberId: string,
  exceptId?: string,
): Promise<Subscription[]> {
  const found: Subscription[] = [];
  let startKey: Key | undefined;
  do {
    const page = await store.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: {
        ':pk': keys.subscriberSubscriptionsPartition(teamId, projectId, subscriberId),
        ':prefix': sortKeyPrefix.subscriberSubscription,
      },
      ConsistentRead: true,
      ExclusiveStartKey: startKey,
    });
    const ids = page.items
      .map((item) => parseStoredSubscriptionIndex(item).subscription_id)
      .filter((id) => id !== exceptId);
    for (let index = 0; index < ids.length; index += 100) {
      const items = await store.batchGet(ids.slice(index, index + 100).map((id) => keys.subscription(teamId, id)));
      found.push(...items.map(toSubscription));
    }
    startKey = page.lastEvaluatedKey;
  } while (startKey);
  return found;
}

/** The plan items of the subscriptions `subscriptionIds` (two BatchGetItems; none without ids), each plan once. */
export async function planItemsOfSubscriptions(
  store: Store,
  teamId: string,
  subscriptionIds: readonly string[],
): Promise<Item[]> {
  if (subscriptionIds.length === 0) return [];
  const items = await store.batchGet(subscriptionIds.map((id) => keys.subscription(teamId, id)));
  const planIds = [...new Set(items.map((item) => toSubscription(item).plan_id))];
  return store.batchGet(planIds.map((planId) => keys.plan(teamId, planId)));
}

/** The plan items of `planIds` (one strongly consistent GetItem each, in parallel), those gone left out. */
export async function readPlanItems(store: Store, teamId: string, planIds: readonly string[]): Promise<Item[]> {
  const items = await Promise.all(planIds.map((planId) => store.get(keys.plan(teamId, planId))));
  return items.filter((item) => item !== undefined);
}

/** The project item (strongly consistent), or undefined. */
export async function readProjectItem(store: Store, teamId: string, projectId: string): Promise<Item | undefined> {
  return store.get(keys.project(teamId, projectId));
}

/** The subscriber item (strongly consistent), or undefined. */
export async function readSubscriberItem(
  store: Store,
  teamId: string,
  projectId: string,
  subscriberId: string,
): Promise<Item | undefined> {
  return store.get(keys.subscriber(teamId, projectId, subscriberId));
}

/** The subscriber and project items of a subscription's subscriber (one BatchGetItem), each undefined when gone. */
export async function readSubscriberAndProject(
  store: Store,
  teamId: string,
  projectId: string,
  subscriberId: string,
): Promise<{ subscriber: Item | undefined; project: Item | undefined }> {
  const subscriberKey = keys.subscriber(teamId, projectId, subscriberId);
  const projectKey = keys.project(teamId, projectId);
  const read = await store.batchGet([subscriberKey, projectKey]);
  return { subscriber: itemWithKey(read, subscriberKey), project: itemWithKey(read, projectKey) };
}

/**
 * What an access change reads beside its subscription: the project item, whether the subscriber's conversion
 * marker exists and its access summary (parsed; undefined when absent).
 */
export interface AccessFactItems {
  project: Item | undefined;
  converted: boolean;
  summary: ReturnType<typeof parseStoredSubscriberAccess> | undefined;
}

const accessFactKeys = (teamId: string, projectId: string, subscriberId: string): Key[] => [
  keys.project(teamId, projectId),
  keys.subscriberConversion(teamId, projectId, subscriberId),
  keys.subscriberAccess(teamId, projectId, subscriberId),
];

function accessFactItemsOf(items: readonly Item[], teamId: string, projectId: string, subscriberId: string) {
  const [projectKey, markerKey, summaryKey] = accessFactKeys(teamId, projectId, subscriberId);
  const summary = itemWithKey(items, summaryKey);
  return {
    project: itemWithKey(items, projectKey),
    converted: itemWithKey(items, markerKey) !== undefined,
    summary: summary ? parseStoredSubscriberAccess(summary) : undefined,
  };
}

/** Reads {@link AccessFactItems} with one strongly consistent BatchGetItem. */
export async function readAccessFactItems(
  store: Store,
  teamId: string,
  projectId: string,
  subscriberId: string,
): Promise<AccessFactItems> {
  const items = await store.batchGet(accessFactKeys(teamId, projectId, subscriberId));
  return accessFactItemsOf(items, teamId, projectId, subscriberId);
}

/**
 * What a transition of a subscription reads beside it in ONE strongly consistent BatchGetItem: its plan and
 * subscriber items (undefined when gone) and its {@link AccessFactItems}.
 */
export async function readTransitionItems(
  store: Store,
  teamId: string,
  subscription: Pick<Subscription, 'project_id' | 'plan_id' | 'subscriber_id'>,
): Promise<AccessFactItems & { plan: Item | undefined; subscriber: Item | undefined }> {
  const { project_id: projectId, plan_id: planId, subscriber_id: subscriberId } = subscription;
  const planKey = keys.plan(teamId, planId);
  const subscriberKey = keys.subscriber(teamId, projectId, subscriberId);
  const items = await store.batchGet([planKey, subscriberKey, ...accessFactKeys(teamId, projectId, subscriberId)]);
  return {
    plan: itemWithKey(items, planKey),
    subscriber: itemWithKey(items, subscriberKey),
    ...accessFactItemsOf(items, teamId, projectId, subscriberId),
  };
}
