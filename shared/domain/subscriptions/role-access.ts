import type { PlatformRuntime } from '../../platforms/adapters.js';
import type { PlatformAdapters, PlatformResult } from '../../platforms/platform-adapter.js';
import type { Store } from '../../store/store.js';
import { planItemsOfSubscriptions } from '../../store/subscriptions/reads.js';
import type { Transaction } from '../../store/unit-of-work.js';
import type { Member } from '../members/schema.js';
import { toPlan } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import type { Project, ProjectResource } from '../projects/schema.js';
import type { Subscriber } from '../subscribers/schema.js';
import {
  grantOnPlatform,
  resourcesGrantedBy,
  type PlatformAccessFollowUp,
  type PlatformGrantee,
} from './platform-access.js';

/**
 * Per-plan roles (DESIGN D28): when a subscriber keeps access through another subscription while one
 * starts or ends, or a subscription changes plan, only the roles the change adds or takes away move — the
 * roles the plans with access cover after the change ({@link resourcesGrantedBy}) against those before.
 * Only for projects with linked `role` resources (Discord); others keep the all-or-nothing access of
 * `member-access.ts`.
 */

/**
 * The roles an access change moves: those now covered and not before (granted before the commit), and those no longer
 * covered.
 */
export interface RoleChange {
  added: ProjectResource[];
  removed: ProjectResource[];
  /** The outcome of granting `added` (made before the commit), or ok when none was added. */
  grantOutcome: PlatformResult;
}

/** The plans of the subscriptions `subscriptionIds` (two BatchGetItems; none without ids), each plan once. */
async function plansOfSubscriptions(store: Store, teamId: string, subscriptionIds: readonly string[]): Promise<Plan[]> {
  return (await planItemsOfSubscriptions(store, teamId, subscriptionIds)).map(toPlan);
}

/**
 * The {@link RoleChange} of an access change of a subscriber whose other subscriptions with access are
 * `otherSubscriptionIds`: `had` / `has` access through the changing subscription, on `previousPlan` (a plan
 * change; else `plan`) before and `plan` after. Grants the added roles to `grantee` now (outside any
 * transaction, never throwing: a failure is the outcome). Null when no role moves or the project has none.
 */
export async function prepareRoleChange(
  runtime: PlatformRuntime,
  teamId: string,
  project: Project,
  change: { plan: Plan; previousPlan?: Plan; had: boolean; has: boolean },
  otherSubscriptionIds: readonly string[],
  grantee: PlatformGrantee,
  adapters?: PlatformAdapters,
): Promise<RoleChange | null> {
  if (!project.resources.some((resource) => resource.kind === 'role')) return null;
  const others = await plansOfSubscriptions(runtime.store, teamId, otherSubscriptionIds);
  const covered = (plans: Plan[]) =>
    new Set(plans.length === 0 ? [] : resourcesGrantedBy(project.resources, plans).map((resource) => resource.id));
  const before = covered(change.had ? [...others, change.previousPlan ?? change.plan] : others);
  const after = covered(change.has ? [...others, change.plan] : others);
  const added = project.resources.filter((resource) => after.has(resource.id) && !before.has(resource.id));
  const removed = project.resources.filter((resource) => before.has(resource.id) && !after.has(resource.id));
  if (added.length === 0 && removed.length === 0) return null;
  const grant =
    added.length > 0 ? await grantOnPlatform(runtime, teamId, project.platform_type, grantee, added, adapters) : null;
  return { added, removed, grantOutcome: grant?.outcome ?? { ok: true } };
}

/**
 * Adds a {@link RoleChange} to the transition's unit of work: `member.access_granted` per added role and
 * `member.access_revoked` per removed one; returns the follow-up that removes the roles after the commit
 * (not for a banned member: the ban keeps them out) and records the outcome on the member — null without a
 * member or anything to record.
 */
export function writeRoleChange(
  tx: Transaction,
  roleChange: RoleChange,
  context: {
    member: Member | null;
    subscriber: Subscriber;
    projectId: string;
    subscriptionId: string;
    platformType: Project['platform_type'];
  },
): PlatformAccessFollowUp | null {
  const { member, subscriber, projectId } = context;
  for (const resource of roleChange.added)
    tx.emit({ type: 'member.access_granted', projectId, data: { member, subscriber, resource, invite_link: null } });
  for (const resource of roleChange.removed)
    tx.emit({ type: 'member.access_revoked', projectId, data: { member, subscriber, resource } });
  if (!member) return null;
  const removeMember = roleChange.removed.length > 0 && member.status !== 'banned' && subscriber.status !== 'banned';
  if (!removeMember && roleChange.added.length === 0) return null;
  const resources = (removeMember ? roleChange.removed : roleChange.added).map(
    ({ id, kind, platform_resource_id }) => ({ id, kind, platform_resource_id }),
  );
  return {
    member,
    projectId,
    subscriptionId: context.subscriptionId,
    platformType: context.platformType,
    action: removeMember ? 'revoke_access' : 'grant_access',
    removeMember,
    resources,
    ...(removeMember ? { grantOutcome: roleChange.grantOutcome } : { outcome: roleChange.grantOutcome }),
    revokeInviteLinks: [],
  };
}
