import type { Principal } from '../../auth/principal.js';
import { requireProjectAccess } from '../../auth/authorize.js';
import { ProblemError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import type { Item } from '../../store/requests.js';
import * as z from '../../schemas/zod.js';
import { entity, keys, sortKeyPrefix } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Member } from '../members/schema.js';
import { parseStoredSubscriberAccess } from '../subscribers/record.js';
import { parseStoredSubscriptionIndex } from './records.js';
import type { ProjectAccess, Subscription } from './schema.js';
import { hasAccess } from './state-machine.js';

/**
 * The web access check (DESIGN D15, D22): whether a subscriber — or the subscriber linked to a
 * member — currently has access to the project, from the access column of D15, for a creator's own site.
 */

/** What the check needs of one subscription: from its index item (`writeSubscriptionIndex`), or the subscription itself. */
type SubscriptionSummary = Pick<
  Subscription,
  'id' | 'status' | 'ends_at' | 'current_period_end' | 'plan_id' | 'status_changed_at'
>;

/** When a subscription's access ends unless it renews: a fixed term's `ends_at`, else the current period's end. */
function accessEndsAt(subscription: SubscriptionSummary): string | null {
  return subscription.ends_at ?? subscription.current_period_end;
}

/**
 * The subscription that answers the check: among those granting access, the one whose access lasts longest
 * (open-ended first); without any, the most recently changed one; null when there are none.
 */
function deciding(subscriptions: SubscriptionSummary[]): SubscriptionSummary | null {
  const granting = subscriptions.filter((subscription) => hasAccess(subscription.status));
  if (granting.length > 0) {
    return granting.sort((a, b) => {
      const endA = accessEndsAt(a);
      const endB = accessEndsAt(b);
      if (endA === endB) return 0;
      if (endA === null) return -1;
      if (endB === null) return 1;
      return endA < endB ? 1 : -1;
    })[0];
  }
  return subscriptions.sort((a, b) => (a.status_changed_at < b.status_changed_at ? 1 : -1))[0] ?? null;
}

/** A member item read for its subscriber (projection `subscriber_id`; absent or null: none yet). */
const parseMemberSubscriber = recordParser(
  entity.member,
  z.object({ subscriber_id: z.optional(Member.shape.subscriber_id) }),
);

/** The summary an index item carries (throws StoredRecordError naming its key when it does not match). */
function summaryOf(item: Item): SubscriptionSummary {
  const stored = parseStoredSubscriptionIndex(item);
  return {
    id: stored.subscription_id,
    status: stored.status,
    ends_at: stored.ends_at ?? null,
    current_period_end: stored.current_period_end ?? null,
    plan_id: stored.plan_id,
    status_changed_at: stored.status_changed_at,
  };
}

/**
 * Answers `GET /v1/projects/{project_id}/access` by `subscriber_id` (ONE strongly consistent Query of the subscriber's partition: summary + index items) or `member_id` (+1 GetItem):
 * `granted` (access and not banned), the deciding `status`, `ends_at` (null: open-ended), `plan_id`. Errors: NOT_FOUND; VALIDATION_FAILED unless exactly one id is given.
 */
export async function checkProjectAccess(
  store: Store,
  principal: Principal,
  projectId: string,
  query: { subscriber_id?: string; member_id?: string },
): Promise<ProjectAccess> {
  requireProjectAccess(principal, projectId);
  if ((query.subscriber_id === undefined) === (query.member_id === undefined)) {
    throw new ProblemError('VALIDATION_FAILED', 'Give exactly one of subscriber_id and member_id.', {
      errors: [{ path: 'query.subscriber_id', message: 'exactly one of subscriber_id and member_id is required' }],
    });
  }
  const teamId = principal.teamId;
  let subscriberId = query.subscriber_id ?? null;
  let memberId: string | null = query.member_id ?? null;
  if (memberId !== null) {
    const member = await store.get(keys.member(teamId, projectId, memberId), { projection: 'subscriber_id' });
    if (!member) throw new ProblemError('NOT_FOUND', `No member ${memberId} in project ${projectId}.`);
    subscriberId = parseMemberSubscriber(member).subscriber_id ?? null;
  }
  const none: ProjectAccess = {
    granted: false,
    status: null,
    ends_at: null,
    plan_id: null,
    subscription_id: null,
    subscriber_id: subscriberId,
    member_id: memberId,
  };
  if (subscriberId === null) return none;
  const partition = await store.query({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': keys.subscriberSubscriptionsPartition(teamId, projectId, subscriberId) },
    ConsistentRead: true,
  });
  const summarySortKey = keys.subscriberAccess(teamId, projectId, subscriberId).sk;
  const summary = partition.items.find((item) => item.sk === summarySortKey);
  const subscriptions = partition.items
    .filter((item) => String(item.sk).startsWith(sortKeyPrefix.subscriberSubscription))
    .map(summaryOf);
  if (!summary) throw new ProblemError('NOT_FOUND', `No subscriber ${subscriberId} in project ${projectId}.`);
  const subscriber = parseStoredSubscriberAccess(summary);
  memberId = memberId ?? subscriber.member_id ?? null;
  const chosen = deciding(subscriptions);
  if (!chosen) return { ...none, member_id: memberId };
  return {
    granted: hasAccess(chosen.status) && subscriber.status !== 'banned',
    status: chosen.status,
    ends_at: accessEndsAt(chosen),
    plan_id: chosen.plan_id,
    subscription_id: chosen.id,
    subscriber_id: subscriberId,
    member_id: memberId,
  };
}
