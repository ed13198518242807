import { deadlineItem, type Deadline } from '../../deadlines/deadline.js';
import type { ProblemError } from '../../errors.js';
import type { MemberInviteLink } from '../../domain/members/schema.js';
import { livePlanAttribute } from '../../domain/subscribers/repository.js';
import {
  PROVIDER_CHANGE_CREATED_ATTRIBUTE,
  PROVIDER_SUBSCRIPTION_ATTRIBUTE,
} from '../../domain/subscriptions/provider-change.js';
import type { Subscription } from '../../domain/subscriptions/schema.js';
import {
  dueAtUnchanged,
  existsAsRead,
  existsAtRevision,
  ITEM_ABSENT,
  ITEM_EXISTS,
  REVISION_BUMP,
} from '../expressions.js';
import { entity, keys, secondaryIndex } from '../keys.js';
import { revisionOf } from '../records.js';
import type { Item } from '../requests.js';
import type { Transaction } from '../unit-of-work.js';

/**
 * Transaction writes of subscriptions (DESIGN D6, D14, D15): the subscription item (conditional on the revision
 * read), its index item, the live counters of its project, plans and subscriber, its deadline's move, its invite
 * links and the provider-first mark. Each adds to the caller's unit of work.
 */

/** What a failed condition means to the caller (the domain's ProblemError). */
type OnConditionFailed = () => ProblemError;

/**
 * Adds the put of a new subscription (revision 1; GSI keys for the project's list; `deadline_at` its first due
 * time or null; the provider's subscription id when one bills it). Fails when the id is taken.
 */
export function putNewSubscription(
  tx: Transaction,
  teamId: string,
  subscription: Subscription,
  deadlineAt: string | null,
  providerSubscriptionId: string | null,
): void {
  const { has_access: _derived, ...fields } = subscription;
  const item: Item = {
    ...(providerSubscriptionId ? { [PROVIDER_SUBSCRIPTION_ATTRIBUTE]: providerSubscriptionId } : {}),
    ...keys.subscription(teamId, subscription.id),
    entity: entity.subscription,
    team_id: teamId,
    [secondaryIndex.partitionKey]: keys.projectSubscriptionsIndex(teamId, subscription.project_id),
    [secondaryIndex.sortKey]: keys.projectSubscriptionsIndexSortKey(subscription.created_at, subscription.id),
    ...fields,
    revision: 1,
    deadline_at: deadlineAt,
  };
  tx.put(item, { condition: ITEM_ABSENT });
}

/**
 * Adds the write of a subscription's new state `next` over the stored `read` item: its public fields but the
 * immutable ones, `deadline_at` (ISO 8601 or null) and the next revision, conditional on the revision read.
 */
export function writeSubscriptionState(
  tx: Transaction,
  teamId: string,
  read: Item,
  next: Subscription,
  deadlineAt: string | null,
): void {
  const guard = existsAtRevision(revisionOf(entity.subscription, read));
  const { has_access: _derived, id: _id, project_id: _project, created_at: _created, ...fields } = next;
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ...guard.values, ':deadline_at': deadlineAt };
  const sets = Object.entries(fields).map(([field, value]) => {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    return `#${field} = :${field}`;
  });
  tx.update(keys.subscription(teamId, next.id), {
    expression: `SET ${sets.join(', ')}, ${REVISION_BUMP}, deadline_at = :deadline_at`,
    condition: guard.condition,
    names,
    values,
  });
}

/** Adds a check that the stored subscription `read` is still at the revision read (a lost race otherwise). */
export function checkSubscriptionUnchanged(tx: Transaction, teamId: string, subscriptionId: string, read: Item): void {
  tx.check(keys.subscription(teamId, subscriptionId), {
    condition: 'revision = :revision',
    values: { ':revision': revisionOf(entity.subscription, read) },
  });
}

/**
 * Adds the subscription's index item in its subscriber's partition (put whole, D15): `status`, `ends_at`,
 * `current_period_end`, `plan_id`, `status_changed_at`. Unconditional: the subscription's own write carries the
 * revision.
 */
export function writeSubscriptionIndex(tx: Transaction, teamId: string, subscription: Subscription): void {
  tx.put({
    ...keys.subscriberSubscription(
      teamId,
      subscription.project_id,
      subscription.subscriber_id,
      subscription.created_at,
      subscription.id,
    ),
    entity: entity.subscriberSubscription,
    team_id: teamId,
    subscription_id: subscription.id,
    status: subscription.status,
    ends_at: subscription.ends_at,
    current_period_end: subscription.current_period_end,
    plan_id: subscription.plan_id,
    status_changed_at: subscription.status_changed_at,
  });
}

/** Adds `live_subscription_count` + 1 on an item that must exist and be `active` (a project or a plan). */
function countOneMore(tx: Transaction, key: Item, onConditionFailed: OnConditionFailed, anyStatus = false): void {
  tx.update(key, {
    expression: 'ADD live_subscription_count :one',
    condition: anyStatus ? ITEM_EXISTS : `${ITEM_EXISTS} AND #status = :active`,
    ...(anyStatus ? {} : { names: { '#status': 'status' } }),
    values: anyStatus ? { ':one': 1 } : { ':one': 1, ':active': 'active' },
    onConditionFailed,
  });
}

/** Adds `live_subscription_count` − 1 on an item that must exist (a project or a plan). */
function countOneLess(tx: Transaction, key: Item): void {
  tx.update(key, {
    expression: 'ADD live_subscription_count :minus',
    condition: ITEM_EXISTS,
    values: { ':minus': -1 },
  });
}

/**
 * Adds a new live subscription to the counts of its project and plan, each conditional on being active
 * (`projectInactive` / `planInactive` answer a failed condition); with `closedPlan` the plan only has to exist (an
 * imported member keeps an inactive plan).
 */
export function countSubscriptionStarted(
  tx: Transaction,
  teamId: string,
  projectId: string,
  planId: string,
  failed: { projectInactive: OnConditionFailed; planInactive: OnConditionFailed; closedPlan?: boolean },
): void {
  countOneMore(tx, keys.project(teamId, projectId), failed.projectInactive);
  countOneMore(tx, keys.plan(teamId, planId), failed.planInactive, failed.closedPlan);
}

/** Takes an ended subscription out of the live counts of its project and plan (both must exist). */
export function countSubscriptionEnded(tx: Transaction, teamId: string, projectId: string, planId: string): void {
  countOneLess(tx, keys.project(teamId, projectId));
  countOneLess(tx, keys.plan(teamId, planId));
}

/**
 * Moves a live subscription's count from plan `fromPlanId` to `toPlanId`, which must be active (`toPlanInactive`
 * otherwise).
 */
export function countSubscriptionMoved(
  tx: Transaction,
  teamId: string,
  fromPlanId: string,
  toPlanId: string,
  toPlanInactive: OnConditionFailed,
): void {
  countOneLess(tx, keys.plan(teamId, fromPlanId));
  countOneMore(tx, keys.plan(teamId, toPlanId), toPlanInactive);
}

/**
 * Adds to the subscriber's live plan counters ({@link livePlanAttribute}) − 1 on `leftPlanId` and, unless null,
 * + 1 on `joinedPlanId`; conditional on the subscriber existing (the counter never creates the item).
 */
export function moveLivePlanCounter(
  tx: Transaction,
  teamId: string,
  projectId: string,
  subscriberId: string,
  leftPlanId: string,
  joinedPlanId: string | null,
): void {
  const names: Record<string, string> = { '#left': livePlanAttribute(leftPlanId) };
  const values: Record<string, unknown> = { ':minus': -1 };
  const additions = ['#left :minus'];
  if (joinedPlanId !== null) {
    names['#joined'] = livePlanAttribute(joinedPlanId);
    values[':one'] = 1;
    additions.push('#joined :one');
  }
  tx.update(keys.subscriber(teamId, projectId, subscriberId), {
    expression: `ADD ${additions.join(', ')}`,
    condition: ITEM_EXISTS,
    names,
    values,
  });
}

/**
 * Adds + 1 to the subscriber's live counter of `planId`, conditional on it existing and not banned (`bannedOrGone`
 * otherwise).
 */
export function countLivePlanOfSubscriber(
  tx: Transaction,
  teamId: string,
  projectId: string,
  subscriberId: string,
  planId: string,
  bannedOrGone: OnConditionFailed,
): void {
  tx.update(keys.subscriber(teamId, projectId, subscriberId), {
    expression: 'ADD #live_plan :one',
    condition: `${ITEM_EXISTS} AND (attribute_not_exists(#status) OR #status <> :banned)`,
    names: { '#status': 'status', '#live_plan': livePlanAttribute(planId) },
    values: { ':banned': 'banned', ':one': 1 },
    onConditionFailed: bannedOrGone,
  });
}

/** Adds the move of a deadline being applied (still due at `fromDueAt`, ISO 8601) to `deadline`'s due time. */
export function moveDeadline(tx: Transaction, deadline: Deadline, fromDueAt: string): void {
  const guard = dueAtUnchanged(fromDueAt);
  tx.put(deadlineItem(deadline), { condition: guard.condition, values: guard.values });
}

/**
 * Adds the write of a subscription's `invite_links`, conditional on its revision still being `revision` (raised by
 * one).
 */
export function writeInviteLinks(
  tx: Transaction,
  teamId: string,
  subscriptionId: string,
  revision: number,
  links: readonly MemberInviteLink[],
): void {
  const guard = existsAtRevision(revision);
  tx.update(keys.subscription(teamId, subscriptionId), {
    expression: `SET invite_links = :links, ${REVISION_BUMP}`,
    condition: guard.condition,
    values: { ':links': links, ...guard.values },
  });
}

/**
 * Adds the write of a subscription's `invite_links` and `updated_at` (ISO 8601) over the stored `read` item,
 * conditional on the revision read (raised by one).
 */
export function writeInviteLinksAsRead(
  tx: Transaction,
  teamId: string,
  subscriptionId: string,
  read: Item,
  links: readonly MemberInviteLink[],
  updatedAt: string,
): void {
  const guard = existsAsRead(read, revisionOf(entity.subscription, read));
  tx.update(keys.subscription(teamId, subscriptionId), {
    expression: `SET invite_links = :links, updated_at = :now, ${REVISION_BUMP}`,
    condition: guard.condition,
    values: { ':links': links, ':now': updatedAt, ...guard.values },
  });
}

/**
 * Adds the mark of a provider-first change made at `createdSeconds` (unix SECONDS) on the provider subscription's
 * link item (which must exist), so provider events created before it are recognised as stale.
 */
export function markProviderChange(
  tx: Transaction,
  teamId: string,
  projectId: string,
  made: { provider: string; providerSubscriptionId: string },
  createdSeconds: number,
): void {
  tx.update(keys.providerSubscription(teamId, projectId, made.provider, made.providerSubscriptionId), {
    expression: 'SET #changed = :created',
    condition: ITEM_EXISTS,
    names: { '#changed': PROVIDER_CHANGE_CREATED_ATTRIBUTE },
    values: { ':created': createdSeconds },
  });
}

/** Adds the subscriber's conversion marker (`member.converted` was emitted for `subscriptionId` at `convertedAt`). */
export function markConverted(
  tx: Transaction,
  teamId: string,
  projectId: string,
  subscriberId: string,
  subscriptionId: string,
  convertedAt: string,
): void {
  tx.put({
    ...keys.subscriberConversion(teamId, projectId, subscriberId),
    entity: entity.subscriberConversion,
    team_id: teamId,
    subscription_id: subscriptionId,
    converted_at: convertedAt,
  });
}
