import type { Principal } from '../../auth/principal.js';
import { canAccessProject } from '../../auth/authorize.js';
import type { Store } from '../../store/store.js';
import { readAccessFactItems, readTransitionItems, type AccessFactItems } from '../../store/subscriptions/reads.js';
import { readMemberItem, toMember } from '../members/repository.js';
import type { Member } from '../members/schema.js';
import { planNotFound, toPlan } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import { toProject } from '../projects/repository.js';
import type { Project } from '../projects/schema.js';
import { subscriberAccessAttribute } from '../subscribers/record.js';
import { subscriberNotFound, toSubscriber } from '../subscribers/repository.js';
import type { Subscriber } from '../subscribers/schema.js';
import type { Subscription } from './schema.js';

/** Every subscription of a subscriber of a project, strongly consistent (the adapter's read, for the surfaces). */
export { subscriptionsOfSubscriber } from '../../store/subscriptions/reads.js';

/**
 * What an access change reads and decides beside its subscription (DESIGN D15, D17): the access facts, whether another
 * subscription still grants access, the member.
 */

/** A subscription's access change: the subscriber, the plan, the subscription before (null when new) and after. */
export interface AccessChange {
  subscriber: Subscriber;
  plan: Plan;
  before: Subscription | null;
  after: Subscription;
  /**
   * The project, conversion marker and access summary when the caller read them already (a transition's read); read
   * here otherwise.
   */
  facts?: AccessFacts;
  /** The subscriber is created in the same transaction: it has no other subscription (none is read). */
  newSubscriber?: boolean;
  /**
   * For a plan change (upgrade / downgrade): the plan before (`plan` is the new one), whose Discord roles are swapped.
   */
  previousPlan?: Plan;
}

/**
 * What an access change reads of the project, of the subscriber's conversion marker and of the
 * subscriber's access summary, which a caller may read in the same BatchGetItem as its own items
 * ({@link accessFactsOf}).
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

/**
 * Ids of a subscriber's subscriptions (any order) currently granting access (`granting`) and paid access (`paid`, a
 * subset).
 */
interface SubscriberAccessIds {
  granting: string[];
  paid: string[];
}

/** The {@link AccessFacts} of what {@link readAccessFactItems} (or a transition's read) found. */
function accessFactsOf(read: AccessFactItems): AccessFacts {
  const stored = read.summary ?? {};
  return {
    project: read.project ? toProject(read.project) : null,
    converted: read.converted,
    access: {
      granting: [...(stored[subscriberAccessAttribute.granting] ?? [])],
      paid: [...(stored[subscriberAccessAttribute.paid] ?? [])],
    },
  };
}

/** Reads {@link AccessFacts} with one BatchGetItem. */
export async function readAccessFacts(
  store: Store,
  teamId: string,
  projectId: string,
  subscriberId: string,
): Promise<AccessFacts> {
  return accessFactsOf(await readAccessFactItems(store, teamId, projectId, subscriberId));
}

/** True when the subscription's access is paid access (not a free plan's). */
export function isPaidAccess(subscription: Pick<Subscription, 'source'>): boolean {
  return subscription.source !== 'free_plan';
}

/**
 * What the subscriber's other subscriptions than the changing one grant: the ids of those with access, and whether one
 * grants paid access.
 */
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

/** What a transition reads beside its subscription ({@link loadTransitionReads}). */
export interface TransitionReads {
  subscriber: Subscriber;
  plan: Plan;
  /** The project and the subscriber's conversion marker, for an access change (`prepareAccessChange`). */
  facts: AccessFacts;
}

/**
 * Reads what a transition of `subscription` needs beside it — its plan, its subscriber, its project and
 * the subscriber's conversion marker (for an access change) — in ONE strongly consistent BatchGetItem:
 * the subscription names its project, so the subscriber is read by its key (no reference item).
 * Errors: NOT_FOUND naming the plan or the subscriber when it is gone or out of the principal's scope
 * (what `getPlan` / `getSubscriber` answer).
 */
export async function loadTransitionReads(
  store: Store,
  principal: Principal,
  subscription: Subscription,
): Promise<TransitionReads> {
  const read = await readTransitionItems(store, principal.teamId, subscription);
  const plan = read.plan ? toPlan(read.plan) : undefined;
  if (!plan || !canAccessProject(principal, plan.project_id)) throw planNotFound(subscription.plan_id);
  if (!read.subscriber) throw subscriberNotFound(subscription.subscriber_id);
  return { plan, subscriber: toSubscriber(read.subscriber, { contact: true }), facts: accessFactsOf(read) };
}
