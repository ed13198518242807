import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import {
  claimPlatformUser,
  linkInvitedSubscriber,
  linkMemberToSubscriber,
  putNewMember,
  readMemberItem,
  readPlatformUserClaim,
  writeMemberChange,
} from '../../store/members.js';
import { projectExists, readSubscriberItem } from '../../store/subscriptions/reads.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { toSubscriber, writeSubscriberAccess } from '../subscribers/repository.js';
import type { Subscriber } from '../subscribers/schema.js';
import { toMember } from './repository.js';
import type { Member } from './schema.js';

/**
 * Membership changes reported by a platform (DESIGN D17, D22): a person joined or left the project's
 * community, or changed their username or display name. The Telegram hook runs {@link recordPlatformMembership}
 * through the pipeline as the internal operation of the same name once it verified and parsed an update; the portal's
 * Discord linking calls it inside its own operation; nothing on the REST or tool surface does.
 */

/** One platform membership update: who, in which project, what happened, and their current profile. */
export interface PlatformMembershipUpdate {
  teamId: string;
  projectId: string;
  /** The person's id on the project's platform. */
  platformUserId: string;
  /**
   * `joined`: they are in the community now; `left`: they left of their own accord; `kicked`: someone on
   * the platform removed them without a ban; `banned`: someone on the platform banned them; `profile`: only
   * their profile changed.
   */
  change: 'joined' | 'left' | 'kicked' | 'banned' | 'profile';
  /**
   * The subscriber whose personal invite link they joined through (`joined` only): a new member is linked to
   * that subscriber when the subscriber has no platform user id and no member yet (the subscriber takes
   * this platform user id).
   */
  invitedSubscriberId?: string;
  /** Their username on the platform (undefined: unknown, keep what is recorded; null: they have none). */
  username?: string | null;
  /** Their display name on the platform (undefined: keep; null: none). */
  displayName?: string | null;
}

/**
 * Records a platform membership update (DESIGN D17) with its `member.*` event in one transaction (banned members stay
 * banned; repeats change nothing), linking a join through a personal invite link to its subscriber. Returns the member,
 * or null for `left`/`profile` of an unknown person. Errors: NOT_FOUND (project); CONFLICT (MAX_ATTEMPTS lost races).
 */
export async function recordPlatformMembership(
  runtime: UnitOfWorkRuntime,
  update: PlatformMembershipUpdate,
): Promise<Member | null> {
  const { teamId, projectId, platformUserId } = update;
  if (!(await projectExists(runtime.store, teamId, projectId)))
    throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return retryOnLostRace(
    async () => {
      const claim = await readPlatformUserClaim(runtime.store, teamId, projectId, platformUserId);
      const [memberItem, subscriberItem, invitedItem] = await Promise.all([
        claim?.member_id
          ? readMemberItem(runtime.store, teamId, projectId, claim.member_id)
          : Promise.resolve(undefined),
        claim?.subscriber_id
          ? readSubscriberItem(runtime.store, teamId, projectId, claim.subscriber_id)
          : Promise.resolve(undefined),
        update.invitedSubscriberId && !claim?.subscriber_id && !claim?.member_id && update.change === 'joined'
          ? readSubscriberItem(runtime.store, teamId, projectId, update.invitedSubscriberId)
          : Promise.resolve(undefined),
      ]);
      // The invited subscriber is linked only while it has no platform identity of its own.
      const invited = invitedItem && !invitedItem.platform_user_id && !invitedItem.member_id ? invitedItem : undefined;
      const subscriber: Subscriber | null = subscriberItem
        ? toSubscriber(subscriberItem, { contact: true })
        : invited
          ? { ...toSubscriber(invited, { contact: true }), platform_user_id: platformUserId }
          : null;
      const nowIso = isoTime(runtime.clock.nowMs());
      const current = memberItem ? toMember(memberItem) : null;
      const profile = {
        username: update.username !== undefined ? update.username : (current?.username ?? null),
        display_name: update.displayName !== undefined ? update.displayName : (current?.display_name ?? null),
      };
      if (!current) {
        if (update.change !== 'joined') return null;
        const member: Member = {
          id: newUuid(),
          project_id: projectId,
          platform_user_id: platformUserId,
          ...profile,
          subscriber_id: subscriber?.id ?? null,
          status: 'joined',
          joined_at: nowIso,
          status_changed_at: nowIso,
          platform_error: null,
          created_at: nowIso,
          updated_at: nowIso,
        };
        const linkedSubscriber = subscriber
          ? { ...subscriber, member_id: member.id, ...(invited ? { updated_at: nowIso } : {}) }
          : null;
        await unitOfWork(runtime, teamId, (tx) => {
          putNewMember(tx, teamId, member);
          if (invited) {
            linkInvitedSubscriber(tx, teamId, projectId, subscriber!.id, {
              platformUserId,
              memberId: member.id,
              nowIso,
            });
            writeSubscriberAccess(tx, teamId, projectId, subscriber!.id, { member_id: member.id });
            claimPlatformUser(tx, teamId, member, { subscriberId: subscriber!.id, invited: true });
            tx.emit({ type: 'member.joined', projectId, data: { member, subscriber: linkedSubscriber } });
            return;
          }
          claimPlatformUser(tx, teamId, member, { subscriberId: subscriber?.id ?? null, invited: false });
          if (subscriber) {
            // Bumps the subscriber's revision: a concurrent update, ban or unban reads again.
            linkMemberToSubscriber(tx, teamId, projectId, subscriber.id, member.id);
            writeSubscriberAccess(tx, teamId, projectId, subscriber.id, { member_id: member.id });
          }
          tx.emit({ type: 'member.joined', projectId, data: { member, subscriber: linkedSubscriber } });
        });
        return member;
      }

      const profileChanged = profile.username !== current.username || profile.display_name !== current.display_name;
      let next: Member = { ...current, ...profile };
      let type: 'member.joined' | 'member.left' | 'member.kicked' | 'member.banned' | 'member.updated' | null = null;
      // A banned member who joins stays banned (the platform should not have let them in): only a profile change is
      // recorded.
      if (update.change === 'joined' && (current.status === 'left' || current.status === 'kicked')) {
        next = { ...next, status: 'joined', joined_at: nowIso, status_changed_at: nowIso };
        type = 'member.joined';
      } else if (update.change === 'left' && current.status === 'joined') {
        next = { ...next, status: 'left', status_changed_at: nowIso };
        type = 'member.left';
      } else if (update.change === 'kicked' && current.status === 'joined') {
        next = { ...next, status: 'kicked', status_changed_at: nowIso };
        type = 'member.kicked';
      } else if (update.change === 'banned' && current.status !== 'banned') {
        next = { ...next, status: 'banned', status_changed_at: nowIso };
        type = 'member.banned';
      } else if (profileChanged) {
        type = 'member.updated';
      }
      if (!type) return current;
      next.updated_at = nowIso;
      const changed = next;
      await unitOfWork(runtime, teamId, (tx) => {
        writeMemberChange(tx, teamId, memberItem!, changed);
        const removal = type === 'member.kicked' || type === 'member.banned';
        // The payload carries the subscriber with consented contact data; the fan-out redacts it per endpoint owner
        // (D10).
        tx.emit({
          type: type,
          projectId,
          data: removal ? { member: changed, subscriber, reason: null } : { member: changed, subscriber },
        });
      });
      return changed;
    },
    {
      exhausted: () =>
        new ProblemError('CONFLICT', `Platform user ${platformUserId} kept changing while this update ran; retry.`),
    },
  );
}
