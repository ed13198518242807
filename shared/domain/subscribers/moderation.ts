import type { Principal } from '../../auth/principal.js';
import type { PlatformType } from '../../catalogues/platform-types.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { callPlatform, platformAdapterFor, platformAdapters } from '../../platforms/adapters.js';
import type { PlatformAdapters, PlatformResult } from '../../platforms/platform-adapter.js';
import { projectStore } from '../../store/projects.js';
import { subscriberStore } from '../../store/subscribers.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { recordPlatformOutcome } from '../members/platform-retry.js';
import { putNewMember, readMemberItem, toMember, writeMemberChange, type StoredMember } from '../members/repository.js';
import type { Member, PlatformAction } from '../members/schema.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { suspendSubscriptionsOfSubscriber } from '../subscriptions/transitions.js';
import { loadSubscriber, toSubscriber, writeSubscriberAccess, type StoredSubscriber } from './repository.js';
import type { Subscriber, SubscriberModeration } from './schema.js';
/**
 * Ban, unban and kick (D17, D22): the service's state change commits first; the platform call runs after it, outside
 * any transaction. A platform failure is recorded as `platform_error` with a durable retry and never rolls the state
 * change back.
 */

/** Options of the moderation use cases. */
export interface ModerationOptions {
  /** The platform adapters by platform type (default the service's, `platformAdapters(runtime)`). */
  adapters?: PlatformAdapters;
}

/** What a moderation use case decided: the next subscriber, the member to write (new or changed) and the event. */
interface Decision {
  subscriber: Subscriber;
  /** Write the subscriber's status fields (and `member_id`); false leaves the subscriber item alone. */
  writeSubscriber: boolean;
  member: Member | null;
  /** True when `member` is new (put with its reference and claim link). */
  newMember: boolean;
  event: { type: 'member.banned' | 'member.unbanned' | 'member.kicked'; data: Record<string, unknown> };
  /** The platform call to make after the commit, or null. */
  platform: PlatformAction | null;
}

/** What a decision reads. */
interface Read {
  item: StoredSubscriber;
  subscriber: Subscriber;
  member: StoredMember | undefined;
  platformType: PlatformType;
}

/**
 * Reads subscriber, project and member, lets `decide` choose the change (it throws CONFLICT for a state
 * that does not allow it), commits it with its event (conditional on the revisions read; a lost race
 * reads again, at most MAX_ATTEMPTS times), then makes the platform call and records its outcome.
 */
async function moderate(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  subscriberId: string,
  options: ModerationOptions,
  decide: (read: Read, nowIso: string) => Decision,
  call: (adapterCall: {
    platformUserId: string;
    platformType: PlatformType;
    teamId: string;
    projectId: string;
  }) => Promise<PlatformResult>,
): Promise<SubscriberModeration> {
  const teamId = principal.teamId;
  const { subscriber, decision, projectId, platformType } = await retryOnLostRace(
    async () => {
      const item = await loadSubscriber(runtime.store, principal, subscriberId);
      const subscriber = toSubscriber(item, { contact: true });
      const projectId = subscriber.project_id;
      const [platformType, member] = await Promise.all([
        projectStore.platformTypeOf(runtime.store, teamId, projectId),
        subscriber.member_id
          ? readMemberItem(runtime.store, teamId, projectId, subscriber.member_id)
          : Promise.resolve(undefined),
      ]);
      if (!platformType) throw new ProblemError('NOT_FOUND', `No subscriber ${subscriberId}.`);
      const nowIso = isoTime(runtime.clock.nowMs());
      const decision = decide({ item, subscriber, member, platformType }, nowIso);
      await unitOfWork(runtime, teamId, (tx) => write(tx, teamId, item, member, decision));
      return { subscriber, decision, projectId, platformType };
    },
    {
      exhausted: () =>
        new ProblemError(
          'CONFLICT',
          `Subscriber ${subscriberId} kept changing while this request ran; read it again and retry.`,
        ),
    },
  );
  let recorded = decision.member;
  if (decision.platform && subscriber.platform_user_id) {
    const result = await callPlatform(() =>
      call({ platformUserId: subscriber.platform_user_id!, platformType, teamId, projectId }),
    );
    if (recorded) recorded = await recordPlatformOutcome(runtime, teamId, recorded, decision.platform, result);
  }
  return { subscriber: decision.subscriber, member: recorded };
}

/** Adds the decision's writes and event to `tx`. */
function write(
  tx: Transaction,
  teamId: string,
  item: StoredSubscriber,
  memberItem: StoredMember | undefined,
  decision: Decision,
): void {
  const next = decision.subscriber;
  if (decision.writeSubscriber) {
    subscriberStore.writeModeration(tx, teamId, item, next);
    writeSubscriberAccess(tx, teamId, next.project_id, next.id, { status: next.status, member_id: next.member_id });
  }
  if (decision.member && decision.newMember) {
    putNewMember(tx, teamId, decision.member);
    subscriberStore.setClaimMember(tx, teamId, next.id, decision.member);
  } else if (decision.member && memberItem) {
    writeMemberChange(tx, teamId, memberItem, decision.member);
  }
  tx.emit({ type: decision.event.type, projectId: next.project_id, data: decision.event.data });
}

/**
 * Bans a subscriber and its member (created `banned` if never joined) with `member.banned`, then bans on the platform
 * and suspends every live subscription (D15, D17). Returns subscriber and member (null without platform user id).
 * Errors: NOT_FOUND; CONFLICT (already banned, lost races).
 */
export async function banSubscriber(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  subscriberId: string,
  reason: string | null,
  options: ModerationOptions = {},
): Promise<SubscriberModeration> {
  const result = await moderate(
    runtime,
    principal,
    subscriberId,
    options,
    ({ subscriber, member }, nowIso) => {
      if (subscriber.status === 'banned') {
        throw new ProblemError(
          'CONFLICT',
          `Subscriber ${subscriberId} is already banned; to lift the ban use POST /v1/subscribers/${subscriberId}/unban.`,
        );
      }
      let next: Member | null = null;
      let newMember = false;
      if (member) {
        next = { ...toMember(member), status: 'banned', status_changed_at: nowIso, updated_at: nowIso };
      } else if (subscriber.platform_user_id) {
        newMember = true;
        next = {
          id: newUuid(),
          project_id: subscriber.project_id,
          platform_user_id: subscriber.platform_user_id,
          username: null,
          display_name: null,
          subscriber_id: subscriber.id,
          status: 'banned',
          joined_at: null,
          status_changed_at: nowIso,
          platform_error: null,
          created_at: nowIso,
          updated_at: nowIso,
        };
      }
      const banned: Subscriber = {
        ...subscriber,
        status: 'banned',
        banned_at: nowIso,
        member_id: next?.id ?? subscriber.member_id,
        updated_at: nowIso,
      };
      return {
        subscriber: banned,
        writeSubscriber: true,
        member: next,
        newMember,
        event: { type: 'member.banned', data: { member: next, subscriber: banned, reason } },
        platform: 'ban',
      };
    },
    ({ platformUserId, platformType, teamId, projectId }) =>
      platformAdapterFor(platformType, options.adapters ?? platformAdapters(runtime)).ban(
        { team_id: teamId, project_id: projectId, platform_user_id: platformUserId },
        reason,
      ),
  );
  await suspendSubscriptionsOfSubscriber(runtime, principal, subscriberId);
  return result;
}

/**
 * Lifts a subscriber's ban (`POST /v1/subscribers/{id}/unban`, DESIGN D17): the subscriber becomes
 * `active`, a banned member becomes `left` (out of the community, free to join again), `member.unbanned`
 * is emitted; then the platform lifts the ban. Suspended subscriptions stay suspended (unsuspend them
 * explicitly). Errors: NOT_FOUND; CONFLICT when not banned, or after lost races.
 */
export async function unbanSubscriber(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  subscriberId: string,
  options: ModerationOptions = {},
): Promise<SubscriberModeration> {
  return moderate(
    runtime,
    principal,
    subscriberId,
    options,
    ({ subscriber, member }, nowIso) => {
      if (subscriber.status !== 'banned')
        throw new ProblemError(
          'CONFLICT',
          `Subscriber ${subscriberId} is not banned (status ${subscriber.status}); only a banned subscriber can be unbanned.`,
        );
      const current = member ? toMember(member) : null;
      const next: Member | null =
        current && current.status === 'banned'
          ? { ...current, status: 'left', status_changed_at: nowIso, updated_at: nowIso }
          : current;
      const unbanned: Subscriber = { ...subscriber, status: 'active', banned_at: null, updated_at: nowIso };
      return {
        subscriber: unbanned,
        writeSubscriber: true,
        member: next,
        newMember: false,
        event: { type: 'member.unbanned', data: { member: next, subscriber: unbanned } },
        platform: 'unban',
      };
    },
    ({ platformUserId, platformType, teamId, projectId }) =>
      platformAdapterFor(platformType, options.adapters ?? platformAdapters(runtime)).unban({
        team_id: teamId,
        project_id: projectId,
        platform_user_id: platformUserId,
      }),
  );
}

/**
 * Kicks a subscriber (`POST /v1/subscribers/{id}/kick`, `kick_subscriber`, DESIGN D17): their member
 * becomes `kicked` (removed without a ban; they may join again), `member.kicked` is emitted with
 * `reason`; then the platform removes the person. Subscriptions are unchanged. Errors: NOT_FOUND;
 * CONFLICT when the subscriber has no member in the community (never joined, left, already kicked or
 * banned), or after lost races.
 */
export async function kickSubscriber(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  subscriberId: string,
  reason: string | null,
  options: ModerationOptions = {},
): Promise<SubscriberModeration> {
  return moderate(
    runtime,
    principal,
    subscriberId,
    options,
    ({ subscriber, member }, nowIso) => {
      const current = member ? toMember(member) : null;
      if (!current || current.status !== 'joined') {
        throw new ProblemError(
          'CONFLICT',
          current
            ? `Subscriber ${subscriberId} is not in the community (member status ${current.status}); only a joined member can be kicked.`
            : `Subscriber ${subscriberId} has never joined the project\u2019s community; only a joined member can be kicked.`,
        );
      }
      const next: Member = { ...current, status: 'kicked', status_changed_at: nowIso, updated_at: nowIso };
      return {
        subscriber,
        writeSubscriber: false,
        member: next,
        newMember: false,
        event: { type: 'member.kicked', data: { member: next, subscriber, reason } },
        platform: 'kick',
      };
    },
    ({ platformUserId, platformType, teamId, projectId }) =>
      platformAdapterFor(platformType, options.adapters ?? platformAdapters(runtime)).kick({
        team_id: teamId,
        project_id: projectId,
        platform_user_id: platformUserId,
      }),
  );
}
