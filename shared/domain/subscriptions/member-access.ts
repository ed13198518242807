import type { Principal } from '../../auth/principal.js';
import { logger } from '../../logger.js';
import { type PlatformRuntime } from '../../platforms/adapters.js';
import type { PlatformAdapters } from '../../platforms/platform-adapter.js';
import { markInviteLinksRevoked } from '../../store/subscriptions/invite-links.js';
import { markConverted } from '../../store/subscriptions/writes.js';
import type { Transaction } from '../../store/unit-of-work.js';
import type { Member } from '../members/schema.js';
import { scheduleInviteLinksRetry } from './invite-link-retry.js';
import type { Subscription } from './schema.js';
import { hasAccess } from './state-machine.js';
import {
  isPaidAccess,
  memberOf,
  othersAccessOf,
  readAccessFacts,
  type AccessChange,
  type AccessFacts,
  type OthersAccess,
} from './access-facts.js';
import {
  grantOnPlatform,
  liveInviteLinks,
  resourcesGrantedBy,
  type PlatformAccessFollowUp,
} from './platform-access.js';
import { prepareRoleChange, writeRoleChange } from './role-access.js';

/**
 * The member side of a subscription's access (DESIGN D15, D17): `member.access_granted` / `_revoked` per linked
 * resource when the subscriber's access starts / ends (no other subscription grants it); paid access (not `free_plan`)
 * emits `member.converted` once (a marker item) and `member.churned` when it ends. Platform calls are outside any
 * transaction: grants before the commit (invite links on the subscription), revocations after (invite-link items marked
 * `revoked_at`); failures are retried durably (`members/platform-retry.ts`, or `invite-link-retry.ts` without a member)
 * and never roll the transition back.
 */

/** An access change prepared before its transaction ({@link prepareAccessChange}). */
export interface PreparedAccessChange {
  /**
   * The changed subscription with its `invite_links`: the links the grant made when it gained access,
   * none when it lost it. Store and emit this one.
   */
  subscription: Subscription;
  /**
   * Adds the member events, the invite-link items and the conversion marker to the transition's unit of
   * work; returns the platform follow-up to make once it committed (null without a member or resource).
   */
  write(tx: Transaction): PlatformAccessFollowUp | null;
}

/**
 * Prepares an access change's member side before its unit of work: one BatchGetItem (project, marker, summary; or
 * `change.facts`), then member and other grants only when they can matter. Asks grants of the platform ({@link
 * grantOnPlatform}); banned → never removed (that would lift the ban). Returns null when access did not change.
 */
export async function prepareAccessChange(
  runtime: PlatformRuntime,
  principal: Principal,
  change: AccessChange,
  adapters?: PlatformAdapters,
): Promise<PreparedAccessChange | null> {
  const store = runtime.store;
  const teamId = principal.teamId;
  const { after, before, subscriber } = change;
  const had = before !== null && hasAccess(before.status);
  const has = hasAccess(after.status);
  // A plan change keeping access moves only the roles of the plans (role-access.ts), in projects with roles.
  const planChange = had && has && change.previousPlan !== undefined;
  if (had === has && !(planChange && change.facts?.project?.resources.some((resource) => resource.kind === 'role')))
    return null;
  const projectId = after.project_id;
  const paid = isPaidAccess(after) || (before !== null && isPaidAccess(before));
  // The member and the other subscriptions matter only for events or platform work: a resource to
  // grant or revoke, or paid access starting unconverted or ending (member.converted / member.churned).
  const needsOthers = (facts: AccessFacts) =>
    (facts.project?.resources.length ?? 0) > 0 || (paid && !(has && facts.converted));
  let facts: AccessFacts;
  let member: Member | null = null;
  let others: OthersAccess = { withAccess: [], paid: false };
  if (change.facts) {
    facts = change.facts;
    if (needsOthers(facts))
      [member, others] = [await memberOf(store, teamId, subscriber), othersAccessOf(change, facts)];
  } else {
    [facts, member] = await Promise.all([
      readAccessFacts(store, teamId, projectId, subscriber.id),
      memberOf(store, teamId, subscriber),
    ]);
    others = othersAccessOf(change, facts);
  }
  const { project, converted } = facts;
  // The plan's resources: a Discord plan may grant only some of the linked roles (platform_role_ids).
  const resources = project ? resourcesGrantedBy(project.resources, [change.plan]) : [];
  const { withAccess: othersWithAccess, paid: othersPaid } = others;
  const granting = has && othersWithAccess.length === 0 && project !== null && resources.length > 0;
  const granted = granting
    ? await grantOnPlatform(
        runtime,
        teamId,
        project.platform_type,
        {
          project_id: projectId,
          subscriber_id: subscriber.id,
          platform_user_id: member?.platform_user_id ?? subscriber.platform_user_id,
        },
        resources,
        adapters,
      )
    : null;
  // Other access remains (or the plan changes): only the roles no other plan covers move.
  const grantee = {
    project_id: projectId,
    subscriber_id: subscriber.id,
    platform_user_id: member?.platform_user_id ?? subscriber.platform_user_id,
  };
  const roleChange =
    project && (planChange || othersWithAccess.length > 0)
      ? await prepareRoleChange(
          runtime,
          teamId,
          project,
          { plan: change.plan, previousPlan: change.previousPlan, had, has },
          othersWithAccess,
          grantee,
          adapters,
        )
      : null;
  const roleContext = {
    member,
    subscriber,
    projectId,
    subscriptionId: after.id,
    platformType: project?.platform_type ?? 'web',
  };
  if (planChange)
    return { subscription: after, write: (tx) => (roleChange ? writeRoleChange(tx, roleChange, roleContext) : null) };
  const subscription: Subscription = { ...after, invite_links: granted?.inviteLinks ?? [] };

  const write = (tx: Transaction): PlatformAccessFollowUp | null => {
    let followUp: PlatformAccessFollowUp | null = roleChange ? writeRoleChange(tx, roleChange, roleContext) : null;
    if (othersWithAccess.length === 0) {
      granted?.record(tx);
      // No member to hold the failure (never joined): the subscription's own durable retry, in this
      // transaction, so the links the subscriber needs to join are never lost.
      if (granted && !granted.outcome.ok && member === null) {
        scheduleInviteLinksRetry(tx, teamId, after, granted.outcome.reason, runtime.clock.nowMs());
        logger.warn('invite links not made; retried later', {
          subscription_id: after.id,
          project_id: projectId,
          reason: granted.outcome.reason,
        });
      }
      for (const resource of resources) {
        const data = has
          ? { member, subscriber, resource, invite_link: granted?.links.get(resource.id) ?? null }
          : { member, subscriber, resource };
        tx.emit({ type: has ? 'member.access_granted' : 'member.access_revoked', projectId, data });
      }
      // Access ends: the links it made stop working (those still live), and a join through one is no
      // longer linked to the subscriber (its item marked revoked here, in the transition).
      const revokeInviteLinks = !has && before ? liveInviteLinks(before.invite_links, runtime.clock.nowMs()) : [];
      markInviteLinksRevoked(tx, teamId, projectId, revokeInviteLinks, runtime.clock.nowMs());
      // A banned person is kept out by the ban: removing access (ban then unban) would lift it.
      const banned = member?.status === 'banned' || subscriber.status === 'banned';
      const removeMember = member !== null && !has && !banned;
      if (project && resources.length > 0 && ((member && (has || removeMember)) || revokeInviteLinks.length > 0)) {
        followUp = {
          member,
          projectId,
          subscriptionId: after.id,
          platformType: project.platform_type,
          action: has ? 'grant_access' : 'revoke_access',
          removeMember,
          resources: resources.map(({ id, kind, platform_resource_id }) => ({ id, kind, platform_resource_id })),
          ...(granted ? { outcome: granted.outcome } : {}),
          revokeInviteLinks,
        };
      }
    }
    if (!paid || othersPaid) return followUp;
    if (has && !converted) {
      markConverted(tx, teamId, projectId, subscriber.id, after.id, after.updated_at);
      tx.emit({ type: 'member.converted', projectId, data: { member, subscriber, subscription } });
    } else if (!has) {
      tx.emit({ type: 'member.churned', projectId, data: { member, subscriber, subscription } });
    }
    return followUp;
  };
  return { subscription, write };
}
