import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { integrationsOf } from '../../integrations.js';
import { platformAdapterFor, platformAdapters } from '../../platforms/adapters.js';
import { stripeSubscriptionRetriever } from '../../providers/stripe-import.js';
import type { Runtime } from '../../runtime.js';
import {
  readPlanItems,
  readSubscriberItem,
  readSubscription,
  subscriptionsOfSubscriber,
} from '../../store/subscriptions/reads.js';
import { writeInviteLinksAsRead } from '../../store/subscriptions/writes.js';
import { readMemberItem } from '../../store/members.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import type { ImportPageResult } from '../../store/imports.js';
import { importSubscription } from '../imports/objects.js';
import { plansOf } from '../imports/worker.js';
import { followStripeSubscription } from '../payments/stripe-follow.js';
import { toPlan } from '../plans/repository.js';
import type { Project, ProjectResource } from '../projects/schema.js';
import { toMember } from '../members/repository.js';
import { toSubscriber } from '../subscribers/repository.js';
import {
  grantOnPlatform,
  isLiveInviteLink,
  resourcesGrantedBy,
  revokeOnPlatform,
  type PlatformGrant,
} from '../subscriptions/platform-access.js';
import { toSubscription } from '../subscriptions/records.js';
import { hasAccess } from '../subscriptions/state-machine.js';
import { expectedStatusOf, stripeFindingOf } from './decisions.js';
import type { StoredFinding } from './record.js';

/**
 * The repairs of an audit's findings (DESIGN D34), through the ordinary paths: our subscription follows Stripe through
 * the Stripe hook's mapping, or is created from Stripe's as the import creates it (Stripe is the truth for money;
 * nothing is billed, nothing changes at Stripe); platform access follows our entitlements through the same grant and
 * revoke calls as any access change.
 */

/** What a repair did: done, or why not (`retryable`: the provider could not be reached or was busy). */
export type RepairOutcome = { ok: true } | { ok: false; reason: string; retryable: boolean };

const refused = (reason: string): RepairOutcome => ({ ok: false, reason, retryable: false });

/** Stripe's subscription of the finding now, or the failure. */
async function stripeSubscriptionOf(runtime: Runtime, finding: StoredFinding) {
  const retrieve = stripeSubscriptionRetriever({ store: runtime.store, settings: () => integrationsOf(runtime) });
  return retrieve(finding, finding.objects.stripe_subscription_id ?? '');
}

/** Our subscription follows Stripe's (the hook's mapping); refused when D15 cannot bring it there. */
async function followStripe(runtime: Runtime, principal: Principal, finding: StoredFinding): Promise<RepairOutcome> {
  const read = await stripeSubscriptionOf(runtime, finding);
  if (!read.ok) return read;
  const subscriptionId = finding.objects.subscription_id!;
  await followStripeSubscription(runtime, principal, finding.project_id, read.subscription, `audit_${finding.id}`);
  const item = await readSubscription(runtime.store, finding.team_id, subscriptionId);
  if (!item) return refused(`Subscription ${subscriptionId} no longer exists.`);
  const ours = toSubscription(item);
  if (!stripeFindingOf(read.subscription, ours)) return { ok: true };
  const expected = expectedStatusOf(read.subscription);
  return refused(
    `The Stripe hook's mapping cannot bring subscription ${subscriptionId} from ${ours.status} to ${expected === 'ended' ? 'canceled' : expected}.`,
  );
}

/** Stripe's subscription we lack is created as the import creates it. */
async function importFromStripe(
  runtime: Runtime,
  principal: Principal,
  project: Project,
  finding: StoredFinding,
): Promise<RepairOutcome> {
  const read = await stripeSubscriptionOf(runtime, finding);
  if (!read.ok) return read;
  const plans = await plansOf(runtime, principal, project.id);
  const result: ImportPageResult = { counts: {}, ignoredItems: 0, skipped: [] };
  await importSubscription(
    {
      runtime,
      principal,
      job: { id: finding.audit_id, plan_mapping: {}, dry_run: false },
      project,
      plansByPrice: plans.byPrice,
      mappedPlans: plans.byId,
      result,
    },
    read.subscription,
  );
  const skipped = result.skipped[0];
  return skipped ? refused(`Not imported: ${skipped.reason}.`) : { ok: true };
}

/** The plans of the subscriber's subscriptions with access. */
async function entitledPlans(runtime: Runtime, finding: StoredFinding) {
  const subscriberId = finding.objects.subscriber_id;
  if (!subscriberId) return [];
  const subscriptions = await subscriptionsOfSubscriber(
    runtime.store,
    finding.team_id,
    finding.project_id,
    subscriberId,
  );
  const planIds = [
    ...new Set(subscriptions.filter((subscription) => hasAccess(subscription.status)).map((s) => s.plan_id)),
  ];
  return planIds.length ? (await readPlanItems(runtime.store, finding.team_id, planIds)).map(toPlan) : [];
}

/** A platform repair: a role given or taken, or access given again, per our entitlements now. */
async function repairOnPlatform(runtime: Runtime, project: Project, finding: StoredFinding): Promise<RepairOutcome> {
  const { platform_user_id: userId, platform_role_id: roleId, subscriber_id: subscriberId } = finding.objects;
  if (!userId) return refused('The finding names no platform member.');
  const target = { team_id: finding.team_id, project_id: finding.project_id, platform_user_id: userId };
  const plans = await entitledPlans(runtime, finding);
  const granted = plans.length ? resourcesGrantedBy(project.resources, plans) : [];
  const outcome = async (result: { ok: true } | { ok: false; reason: string }): Promise<RepairOutcome> =>
    result.ok ? { ok: true } : { ok: false, reason: result.reason, retryable: true };
  if (finding.repair.action === 'remove_role') {
    if (granted.some((resource) => resource.kind === 'role' && resource.platform_resource_id === roleId))
      return refused(`The member is entitled to role ${roleId} now.`);
    const adapter = platformAdapterFor(project.platform_type, platformAdapters(runtime));
    return outcome(await revokeOnPlatform(adapter, target, [{ kind: 'role', platform_resource_id: roleId ?? '' }]));
  }
  if (!subscriberId) return refused('The finding names no subscriber.');
  const resources =
    finding.repair.action === 'grant_role'
      ? granted.filter((resource) => resource.kind === 'role' && resource.platform_resource_id === roleId)
      : granted;
  if (resources.length === 0) return refused('The subscriber is not entitled to that access now.');
  const grant = await grantOnPlatform(
    runtime,
    finding.team_id,
    project.platform_type,
    {
      project_id: finding.project_id,
      subscriber_id: subscriberId,
      platform_user_id: userId,
    },
    resources,
  );
  if (grant.inviteLinks.length) await deliverInviteLinks(runtime, finding, resources, grant);
  return outcome(grant.outcome);
}

/**
 * Records the personal invite links a grant made (Telegram) as any grant does: the invite-link items, the links on the
 * subscription, and `member.access_granted` with each link, so the subscriber gets it (D22).
 */
async function deliverInviteLinks(
  runtime: Runtime,
  finding: StoredFinding,
  resources: ProjectResource[],
  grant: PlatformGrant,
): Promise<void> {
  const { team_id: teamId, project_id: projectId } = finding;
  const { subscriber_id: subscriberId, subscription_id: subscriptionId, member_id: memberId } = finding.objects;
  const [subscriberItem, subscriptionItem, memberItem] = await Promise.all([
    subscriberId ? readSubscriberItem(runtime.store, teamId, projectId, subscriberId) : undefined,
    subscriptionId ? readSubscription(runtime.store, teamId, subscriptionId) : undefined,
    memberId ? readMemberItem(runtime.store, teamId, projectId, memberId) : undefined,
  ]);
  const subscriber = subscriberItem ? toSubscriber(subscriberItem, { contact: true }) : null;
  const member = memberItem ? toMember(memberItem) : null;
  const nowMs = runtime.clock.nowMs();
  await unitOfWork(runtime, teamId, (tx) => {
    grant.record(tx);
    if (subscriptionId && subscriptionItem) {
      const live = toSubscription(subscriptionItem).invite_links.filter((link) => isLiveInviteLink(link, nowMs));
      const links = [...live, ...grant.inviteLinks];
      writeInviteLinksAsRead(tx, teamId, subscriptionId, subscriptionItem, links, isoTime(nowMs));
    }
    if (!subscriber) return;
    for (const resource of resources) {
      const link = grant.links.get(resource.id);
      if (link)
        tx.emit({
          type: 'member.access_granted',
          projectId,
          data: { member, subscriber, resource, invite_link: link },
        });
    }
  });
}

/**
 * Applies the repair of `finding` (open) as `principal`. Never throws for a provider's refusal: its outcome says why.
 */
export function applyRepair(
  runtime: Runtime,
  principal: Principal,
  project: Project,
  finding: StoredFinding,
): Promise<RepairOutcome> {
  switch (finding.repair.action) {
    case 'follow_stripe':
      return followStripe(runtime, principal, finding);
    case 'import_subscription':
      return importFromStripe(runtime, principal, project, finding);
    default:
      return repairOnPlatform(runtime, project, finding);
  }
}
