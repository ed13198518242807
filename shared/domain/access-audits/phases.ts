import pMap from 'p-map';
import type { Principal } from '../../auth/principal.js';
import { integrationsOf } from '../../integrations.js';
import { platformAdapterFor, platformAdapters } from '../../platforms/adapters.js';
import type { PlatformAdapter } from '../../platforms/platform-adapter.js';
import type { ProviderFailure } from '../../providers/payment-provider.js';
import { stripeImportReader } from '../../providers/stripe-import.js';
import type { Runtime } from '../../runtime.js';
import { listMembersOfProject, readMemberItem, readPlatformUserClaim } from '../../store/members.js';
import { readProviderSubscriptionLink } from '../../store/payments/reads.js';
import {
  listProjectSubscriptions,
  readSubscription,
  subscriptionsOfSubscriber,
} from '../../store/subscriptions/reads.js';
import { plansOf } from '../imports/worker.js';
import { findMemberOfSubscriber, toMember } from '../members/repository.js';
import { STRIPE } from '../payments/stripe-event-context.js';
import type { Plan } from '../plans/schema.js';
import type { Project } from '../projects/schema.js';
import { resourcesGrantedBy } from '../subscriptions/platform-access.js';
import { toSubscription } from '../subscriptions/records.js';
import { hasAccess } from '../subscriptions/state-machine.js';
import { memberLeftFindingOf, roleFindingsOf, stripeFindingOf, type FindingDraft } from './decisions.js';
import type { AuditedAttribute, StoredAccessAudit } from './record.js';
import type { AccessAuditPhase } from './schema.js';

/**
 * The pages of an audit's phases (DESIGN D34), one provider or store page each: Stripe's subscriptions (status all)
 * against ours by Stripe id; the platform's member list (Discord) against our entitlements, or where it cannot be
 * listed (Telegram) the members the bot recorded, counting the unlinked; our subscriptions, each
 * entitled member's presence on the platform. Each answers the findings and the cursor of the next page (null: the
 * phase is done), or the provider's failure.
 */

/** Our subscriptions read per page of the `ours` phase (each may cost one platform call). */
const OURS_PAGE_SIZE = 50;
/** Recorded members read per page where the platform cannot list them. */
const RECORDED_PAGE_SIZE = 100;
/** Objects of one page compared at once. */
const COMPARE_CONCURRENCY = 8;

/** What every page of a job needs. */
export interface AuditContext {
  runtime: Runtime;
  principal: Principal;
  job: StoredAccessAudit;
  project: Project;
}

/** One page of a phase: the findings, the objects compared and unlinked members seen, the next cursor. */
export type PhasePage =
  | {
      ok: true;
      drafts: FindingDraft[];
      audited: Partial<Record<AuditedAttribute, number>>;
      unlinkedMembers: number;
      cursor: string | null;
    }
  | Pick<ProviderFailure, 'ok' | 'reason' | 'retryable'>;

/** The project's platform adapter. */
function adapterOf(context: AuditContext): PlatformAdapter {
  return platformAdapterFor(context.project.platform_type, platformAdapters(context.runtime));
}

/** Whether `phase` applies to the project: Stripe for Stripe-billed projects, the member list where it can be read. */
export function phaseApplies(context: AuditContext, phase: AccessAuditPhase): boolean {
  if (phase === 'stripe') return context.project.payment_provider?.provider === STRIPE;
  if (phase === 'platform')
    return adapterOf(context).listMembers !== undefined || context.project.platform_type === 'telegram';
  return true;
}

/** Our subscription linked to Stripe subscription `stripeId`, or null. */
async function linkedSubscription(context: AuditContext, stripeId: string) {
  const { store } = context.runtime;
  const { team_id: teamId, project_id: projectId } = context.job;
  const link = await readProviderSubscriptionLink(store, teamId, projectId, STRIPE, stripeId);
  const item = link ? await readSubscription(store, teamId, String(link.subscription_id)) : undefined;
  return item ? toSubscription(item) : null;
}

/** A page of the connected account's subscriptions (every status) against ours. */
async function stripePage(context: AuditContext, cursor: string | null): Promise<PhasePage> {
  const { runtime, job } = context;
  const read = stripeImportReader({ store: runtime.store, settings: () => integrationsOf(runtime) });
  const page = await read(job, 'subscriptions', cursor);
  if (!page.ok) return page;
  const drafts = await pMap(
    page.data,
    async (stripe) => stripeFindingOf(stripe, await linkedSubscription(context, stripe.id)),
    { concurrency: COMPARE_CONCURRENCY },
  );
  return {
    ok: true,
    drafts: drafts.filter((draft): draft is FindingDraft => draft !== null),
    audited: { audited_stripe_subscriptions: page.data.length },
    unlinkedMembers: 0,
    cursor: page.hasMore ? (page.data.at(-1)?.id ?? null) : null,
  };
}

/** The project's role resources a set of plans grants (D28: a plan naming no roles grants every linked role). */
function rolesGrantedBy(project: Project, plans: readonly Plan[]): Set<string> {
  if (plans.length === 0) return new Set();
  const roles = project.resources.filter((resource) => resource.kind === 'role');
  return new Set(resourcesGrantedBy(roles, plans).map((resource) => resource.platform_resource_id));
}

/**
 * A page of the members the bot recorded as it saw them join (Telegram cannot list a chat's members): those still
 * joined that no subscriber is linked to are counted.
 */
async function recordedMembersPage(context: AuditContext, cursor: string | null): Promise<PhasePage> {
  const { runtime, job } = context;
  const query = { limit: RECORDED_PAGE_SIZE, cursor: cursor ?? undefined, status: 'joined' };
  const page = await listMembersOfProject(runtime.store, job.team_id, job.project_id, query, toMember);
  if (!page) return { ok: false, reason: `Project ${job.project_id} no longer exists.`, retryable: false };
  return {
    ok: true,
    drafts: [],
    audited: { audited_platform_members: page.data.length },
    unlinkedMembers: page.data.filter((member) => member.subscriber_id === null).length,
    cursor: page.next_cursor,
  };
}

/** A page of the platform's members (Discord) against our entitlements: roles missing or held without one. */
async function platformPage(context: AuditContext, cursor: string | null): Promise<PhasePage> {
  const { runtime, job, project } = context;
  const adapter = adapterOf(context);
  if (!adapter.listMembers) return recordedMembersPage(context, cursor);
  const listed = await adapter.listMembers(job, cursor);
  if (!listed.ok) return { ok: false, reason: listed.reason, retryable: true };
  const plans = await plansOf(runtime, context.principal, project.id);
  const paidRoleIds = rolesGrantedBy(project, [...plans.byId.values()]);
  let unlinkedMembers = 0;
  const drafts = await pMap(
    listed.members,
    async (person) => {
      const claim = await readPlatformUserClaim(runtime.store, job.team_id, job.project_id, person.platform_user_id);
      const memberItem = claim?.member_id
        ? await readMemberItem(runtime.store, job.team_id, job.project_id, claim.member_id)
        : undefined;
      const member = memberItem ? toMember(memberItem) : null;
      const subscriberId = member?.subscriber_id ?? claim?.subscriber_id ?? null;
      if (!subscriberId) unlinkedMembers++;
      const subscriptions = subscriberId
        ? await subscriptionsOfSubscriber(runtime.store, job.team_id, job.project_id, subscriberId)
        : [];
      const entitled = subscriptions
        .filter((subscription) => hasAccess(subscription.status))
        .flatMap((subscription) => plans.byId.get(subscription.plan_id) ?? []);
      return roleFindingsOf(
        {
          platformUserId: person.platform_user_id,
          roleIds: person.role_ids,
          memberId: member?.id ?? null,
          subscriberId,
          entitledRoleIds: rolesGrantedBy(project, entitled),
        },
        paidRoleIds,
      );
    },
    { concurrency: COMPARE_CONCURRENCY },
  );
  return {
    ok: true,
    drafts: drafts.flat(),
    audited: { audited_platform_members: listed.members.length },
    unlinkedMembers,
    cursor: listed.next,
  };
}

/** A page of our subscriptions: each entitled member's presence on the platform (where the platform can tell). */
async function oursPage(context: AuditContext, cursor: string | null): Promise<PhasePage> {
  const { runtime, job } = context;
  const page = await listProjectSubscriptions(runtime.store, job.team_id, job.project_id, {
    limit: OURS_PAGE_SIZE,
    cursor: cursor ?? undefined,
  });
  if (!page) return { ok: false, reason: `Project ${job.project_id} no longer exists.`, retryable: false };
  const adapter = adapterOf(context);
  let failure: string | null = null;
  const drafts = await pMap(
    page.data,
    async (subscription) => {
      if (!hasAccess(subscription.status) || !adapter.presenceOf) return null;
      const member = await findMemberOfSubscriber(
        runtime.store,
        job.team_id,
        job.project_id,
        subscription.subscriber_id,
      );
      if (!member || member.status !== 'joined') return null;
      const presence = await adapter.presenceOf({ ...job, platform_user_id: member.platform_user_id });
      if (!presence.ok) {
        failure ??= presence.reason;
        return null;
      }
      return memberLeftFindingOf(subscription, member, presence.presence);
    },
    { concurrency: COMPARE_CONCURRENCY },
  );
  if (failure !== null) return { ok: false, reason: failure, retryable: true };
  return {
    ok: true,
    drafts: drafts.filter((draft): draft is FindingDraft => draft !== null),
    audited: { audited_subscriptions: page.data.length },
    unlinkedMembers: 0,
    cursor: page.next_cursor,
  };
}

/** The page reader of each phase. */
export const PHASE_PAGES: Record<
  AccessAuditPhase,
  (context: AuditContext, cursor: string | null) => Promise<PhasePage>
> = { stripe: stripePage, platform: platformPage, ours: oursPage };
