import type { Principal } from '../../auth/principal.js';
import { requireProjectAccess } from '../../auth/authorize.js';
import { ProblemError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import { readMemberSubscriberId } from '../../store/members.js';
import { readSubscriberAccessPartition, type SubscriptionSummary } from '../../store/subscriptions/reads.js';
import type { ProjectAccess } from './schema.js';
import { hasAccess } from './state-machine.js';

/**
 * The web access check (DESIGN D15, D22): whether a subscriber — or the subscriber linked to a
 * member — currently has access to the project, from the access column of D15, for a creator's own site.
 */

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

/**
 * Answers `GET /v1/projects/{project_id}/access` by `subscriber_id` (ONE strongly consistent Query of the subscriber's
 * partition: summary + index items) or `member_id` (+1 GetItem): `granted` (access and not banned), the deciding
 * `status`, `ends_at` (null: open-ended), `plan_id`. Errors: NOT_FOUND; VALIDATION_FAILED unless exactly one id is
 * given.
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
    const linked = await readMemberSubscriberId(store, teamId, projectId, memberId);
    if (linked === undefined) throw new ProblemError('NOT_FOUND', `No member ${memberId} in project ${projectId}.`);
    subscriberId = linked;
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
  const { summary, subscriptions } = await readSubscriberAccessPartition(store, teamId, projectId, subscriberId);
  if (!summary) throw new ProblemError('NOT_FOUND', `No subscriber ${subscriberId} in project ${projectId}.`);
  memberId = memberId ?? summary.member_id ?? null;
  const chosen = deciding(subscriptions);
  if (!chosen) return { ...none, member_id: memberId };
  return {
    granted: hasAccess(chosen.status) && summary.status !== 'banned',
    status: chosen.status,
    ends_at: accessEndsAt(chosen),
    plan_id: chosen.plan_id,
    subscription_id: chosen.id,
    subscriber_id: subscriberId,
    member_id: memberId,
  };
}
