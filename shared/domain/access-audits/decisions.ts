import type Stripe from 'stripe';
import type { SubscriptionStatus } from '../../catalogues/subscription-statuses.js';
import { derivedIdempotencyKey } from '../../limits/idempotency.js';
import { planItemOf, planOfPrice, stateOfSubscription } from '../imports/mapping.js';
import { hasAccess, isTerminal } from '../subscriptions/state-machine.js';
import type { FindingKind, FindingObjects, RepairAction } from './schema.js';

/**
 * The pure comparisons of an access audit (DESIGN D34): Stripe's subscription against ours (Stripe is the truth for
 * money), a platform member's roles and presence against our entitlements (ours are the truth for access). Each answers
 * the findings to record, each with the repair it would make.
 */

/** A finding before it is stored: its kind, what differs, its objects (the rest null) and its repair. */
export interface FindingDraft {
  kind: FindingKind;
  detail: string;
  objects: Partial<FindingObjects>;
  repair: { action: RepairAction; description: string };
}

/** The stable id of a finding: the same audit, kind and subject give the same id (a page run twice records it once). */
export function findingIdOf(auditId: string, draft: Pick<FindingDraft, 'kind' | 'objects'>): string {
  const { subscription_id, stripe_subscription_id, platform_user_id, platform_role_id } = draft.objects;
  const subject = [subscription_id, stripe_subscription_id, platform_user_id, platform_role_id].map(String).join('|');
  return derivedIdempotencyKey(`access-audit:${auditId}:${draft.kind}:${subject}`);
}

/** Our subscription as an audit compares it. */
export type AuditedSubscription = { id: string; status: SubscriptionStatus; subscriber_id: string; plan_id: string };

/** Stripe's statuses that ended a subscription for good. */
const STRIPE_ENDED = new Set(['canceled', 'incomplete_expired']);

/**
 * The status our subscription should have for Stripe subscription `stripe` (the import's mapping), `ended` for one that
 * ended at Stripe, or null when the import leaves it out (never started; several items of which not exactly one has a
 * price that makes a plan).
 */
export function expectedStatusOf(stripe: Stripe.Subscription): SubscriptionStatus | 'ended' | null {
  if (STRIPE_ENDED.has(stripe.status)) return 'ended';
  const planItem =
    stripe.items.data.length > 1 ? planItemOf(stripe, (price) => !('skip' in planOfPrice(price))) : undefined;
  if (planItem && 'skip' in planItem) return null;
  const state = stateOfSubscription(stripe, planItem?.item);
  return 'skip' in state ? null : state.status;
}

/**
 * What an audit finds for one Stripe subscription and ours linked to it (null: none linked): a paid Stripe subscription
 * we lack → `paid_without_access` (import it); ours with access that Stripe ended or does not bill →
 * `access_without_payment`; ours without access that Stripe bills → `paid_without_access`; any other status difference
 * → `status_mismatch` (these three: ours follows Stripe). Null when they agree.
 */
export function stripeFindingOf(stripe: Stripe.Subscription, ours: AuditedSubscription | null): FindingDraft | null {
  const expected = expectedStatusOf(stripe);
  if (expected === null) return null;
  const customer = typeof stripe.customer === 'string' ? stripe.customer : stripe.customer.id;
  const stripeObjects = { stripe_subscription_id: stripe.id, stripe_customer_id: customer };
  if (!ours) {
    if (expected === 'ended' || !hasAccess(expected)) return null;
    return {
      kind: 'paid_without_access',
      detail: `Stripe subscription ${stripe.id} is ${stripe.status} and no subscription of ours follows it.`,
      objects: stripeObjects,
      repair: {
        action: 'import_subscription',
        description: 'Create our subscription as Stripe has it (as the import does: no charge, no change at Stripe).',
      },
    };
  }
  if (expected === 'ended' ? isTerminal(ours.status) : ours.status === expected) return null;
  const objects = {
    ...stripeObjects,
    subscription_id: ours.id,
    subscriber_id: ours.subscriber_id,
    plan_id: ours.plan_id,
  };
  const wantedAccess = expected !== 'ended' && hasAccess(expected);
  const kind: FindingKind =
    hasAccess(ours.status) && !wantedAccess
      ? 'access_without_payment'
      : !hasAccess(ours.status) && wantedAccess
        ? 'paid_without_access'
        : 'status_mismatch';
  const wanted = expected === 'ended' ? 'canceled' : expected;
  return {
    kind,
    detail: `Our subscription ${ours.id} is ${ours.status}; Stripe subscription ${stripe.id} is ${stripe.status}${stripe.cancel_at_period_end ? ' (canceling at period end)' : ''}.`,
    objects,
    repair: {
      action: 'follow_stripe',
      description: `Bring our subscription to ${wanted} as the Stripe hook would (its events and access follow).`,
    },
  };
}

/** A platform member as an audit sees it: the person, the roles they hold, and what we know of them. */
export interface AuditedPlatformMember {
  platformUserId: string;
  roleIds: readonly string[];
  /** Our member of that person, if any. */
  memberId: string | null;
  /** The subscriber our member is linked to, if any. */
  subscriberId: string | null;
  /** The roles our entitlements give the person (empty when no subscription of theirs has access). */
  entitledRoleIds: ReadonlySet<string>;
}

/**
 * What an audit finds for one member of a Discord server: each role a plan grants that the person holds without an
 * entitlement → `role_without_entitlement` (remove it); each role their entitlement gives that they lack →
 * `role_missing` (give it). `paidRoleIds`: every role some plan grants.
 */
export function roleFindingsOf(member: AuditedPlatformMember, paidRoleIds: ReadonlySet<string>): FindingDraft[] {
  const objects = {
    member_id: member.memberId,
    subscriber_id: member.subscriberId,
    platform_user_id: member.platformUserId,
  };
  const held = new Set(member.roleIds);
  const findings: FindingDraft[] = [];
  for (const roleId of member.roleIds) {
    if (!paidRoleIds.has(roleId) || member.entitledRoleIds.has(roleId)) continue;
    findings.push({
      kind: 'role_without_entitlement',
      detail: member.subscriberId
        ? `Member ${member.platformUserId} holds paid role ${roleId}, which no subscription of theirs with access grants.`
        : `Member ${member.platformUserId} holds paid role ${roleId} and is linked to no subscriber.`,
      objects: { ...objects, platform_role_id: roleId },
      repair: { action: 'remove_role', description: `Remove role ${roleId} from the member.` },
    });
  }
  for (const roleId of member.entitledRoleIds) {
    if (held.has(roleId)) continue;
    findings.push({
      kind: 'role_missing',
      detail: `Member ${member.platformUserId} is entitled to role ${roleId} and does not hold it.`,
      objects: { ...objects, platform_role_id: roleId },
      repair: { action: 'grant_role', description: `Give role ${roleId} to the member.` },
    });
  }
  return findings;
}

/** Where an entitled member is on the platform: in the community, gone (left or removed), or not known. */
export type PlatformPresence = 'present' | 'left' | 'kicked' | 'unknown';

/**
 * What an audit finds for our subscription with access and its subscriber's member: a member we hold as joined whom the
 * platform no longer has → `member_left` (give access again). Null otherwise (not entitled, never joined, present).
 */
export function memberLeftFindingOf(
  subscription: AuditedSubscription,
  member: { id: string; platform_user_id: string; status: string },
  presence: PlatformPresence,
): FindingDraft | null {
  if (!hasAccess(subscription.status) || member.status !== 'joined') return null;
  if (presence !== 'left' && presence !== 'kicked') return null;
  return {
    kind: 'member_left',
    detail: `Member ${member.platform_user_id} of subscription ${subscription.id} (${subscription.status}) is no longer in the community (${presence}).`,
    objects: {
      subscription_id: subscription.id,
      subscriber_id: subscription.subscriber_id,
      plan_id: subscription.plan_id,
      member_id: member.id,
      platform_user_id: member.platform_user_id,
    },
    repair: {
      action: 'grant_access',
      description:
        'Give the member access again (Discord: add them back to the server with their roles; Telegram: a new invite link).',
    },
  };
}
