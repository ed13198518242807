import type { Store } from '../../store/store.js';
import { ProblemError } from '../../errors.js';
import { readMemberItem, readPlatformUserClaim, type StoredMember } from '../members/repository.js';
import type { Member } from '../members/schema.js';
import type { Subscriber } from './schema.js';

/**
 * The link between a subscriber and the member with the same platform user id (DESIGN D17): the platform user's claim
 * in the project (see `members/repository.ts`), taken and released in the subscriber's transaction
 * (`subscriberStore.takeClaim` / `releaseClaim`), and the `member.updated` event of a link change.
 */

/**
 * What linking a subscriber to a platform user id needs, read before the transaction: the claim's
 * member (if any). Errors: CONFLICT when another subscriber of the project holds the platform user id.
 */
export async function readLinkTarget(
  store: Store,
  teamId: string,
  projectId: string,
  platformUserId: string,
  subscriberId: string,
): Promise<{ member: StoredMember | undefined; claimMemberId: string | undefined }> {
  const claim = await readPlatformUserClaim(store, teamId, projectId, platformUserId);
  if (claim?.subscriber_id && claim.subscriber_id !== subscriberId) {
    throw new ProblemError(
      'CONFLICT',
      `Platform user id ${platformUserId} already belongs to subscriber ${claim.subscriber_id} in this project; a platform user can be one subscriber only.`,
    );
  }
  const member = claim?.member_id ? await readMemberItem(store, teamId, projectId, claim.member_id) : undefined;
  return { member, claimMemberId: claim?.member_id };
}

/**
 * The data of a `member.updated` event (D10: the subscriber with consented contact data; the fan-out redacts per
 * endpoint owner).
 */
export function memberUpdated(member: Member, subscriber: Subscriber | null) {
  return { type: 'member.updated' as const, projectId: member.project_id, data: { member, subscriber } };
}
