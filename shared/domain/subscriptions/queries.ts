import type { Principal } from '../../auth/principal.js';
import { canAccessSubscriberData, listedSubscriber, requireProjectAccess } from '../../auth/authorize.js';
import { ProblemError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import type { Page } from '../../store/pages.js';
import type { Item } from '../../store/requests.js';
import {
  listProjectSubscriptions,
  listSubscriberSubscriptions,
  readSubscription,
} from '../../store/subscriptions/reads.js';
import { toSubscription } from './records.js';
import type { ListSubscriptionsQuery, Subscription } from './schema.js';

/**
 * Reads of subscriptions (DESIGN D6, D14, D15) within the principal's scope, over the store adapter
 * (`shared/store/subscriptions/`). Every change is ONE transaction conditional on `revision`, with its ONE
 * `subscription.*` event, access events, the live counters and the `subscription.clock` deadline (`transitions.ts`).
 */

/**
 * The stored subscription item as read: the public fields plus `revision` and `deadline_at`, read through
 * `toSubscription`, `revisionOf` and `deadlineAtOf` (never cast).
 */
export type StoredSubscription = Item;

const notFound = (subscriptionId: string) => new ProblemError('NOT_FOUND', `No subscription ${subscriptionId}.`);

/**
 * The stored subscription of the principal's team (strongly consistent). Errors: NOT_FOUND (absent, foreign, out of
 * scope, another subscriber's in the portal).
 */
export async function loadSubscription(
  store: Store,
  principal: Principal,
  subscriptionId: string,
): Promise<StoredSubscription> {
  const item = await readSubscription(store, principal.teamId, subscriptionId);
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
 * (`subscriber_id`: the subscriber's index items, then one BatchGet), a plan's (`plan_id`) or a status's (`status`); a
 * portal principal's list is always its own subscriber's (D27). Filters apply to the page read, so a page may be short
 * while `next_cursor` is set. Errors: NOT_FOUND (project absent, foreign or out of scope); VALIDATION_FAILED for a
 * cursor of another list.
 */
export async function listSubscriptions(
  store: Store,
  principal: Principal,
  projectId: string,
  query: Pick<ListSubscriptionsQuery, 'limit' | 'cursor' | 'status' | 'plan_id' | 'subscriber_id'>,
): Promise<Page<Subscription>> {
  requireProjectAccess(principal, projectId);
  const teamId = principal.teamId;
  const subscriberId = listedSubscriber(principal, query.subscriber_id);
  const page = subscriberId
    ? await listSubscriberSubscriptions(store, teamId, projectId, subscriberId, query)
    : await listProjectSubscriptions(store, teamId, projectId, query);
  if (!page) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return page;
}
