import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { subscriberStore } from '../../store/subscribers.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { readMemberItem, toMember, writeMemberChange } from '../members/repository.js';
import type { Member } from '../members/schema.js';
import { decideSubscriberUpdate } from './decisions.js';
import { memberUpdated, readLinkTarget } from './member-link.js';
import { parseStoredSubscriber } from './record.js';
import {
  loadSubscriber,
  newSubscriberItem,
  publicSubscriber,
  toSubscriber,
  writeSubscriberAccess,
} from './repository.js';
import type { Subscriber, UpdateSubscriberRequest } from './schema.js';

/** Changes of subscribers (DESIGN D14, D17): the update use case over decisions.ts. */

/**
 * Changes a subscriber (`null` clears; D17); a `platform_user_id` change moves the claim and relinks members
 * (`member.updated` each). No-op writes nothing. Errors: NOT_FOUND (absent, foreign, out of scope); CONFLICT (platform
 * user id taken, or `MAX_ATTEMPTS` lost races).
 */
export async function updateSubscriber(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  subscriberId: string,
  input: UpdateSubscriberRequest,
): Promise<Subscriber> {
  return retryOnLostRace(
    async () => {
      const item = await loadSubscriber(runtime.store, principal, subscriberId);
      const teamId = principal.teamId;
      const record = parseStoredSubscriber(item);
      const projectId = record.project_id;
      const current = publicSubscriber(record, { contact: true });
      const stored = { email: record.email ?? null, phone: record.phone ?? null };
      const change = decideSubscriberUpdate(current, stored, input);
      if (!change) return current;
      const { next, nextContact, platformChanged } = change;

      const nowIso = isoTime(runtime.clock.nowMs());
      next.updated_at = nowIso;
      const oldMember = current.member_id
        ? await readMemberItem(runtime.store, teamId, projectId, current.member_id)
        : undefined;
      const link =
        platformChanged && next.platform_user_id
          ? await readLinkTarget(runtime.store, teamId, projectId, next.platform_user_id, subscriberId)
          : undefined;
      if (platformChanged) next.member_id = link?.member ? toMember(link.member).id : null;
      const nextItem = newSubscriberItem(teamId, next, nextContact);
      const subscriber = toSubscriber(nextItem, { contact: true });
      await unitOfWork(runtime, teamId, (tx) => {
        subscriberStore.writeProfile(tx, teamId, item, next, nextContact, { memberChanged: platformChanged });
        if (!platformChanged) {
          if (oldMember) tx.emit(memberUpdated(toMember(oldMember), subscriber));
          return;
        }
        writeSubscriberAccess(tx, teamId, projectId, subscriberId, {
          status: current.status,
          member_id: next.member_id,
        }); // status: unchanged under the revision condition
        if (current.platform_user_id)
          subscriberStore.releaseClaim(
            tx,
            teamId,
            projectId,
            current.platform_user_id,
            subscriberId,
            current.member_id,
          );
        if (oldMember) {
          const unlinked: Member = { ...toMember(oldMember), subscriber_id: null, updated_at: nowIso };
          writeMemberChange(tx, teamId, oldMember, unlinked);
          tx.emit(memberUpdated(unlinked, null));
        }
        if (next.platform_user_id)
          subscriberStore.takeClaim(tx, teamId, projectId, next.platform_user_id, subscriberId, link?.claimMemberId);
        if (link?.member) {
          const linked: Member = { ...toMember(link.member), subscriber_id: subscriberId, updated_at: nowIso };
          writeMemberChange(tx, teamId, link.member, linked);
          tx.emit(memberUpdated(linked, subscriber));
        }
      });
      return subscriber;
    },
    {
      exhausted: () =>
        new ProblemError(
          'CONFLICT',
          `Subscriber ${subscriberId} kept changing while this request ran; read it again and retry.`,
        ),
    },
  );
}
