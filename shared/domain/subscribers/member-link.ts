import { entity } from '../../store/keys.js';
import type { Store } from '../../store/store.js';
import type { Transaction } from '../../store/unit-of-work.js';
import { ProblemError } from '../../errors.js';
import { platformUserKey, readMemberItem, readPlatformUserClaim, type StoredMember } from '../members/repository.js';
import type { Member } from '../members/schema.js';
import type { Subscriber } from './schema.js';

/**
 * The link between a subscriber and the member with the same platform user id (DESIGN D17): the
 * platform user's claim in the project (see `members/repository.ts`), taken and released in the
 * subscriber's transaction, and the `member.updated` event of a link change.
 */

/** The condition "the claim's member is still `memberId` (or still none)", with its values. */
function claimMemberCondition(memberId: string | null | undefined): {
  expression: string;
  values: Record<string, unknown>;
} {
  return memberId
    ? { expression: 'member_id = :claim_member', values: { ':claim_member': memberId } }
    : { expression: 'attribute_not_exists(member_id)', values: {} };
}

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

/** Adds to `tx` taking the claim of `platformUserId` for `subscriberId`, conditional on it being free and its member unchanged. */
export function takeClaim(
  tx: Transaction,
  teamId: string,
  projectId: string,
  platformUserId: string,
  subscriberId: string,
  claimMemberId: string | undefined,
): void {
  const member = claimMemberCondition(claimMemberId);
  tx.update(platformUserKey(teamId, projectId, platformUserId), {
    expression: 'SET subscriber_id = :subscriber, #entity = :entity, project_id = :project',
    condition: `attribute_not_exists(subscriber_id) AND ${member.expression}`,
    names: { '#entity': 'entity' },
    values: { ':subscriber': subscriberId, ':entity': entity.platformUser, ':project': projectId, ...member.values },
  });
}

/** Adds to `tx` releasing the claim of `platformUserId` held by `subscriberId`, conditional on its member unchanged. */
export function releaseClaim(
  tx: Transaction,
  teamId: string,
  projectId: string,
  platformUserId: string,
  subscriberId: string,
  claimMemberId: string | null,
): void {
  const member = claimMemberCondition(claimMemberId);
  tx.update(platformUserKey(teamId, projectId, platformUserId), {
    expression: 'REMOVE subscriber_id',
    condition: `subscriber_id = :subscriber AND ${member.expression}`,
    values: { ':subscriber': subscriberId, ...member.values },
  });
}

/** The data of a `member.updated` event (D10: the subscriber with consented contact data; the fan-out redacts per endpoint owner). */
export function memberUpdated(member: Member, subscriber: Subscriber | null) {
  return { type: 'member.updated' as const, projectId: member.project_id, data: { member, subscriber } };
}
