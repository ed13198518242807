import { keys, sortKeyPrefix } from '../../store/keys.js';
import { itemWithKey, type Store } from '../../store/store.js';
import type { Item, Key } from '../../store/requests.js';
import { readMemberItem, toMember } from '../members/repository.js';
import type { Member } from '../members/schema.js';
import type { Plan } from '../plans/schema.js';
import { toProject } from '../projects/repository.js';
import type { Project } from '../projects/schema.js';
import { parseStoredSubscriberAccess, subscriberAccessAttribute } from '../subscribers/record.js';
import type { Subscriber } from '../subscribers/schema.js';
import { parseStoredSubscriptionIndex, toSubscription } from './records.js';
import type { Subscription } from './schema.js';

/** What an access change reads and decides beside its subscription (DESIGN D15, D17): the access facts, whether another subscription still grants access, the member. */

/** A subscription's access change: the subscriber, the plan, the subscription before (null when new) and after. */
export interface AccessChange {
  subscriber: Subscriber;
  plan: Plan;
  before: Subscription | null;
  after: Subscription;
  /** The project, conversion marker and access summary when the caller read them already ({@link accessFactKeys}); read here otherwise. */
  facts?: AccessFacts;
  /** The subscriber is created in the same transaction: it has no other subscription (none is read). */
  newSubscriber?: boolean;
  /** For a plan change (upgrade / downgrade): the plan before (`plan` is the new one), whose Discord roles are swapped. */
  previousPlan?: Plan;
}

/**
 * What an access change reads of the project, of the subscriber's conversion marker and of the
 * subscriber's access summary, which a caller may read in the same BatchGetItem as its own items
 * ({@link accessFactKeys}, {@link accessFactsOf}).
 */
export interface AccessFacts {
  /** The project (its linked resources and platform), or null when it is gone. */
  project: Project | null;
  /** True when the subscriber's conversion marker exists (`member.converted` was already emitted). */
  converted: boolean;
  /**
   * The ids of the subscriber's subscriptions granting access and paid access, from its access summary
   * (`subscriberAccessAttribute`).
   */
  access: SubscriberAccessIds;
}

/** Ids of a subscriber's subscriptions (any order) currently granting access (`granting`) and paid access (`paid`, a subset). */
interface SubscriberAccessIds {
  granting: string[];
  paid: string[];
}

/** The keys of {@link AccessFacts}: the project, the subscriber's conversion marker and its access summary. */
export function accessFactKeys(teamId: string, projectId: string, subscriberId: string): Key[] {
  return [
    keys.project(teamId, projectId),
    keys.subscriberConversion(teamId, projectId, subscriberId),
    keys.subscriberAccess(teamId, projectId, subscriberId),
  ];
}

/** The {@link AccessFacts} among `items` (a BatchGetItem answer that asked for {@link accessFactKeys}). */
export function accessFactsOf(
  items: readonly Item[],
  teamId: string,
  projectId: string,
  subscriberId: string,
): AccessFacts {
  const [projectKey, markerKey, summaryKey] = accessFactKeys(teamId, projectId, subscriberId);
  const project = itemWithKey(items, projectKey);
  const summary = itemWithKey(items, summaryKey);
  const stored = summary ? parseStoredSubscriberAccess(summary) : {};
  const access = {
    granting: [...(stored[subscriberAccessAttribute.granting] ?? [])],
    paid: [...(stored[subscriberAccessAttribute.paid] ?? [])],
  };
  return {
    project: project ? toProject(project) : null,
    converted: itemWithKey(items, markerKey) !== undefined,
    access,
  };
}

/** Reads {@link AccessFacts} with one BatchGetItem. */
export async function readAccessFacts(
  store: Store,
  teamId: string,
  projectId: string,
  subscriberId: string,
): Promise<AccessFacts> {
  return accessFactsOf(
    await store.batchGet(accessFactKeys(teamId, projectId, subscriberId)),
    teamId,
    projectId,
    subscriberId,
  );
}

/** True when the subscription's access is paid access (not a free plan's). */
export function isPaidAccess(subscription: Pick<Subscription, 'source'>): boolean {
  return subscription.source !== 'free_plan';
}

/**
 * Every subscription of a subscriber of a project (strongly consistent: the subscriber's index items,
 * then one BatchGet per 100 — none when there is none), in no particular order; without `exceptId` (a
 * subscription id) when given.
 */
export async function subscriptionsOfSubscriber(
  store: Store,
  teamId: string,
  projectId: string,
  subscriberId: string,
  exceptId?: string,
): Promise<Subscription[]> {
  const found: Subscription[] = [];
  let startKey: Record<string, unknown> | undefined;
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

/** What the subscriber's other subscriptions than the changing one grant: the ids of those with access, and whether one grants paid access. */
export interface OthersAccess {
  withAccess: string[];
  paid: boolean;
}

/**
 * {@link OthersAccess} of an access change: none for a subscriber created with the subscription; else
 * from the access summary's sets (`facts.access`: no read).
 */
export function othersAccessOf(change: AccessChange, facts: AccessFacts): OthersAccess {
  if (change.newSubscriber) return { withAccess: [], paid: false };
  const id = change.after.id;
  return {
    withAccess: facts.access.granting.filter((other) => other !== id),
    paid: facts.access.paid.some((other) => other !== id),
  };
}

/**
 * The subscriber's member (by the subscriber's `member_id`, as the caller read it), or null. A subscriber
 * created in the same transaction (an access-code redemption) links its member in that transaction, so
 * the member read still lacks the link: it is shown linked, as it will be once committed.
 */
export async function memberOf(store: Store, teamId: string, subscriber: Subscriber): Promise<Member | null> {
  if (!subscriber.member_id) return null;
  const item = await readMemberItem(store, teamId, subscriber.project_id, subscriber.member_id);
  return item ? { ...toMember(item), subscriber_id: subscriber.id } : null;
}
