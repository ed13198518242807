import type { Principal } from '../../auth/principal.js';
import { canAccessProject, requireProjectAccess } from '../../auth/authorize.js';
import { ProblemError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import type { Page } from '../../store/pages.js';
import type { Item } from '../../store/requests.js';
import {
  listMembersOfProject,
  readMemberItem,
  readMemberProjectId,
  readSubscriberMemberId,
} from '../../store/members.js';
import { parseStoredMember } from './record.js';
import type { ListMembersQuery, Member } from './schema.js';

/**
 * Reads of members (DESIGN D14, D17) within the principal's scope, over the members' store adapter
 * (`shared/store/members.ts`), which the repository's writes and key helpers come from. Items carry `revision` (every
 * status change is conditional on it). Moderation lives in `subscribers/moderation.ts`, platform joins in
 * `platform-updates.ts`.
 */

/** The members' store functions other objects' use cases call (claims, member items, member writes). */
export {
  platformUserKey,
  putNewMember,
  readMemberItem,
  readPlatformUserClaim,
  writeMemberChange,
} from '../../store/members.js';

/**
 * The stored member item as read: the public fields plus `revision`, read through `toMember` and `revisionOf` (never
 * cast).
 */
export type StoredMember = Item;

/** NOT_FOUND for a member id (absent, foreign or out of scope: the same answer). */
const memberNotFound = (memberId: string) => new ProblemError('NOT_FOUND', `No member ${memberId}.`);

/** The public member of a stored item (throws StoredRecordError when it does not match its record, DESIGN D14). */
export function toMember(item: Item): Member {
  const member = parseStoredMember(item);
  const error = member.platform_error;
  return {
    id: member.id,
    project_id: member.project_id,
    platform_user_id: member.platform_user_id,
    username: member.username ?? null,
    display_name: member.display_name ?? null,
    subscriber_id: member.subscriber_id ?? null,
    status: member.status,
    joined_at: member.joined_at ?? null,
    status_changed_at: member.status_changed_at,
    // An error recorded before retries existed reads as one failed attempt with no retry scheduled.
    platform_error: error
      ? {
          action: error.action,
          message: error.message,
          at: error.at,
          attempts: error.attempts ?? 1,
          next_attempt_at: error.next_attempt_at ?? null,
        }
      : null,
    created_at: member.created_at,
    updated_at: member.updated_at,
  };
}

/**
 * The stored member item of the principal's team (strongly consistent: reference, then item). Errors:
 * NOT_FOUND when absent, of another team, or of a project outside the token's project scope.
 */
async function loadMember(store: Store, principal: Principal, memberId: string): Promise<StoredMember> {
  const projectId = await readMemberProjectId(store, principal.teamId, memberId);
  if (!projectId || !canAccessProject(principal, projectId)) throw memberNotFound(memberId);
  const item = await readMemberItem(store, principal.teamId, projectId, memberId);
  if (!item) throw memberNotFound(memberId);
  return item;
}

/**
 * Reads one member by id within the principal's team (`GET /v1/members/{id}`): two GetItems.
 * Errors: NOT_FOUND when absent, of another team, or of a project outside the token's project scope.
 */
export async function getMember(store: Store, principal: Principal, memberId: string): Promise<Member> {
  return toMember(await loadMember(store, principal, memberId));
}

/**
 * Lists a project's members in id order, paged (DESIGN D12), optionally only those with `status`
 * (applied by DynamoDB, so a page may be short while `next_cursor` is set). Errors: NOT_FOUND (project
 * absent, foreign or out of scope); VALIDATION_FAILED for a cursor of another list.
 */
export async function listMembers(
  store: Store,
  principal: Principal,
  projectId: string,
  query: Pick<ListMembersQuery, 'limit' | 'cursor' | 'status'>,
): Promise<Page<Member>> {
  requireProjectAccess(principal, projectId);
  const page = await listMembersOfProject(store, principal.teamId, projectId, query, toMember);
  if (!page) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return page;
}

/**
 * The member of a subscriber (DESIGN D17), for use cases that emit `member.*` events about a subscriber
 * (`member.converted`, `member.churned`, `member.access_granted`, `member.access_revoked`): call it
 * before the unit of work and put the result in the payload's `member`. Two strongly consistent
 * GetItems at most (subscriber item, then member item); no scope check (the caller resolved the
 * subscriber through `getSubscriber`). Returns null when the subscriber is absent or has no member.
 */
export async function findMemberOfSubscriber(
  store: Store,
  teamId: string,
  projectId: string,
  subscriberId: string,
): Promise<Member | null> {
  const memberId = await readSubscriberMemberId(store, teamId, projectId, subscriberId);
  if (!memberId) return null;
  const item = await readMemberItem(store, teamId, projectId, memberId);
  return item ? toMember(item) : null;
}
