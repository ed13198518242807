import type { Principal } from '../../auth/principal.js';
import { logger } from '../../logger.js';
import { type PlatformRuntime } from '../../platforms/adapters.js';
import type { PlatformAdapters } from '../../platforms/platform-adapter.js';
import { entity, keys } from '../../store/keys.js';
import type { Transaction } from '../../store/unit-of-work.js';
import type { Member } from '../members/schema.js';
import { scheduleInviteLinksRetry } from './invite-link-retry.js';
import type { Subscription } from './schema.js';
import { hasAccess } from './state-machine.js';
import { isPaidAccess, memberOf, othersAccessOf, readAccessFacts, type AccessChange, type AccessFacts, type OthersAccess } from './access-facts.js';
import { grantOnPlatform, liveInviteLinks, markInviteLinksRevoked, resourcesGrantedBy, type PlatformAccessFollowUp } from './platform-access.js';
import { prepareRoleChange, writeRoleChange } from './role-access.js';

/**
 * The member side of a subscription's access (DESIGN D15, D17), added to the transition's unit of work:
 * when a subscription gains access (enters trialing, active, pending_cancellation or past_due from a
 * status without access, or is created in one) and none of the subscriber's other subscriptions already
 * grants it, `member.access_granted` is emitted once per resource linked to the project; when it loses
 * access and no other subscription still grants it, `member.access_revoked` per resource. Paid access
 * (a subscription that is not on a free plan: `source` other than `free_plan`) also emits
 * `member.converted` the first time the subscriber gains it (a marker item in the subscriber's
 * subscription partition records that it happened) and `member.churned` when the last paid access ends.
 * Payloads carry the subscriber's member (or null when the subscriber has not joined the community).
 * A grant asks the platform before the commit ({@link prepareAccessChange}: its personal invite links go
 * on the subscription, `invite_links`, and in `member.access_granted`); a revocation asks it after the
 * commit ({@link applyPlatformAccess}): the member's removal, and the revocation of the ended access's
 * still-live invite links, with or without a member (their items are marked `revoked_at` in the
 * transition, so a join through one is not linked). Either way outside any transaction: a failure is recorded on the
 * member's `platform_error`, retried durably (`members/platform-retry.ts`, reconciled by
 * `platform-sync.ts`) and never rolls the transition back. A grant's failure for a subscriber without a
 * member is retried by the subscription's own deadline (`invite-link-retry.ts`), scheduled in the transition.
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
 * Prepares the member side of an access change (see the module comment), before the transition's unit
 * of work is written: reads the project (its linked resources), the conversion marker and the
 * subscriber's access summary in one BatchGetItem (or takes them from `change.facts`), then the
 * subscriber's member and what its other subscriptions grant (the summary's sets: no read; a
 * Query of its subscriptions only when the summary does not track them; none for `change.newSubscriber`)
 * — with `change.facts`, only when they can matter: the project has resources, or paid access ends or
 * starts before any conversion (else no member event is emitted and the platform is not asked, whatever
 * they hold). When access starts and no other subscription grants it, asks
 * the platform for it ({@link grantOnPlatform}: a Telegram project gets a personal invite link per chat,
 * put on the subscription and sent in `member.access_granted` as `invite_link`; when that fails for a
 * subscriber without a member, `write` schedules the subscription's durable retry, `invite-link-retry.ts`). When access ends for a
 * banned member or subscriber, the platform is not asked to remove them (the ban keeps them out; a
 * removal would lift it). When another subscription keeps access, or the plan changes (`change.previousPlan`,
 * access kept), only the roles the plans cover move ({@link prepareRoleChange}: Discord's per-plan roles).
 * Returns null when access did not change. `adapters` defaults to the service's ({@link platformAdapters}).
 */
export async function prepareAccessChange(runtime: PlatformRuntime, principal: Principal, change: AccessChange, adapters?: PlatformAdapters): Promise<PreparedAccessChange | null> {
  const store = runtime.store;
  const teamId = principal.teamId;
  const { after, before, subscriber } = change;
  const had = before !== null && hasAccess(before.status);
  const has = hasAccess(after.status);
  // A plan change keeping access moves only the roles of the plans (role-access.ts), in projects with roles.
  const planChange = had && has && change.previousPlan !== undefined;
  if (had === has && !(planChange && change.facts?.project?.resources.some((resource) => resource.kind === 'role'))) return null;
  const projectId = after.project_id;
  const paid = isPaidAccess(after) || (before !== null && isPaidAccess(before));
  // The member and the other subscriptions matter only for events or platform work: a resource to
  // grant or revoke, or paid access starting unconverted or ending (member.converted / member.churned).
  const needsOthers = (facts: AccessFacts) => (facts.project?.resources.length ?? 0) > 0 || (paid && !(has && facts.converted));
  let facts: AccessFacts;
  let member: Member | null = null;
  let others: OthersAccess = { withAccess: [], paid: false };
  if (change.facts) {
    facts = change.facts;
    if (needsOthers(facts)) [member, others] = [await memberOf(store, teamId, subscriber), othersAccessOf(change, facts)];
  } else {
    [facts, member] = await Promise.all([readAccessFacts(store, teamId, projectId, subscriber.id), memberOf(store, teamId, subscriber)]);
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
        { project_id: projectId, subscriber_id: subscriber.id, platform_user_id: member?.platform_user_id ?? subscriber.platform_user_id },
        resources,
        adapters,
      )
    : null;
  // Other access remains (or the plan changes): only the roles no other plan covers move.
  const grantee = { project_id: projectId, subscriber_id: subscriber.id, platform_user_id: member?.platform_user_id ?? subscriber.platform_user_id };
  const roleChange =
    project && (planChange || othersWithAccess.length > 0)
      ? await prepareRoleChange(runtime, teamId, project, { plan: change.plan, previousPlan: change.previousPlan, had, has }, othersWithAccess, grantee, adapters)
      : null;
  const roleContext = { member, subscriber, projectId, subscriptionId: after.id, platformType: project?.platform_type ?? 'web' };
  if (planChange) return { subscription: after, write: (tx) => (roleChange ? writeRoleChange(tx, roleChange, roleContext) : null) };
  const subscription: Subscription = { ...after, invite_links: granted?.inviteLinks ?? [] };

  const write = (tx: Transaction): PlatformAccessFollowUp | null => {
    let followUp: PlatformAccessFollowUp | null = roleChange ? writeRoleChange(tx, roleChange, roleContext) : null;
    if (othersWithAccess.length === 0) {
      granted?.record(tx);
      // No member to hold the failure (never joined): the subscription's own durable retry, in this
      // transaction, so the links the subscriber needs to join are never lost.
      if (granted && !granted.outcome.ok && member === null) {
        scheduleInviteLinksRetry(tx, teamId, after, granted.outcome.reason, runtime.clock.nowMs());
        logger.warn('invite links not made; retried later', { subscription_id: after.id, project_id: projectId, reason: granted.outcome.reason });
      }
      for (const resource of resources) {
        const data = has ? { member, subscriber, resource, invite_link: granted?.links.get(resource.id) ?? null } : { member, subscriber, resource };
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
      tx.put({ ...keys.subscriberConversion(teamId, projectId, subscriber.id), entity: entity.subscriberConversion, team_id: teamId, subscription_id: after.id, converted_at: after.updated_at });
      tx.emit({ type: 'member.converted', projectId, data: { member, subscriber, subscription } });
    } else if (!has) {
      tx.emit({ type: 'member.churned', projectId, data: { member, subscriber, subscription } });
    }
    return followUp;
  };
  return { subscription, write };
}
