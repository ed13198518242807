import { isoTime } from '../../clock.js';
import { completeDeadline, type DeadlineHandler } from '../../deadlines/deadline.js';
import { logger } from '../../logger.js';
import { callPlatform, platformAdapterFor, platformAdapters } from '../../platforms/adapters.js';
import type { PlatformAdapter, PlatformResult } from '../../platforms/platform-adapter.js';
import { writeMemberPlatformError } from '../../store/members.js';
import type { Store } from '../../store/store.js';
import { inviteLinkResourceIds } from '../../store/subscriptions/invite-links.js';
import {
  readDeadlineItem,
  readPlanItems,
  readProjectItem,
  readSubscriberAndProject,
  readSubscriberItem,
  readSubscription,
  readSubscriptionRevision,
  subscriptionsOfSubscriber,
} from '../../store/subscriptions/reads.js';
import { writeInviteLinks, writeInviteLinksAsRead } from '../../store/subscriptions/writes.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import {
  pendingRevocationsOf,
  platformErrorOf,
  writeSyncDeadline,
  type PendingInviteLinkRevocation,
} from '../members/platform-retry.js';
import { readMemberItem, toMember } from '../members/repository.js';
import type { Member } from '../members/schema.js';
import { toProject } from '../projects/repository.js';
import { isLostRace } from '../../store/optimistic.js';
import type { ProjectResource } from '../projects/schema.js';
import { toSubscriber } from '../subscribers/repository.js';
import { INVITE_LINKS_ERROR_ATTRIBUTE, inviteLinksErrorOf } from './invite-link-retry.js';
import {
  grantOnPlatform,
  isLiveInviteLink,
  resourcesGrantedBy,
  revokeInviteLinksOnPlatform,
  revokeOnPlatform,
  type PlatformGrant,
} from './platform-access.js';
import { toPlan } from '../plans/repository.js';
import { toSubscription } from './records.js';
import type { Subscription } from './schema.js';
import { hasAccess } from './state-machine.js';

/**
 * The `member.platform_sync` deadline (DESIGN D15, D22; scheduled by `members/platform-retry.ts`). It RECONCILES rather
 * than replays ({@link reconciledAction}), so a retry never undoes a later change. Running twice is harmless:
 * Telegram's calls are idempotent and the outcome is conditional on the member's revision and the deadline's due time.
 */

/**
 * What a sync asks of the platform: one of the member's platform actions ({@link reconciledAction} answers null when
 * the service manages nothing for the member).
 */
export type ReconciledAction = 'ban' | 'kick' | 'grant_access' | 'revoke_access';

/**
 * What the platform should hold for `member` now (pure): `ban` (member or subscriber banned), `kick` (still `kicked`
 * after a failed kick), else `grant_access` / `revoke_access` by whether any of the subscriber's `subscriptions` has
 * access (D15 `hasAccess`); null for a member without a subscriber.
 */
export function reconciledAction(
  member: Pick<Member, 'status' | 'platform_error'>,
  subscriber: { status: string } | null,
  subscriptions: Pick<Subscription, 'status'>[],
): ReconciledAction | null {
  if (member.status === 'banned' || subscriber?.status === 'banned') return 'ban';
  if (member.status === 'kicked' && member.platform_error?.action === 'kick') return 'kick';
  if (!subscriber) return null;
  return subscriptions.some((subscription) => hasAccess(subscription.status)) ? 'grant_access' : 'revoke_access';
}

/**
 * Applies a member's sync deadline: asks the adapter for the {@link reconciledAction} outside any transaction, then ONE
 * transaction (conditional on revision and due time) clears or records the error (attempt n + 1, backoff; given up at
 * the last), revokes pending invite links whatever the action, and writes a grant's links. A lost race writes nothing.
 */
export const applyMemberPlatformSync: DeadlineHandler = async (runtime, deadline) => {
  const { teamId, projectId } = deadline;
  const store = runtime.store;
  const item = projectId ? await readMemberItem(store, teamId, projectId, deadline.subjectId) : undefined;
  const member = item ? toMember(item) : null;
  const project = member ? await readProjectItem(store, teamId, member.project_id) : undefined;
  try {
    if (!item || !member?.platform_error || !project) {
      await unitOfWork(runtime, teamId, (tx) => completeDeadline(tx, deadline));
      return;
    }
    const { platform_type: platformType, resources } = toProject(project);
    const subscriberId = member.subscriber_id;
    const [subscriber, subscriptions] = subscriberId
      ? await Promise.all([
          readSubscriberItem(store, teamId, member.project_id, subscriberId),
          subscriptionsOfSubscriber(store, teamId, member.project_id, subscriberId),
        ])
      : [undefined, []];
    const action = reconciledAction(
      member,
      subscriber ? toSubscriber(subscriber, { contact: false }) : null,
      subscriptions,
    );

    const adapter = platformAdapterFor(platformType, platformAdapters(runtime));
    const target = { team_id: teamId, project_id: member.project_id, platform_user_id: member.platform_user_id };
    let outcome: PlatformResult = { ok: true };
    let grant: PlatformGrant | null = null;
    if (action === 'ban') outcome = await callPlatform(() => adapter.ban(target, null));
    else if (action === 'kick') outcome = await callPlatform(() => adapter.kick(target));
    else if (action === 'revoke_access') outcome = await revokeOnPlatform(adapter, target, resources);
    else if (action === 'grant_access') {
      // The resources the plans of the subscriptions with access cover (a Discord plan's roles).
      const planIds = [
        ...new Set(
          subscriptions
            .filter((subscription) => hasAccess(subscription.status))
            .map((subscription) => subscription.plan_id),
        ),
      ];
      const plans = (await readPlanItems(store, teamId, planIds)).map(toPlan);
      const granted = plans.length > 0 ? resourcesGrantedBy(resources, plans) : resources;
      grant = await grantOnPlatform(
        runtime,
        teamId,
        platformType,
        { project_id: member.project_id, subscriber_id: subscriberId!, platform_user_id: member.platform_user_id },
        granted,
      );
      outcome = grant.outcome;
      // The roles no plan with access covers go (a plan change or an ended plan whose removal failed).
      const uncovered = resources.filter((resource) => resource.kind === 'role' && !granted.includes(resource));
      const revoked = uncovered.length > 0 ? await revokeOnPlatform(adapter, target, uncovered) : outcome;
      if (!revoked.ok && outcome.ok) outcome = revoked;
    }

    const pending = pendingRevocationsOf(item);
    const links =
      pending.length > 0
        ? await revokeInviteLinksOnPlatform(adapter, { team_id: teamId, project_id: member.project_id }, pending)
        : null;
    if (links && !links.outcome.ok && outcome.ok) outcome = links.outcome;

    const nowMs = runtime.clock.nowMs();
    const error = outcome.ok
      ? null
      : platformErrorOf(action ?? 'revoke_access', outcome.reason, nowMs, member.platform_error.attempts + 1);
    const holder = grant && grant.inviteLinks.length > 0 ? latestWithAccess(subscriptions) : null;
    const holderRevision = holder ? await readSubscriptionRevision(store, teamId, holder.id) : undefined;
    await unitOfWork(runtime, teamId, (tx) => {
      writeMemberPlatformError(tx, teamId, member, error, isoTime(nowMs), item, links ? links.failed : undefined);
      writeSyncDeadline(tx, deadline, error);
      if (!grant || grant.inviteLinks.length === 0) return;
      grant.record(tx);
      if (holder && holderRevision !== undefined)
        writeInviteLinks(tx, teamId, holder.id, holderRevision, grant.inviteLinks);
    });
    if (error && !error.next_attempt_at)
      logger.warn('platform retries exhausted; platform_error stays on the member', {
        member_id: member.id,
        action: error.action,
        attempts: error.attempts,
      });
  } catch (failure) {
    if (isLostRace(failure)) return; // applied, moved or changed by another run or a request
    throw failure;
  }
};

/** The subscription with access that changed status last (holds the invite links of a retried grant), or null. */
function latestWithAccess(subscriptions: Subscription[]): Subscription | null {
  const withAccess = subscriptions.filter((subscription) => hasAccess(subscription.status));
  return withAccess.reduce<Subscription | null>(
    (latest, subscription) =>
      latest === null || subscription.status_changed_at > latest.status_changed_at ? subscription : latest,
    null,
  );
}

/**
 * Applies a `subscription.invite_links` deadline (DESIGN D22): dropped when access ended, a member exists, banned, or
 * the project/resource is gone; else asks for the missing links and, in ONE transaction (revision, due time), stores
 * them with `member.access_granted` (member null) or reschedules. A lost race revokes the new links; twice does
 * nothing.
 */
export const applySubscriptionInviteLinks: DeadlineHandler = async (runtime, deadline) => {
  const { teamId } = deadline;
  const store = runtime.store;
  const current = await readDeadlineItem(store, deadline);
  if (!current || current.due_at !== deadline.dueAt) return; // applied, moved or dropped meanwhile
  const item = await readSubscription(store, teamId, deadline.subjectId);
  const subscription = item ? toSubscription(item) : null;
  const drop = () => unitOfWork(runtime, teamId, (tx) => completeDeadline(tx, deadline));
  let made: { adapter: PlatformAdapter; projectId: string; revocations: PendingInviteLinkRevocation[] } | null = null;
  try {
    if (!item || !subscription || !hasAccess(subscription.status)) return await drop();
    const projectId = subscription.project_id;
    const read = await readSubscriberAndProject(store, teamId, projectId, subscription.subscriber_id);
    const { subscriber: subscriberItem, project: projectItem } = read;
    if (!subscriberItem || subscriberItem.member_id || subscriberItem.status === 'banned' || !projectItem)
      return await drop();
    const nowMs = runtime.clock.nowMs();
    const live = subscription.invite_links.filter((link) => isLiveInviteLink(link, nowMs));
    const project = toProject(projectItem);
    const needed = await resourcesWithoutLink(
      store,
      teamId,
      projectId,
      live.map((link) => link.url),
      project.resources,
    );
    if (needed.length === 0) return await drop();

    const subscriber = toSubscriber(subscriberItem, { contact: true });
    const grant = await grantOnPlatform(
      runtime,
      teamId,
      project.platform_type,
      { project_id: projectId, subscriber_id: subscriber.id, platform_user_id: subscriber.platform_user_id },
      needed,
    );
    const attempts = (inviteLinksErrorOf(current)?.attempts ?? 1) + 1;
    const error = grant.outcome.ok ? null : platformErrorOf('grant_access', grant.outcome.reason, nowMs, attempts);
    const adapter = platformAdapterFor(project.platform_type, platformAdapters(runtime));
    const revocations = needed.flatMap(({ id, kind, platform_resource_id }) => {
      const url = grant.links.get(id)?.url;
      return url ? [{ resource: { kind, platform_resource_id }, url }] : [];
    });
    made = { adapter, projectId, revocations };
    await unitOfWork(runtime, teamId, (tx) => {
      writeSyncDeadline(tx, deadline, error, error ? { [INVITE_LINKS_ERROR_ATTRIBUTE]: error } : {});
      if (grant.inviteLinks.length === 0) return;
      grant.record(tx);
      writeInviteLinksAsRead(tx, teamId, subscription.id, item, [...live, ...grant.inviteLinks], isoTime(nowMs));
      for (const resource of needed) {
        const link = grant.links.get(resource.id);
        if (link)
          tx.emit({
            type: 'member.access_granted',
            projectId,
            data: { member: null, subscriber, resource, invite_link: link },
          });
      }
    });
    if (error && !error.next_attempt_at) {
      // Never log an invite link: it admits whoever holds it.
      logger.warn('invite-link retries exhausted; the subscriber has no invite link', {
        subscription_id: subscription.id,
        project_id: projectId,
        attempts: error.attempts,
        reason: error.message,
      });
    }
  } catch (failure) {
    if (!isLostRace(failure)) throw failure;
    // Applied, moved or changed by another run or a transition: nothing was written, so the links just
    // made are nobody's — revoke them (best effort: they expire anyway; never logged).
    if (made?.revocations.length)
      await revokeInviteLinksOnPlatform(
        made.adapter,
        { team_id: teamId, project_id: made.projectId },
        made.revocations,
      );
  }
};

/**
 * The resources of `resources` none of the live links `urls` was made for ({@link inviteLinkResourceIds}):
 * those a retried grant still owes.
 */
async function resourcesWithoutLink(
  store: Store,
  teamId: string,
  projectId: string,
  urls: string[],
  resources: ProjectResource[],
): Promise<ProjectResource[]> {
  const linked = new Set((await inviteLinkResourceIds(store, teamId, projectId, urls)).values());
  return resources.filter((resource) => !linked.has(resource.id));
}
