import { createHash } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { canAccessProject, requireProjectAccess } from '../../auth/authorize.js';
import { ProblemError } from '../../errors.js';
import { entity, keys, sortKeyPrefix } from '../../store/keys.js';
import type { Store } from '../../store/store.js';
import { queryPage, type Page } from '../../store/pages.js';
import type { Item } from '../../store/requests.js';
import type { Transaction } from '../../store/unit-of-work.js';
import { revisionCondition } from '../../store/optimistic.js';
import { parseStoredSubscriberMember } from '../subscribers/record.js';
import { parseStoredMember, parseStoredMemberRef, parseStoredPlatformUserClaim } from './record.js';
import type { ListMembersQuery, Member } from './schema.js';

/**
 * Persistence of members (DESIGN D14, D17): one item per member in its project's partition (`keys.member`, id order) plus a reference item (`keys.memberRef`) for `/v1/members/{id}`.
 * The platform-user claim (`keys.platformUser`, SHA-256 of the platform user id, one per project) holds `subscriber_id` and `member_id`, written in the same transaction as the links
 * on the objects. Items carry `revision` (every status change is conditional on it). Moderation lives in `subscribers/moderation.ts`, platform joins in `platform-updates.ts`.
 */

/** The stored member item as read: the public fields plus `revision`, read through `toMember` and `revisionOf` (never cast). */
export type StoredMember = Item;

/** NOT_FOUND for a member id (absent, foreign or out of scope: the same answer). */
const memberNotFound = (memberId: string) => new ProblemError('NOT_FOUND', `No member ${memberId}.`);

/** The key hash of a platform user id: hex SHA-256 of its UTF-8 text (keeps arbitrary platform ids out of key syntax). */
function platformUserHash(platformUserId: string): string {
  return createHash('sha256').update(platformUserId, 'utf8').digest('hex');
}

/** The key of the platform-user claim of `platformUserId` in a project. */
export function platformUserKey(teamId: string, projectId: string, platformUserId: string) {
  return keys.platformUser(teamId, projectId, platformUserHash(platformUserId));
}

/** Reads the claim of `platformUserId` in a project (strongly consistent); undefined when nobody holds it. */
export async function readPlatformUserClaim(
  store: Store,
  teamId: string,
  projectId: string,
  platformUserId: string,
): Promise<{ subscriber_id?: string; member_id?: string } | undefined> {
  const claim = await store.get(platformUserKey(teamId, projectId, platformUserId));
  return claim ? parseStoredPlatformUserClaim(claim) : undefined;
}

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

/** The stored item of a new member (revision 0). */
function newMemberItem(teamId: string, member: Member): Item {
  return { ...keys.member(teamId, member.project_id, member.id), entity: entity.member, ...member, revision: 0 };
}

/**
 * Adds to `tx` the creation of a new member: its item, its reference item and (the caller's claim
 * write aside) nothing else. Both puts are conditional on absence.
 */
export function putNewMember(tx: Transaction, teamId: string, member: Member): void {
  tx.put(newMemberItem(teamId, member), { condition: 'attribute_not_exists(pk)' });
  tx.put(
    { ...keys.memberRef(teamId, member.id), entity: entity.memberRef, project_id: member.project_id },
    { condition: 'attribute_not_exists(pk)' },
  );
}

/**
 * Adds to `tx` the update of a member's mutable fields to `next` (revision + 1), conditional on the
 * revision of `read` (a lost race fails the transaction; callers retry).
 */
export function writeMemberChange(tx: Transaction, teamId: string, read: Item, next: Member): void {
  const revision = revisionCondition(read);
  const fields = [
    'username',
    'display_name',
    'subscriber_id',
    'status',
    'joined_at',
    'status_changed_at',
    'platform_error',
    'updated_at',
  ] as const;
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ...revision.values, ':revision': Number(read.revision ?? 0) + 1 };
  const sets = fields.map((field) => {
    names[`#${field}`] = field;
    values[`:${field}`] = next[field];
    return `#${field} = :${field}`;
  });
  tx.update(keys.member(teamId, next.project_id, next.id), {
    expression: `SET ${sets.join(', ')}, revision = :revision`,
    condition: `attribute_exists(pk) AND ${revision.expression}`,
    names,
    values,
  });
}

/**
 * Reads a member item by project and id (strongly consistent), without any scope check (callers did
 * it); undefined when absent.
 */
export async function readMemberItem(
  store: Store,
  teamId: string,
  projectId: string,
  memberId: string,
): Promise<StoredMember | undefined> {
  return await store.get(keys.member(teamId, projectId, memberId));
}

/**
 * The stored member item of the principal's team (strongly consistent: reference, then item). Errors:
 * NOT_FOUND when absent, of another team, or of a project outside the token's project scope.
 */
async function loadMember(store: Store, principal: Principal, memberId: string): Promise<StoredMember> {
  const ref = await store.get(keys.memberRef(principal.teamId, memberId));
  const projectId = ref ? parseStoredMemberRef(ref).project_id : null;
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
  const [project, page] = await Promise.all([
    store.get(keys.project(principal.teamId, projectId), { projection: 'pk' }),
    queryPage(store, {
      partition: keys.memberPartition(principal.teamId, projectId),
      sortKeyPrefix: sortKeyPrefix.member,
      limit: query.limit,
      cursor: query.cursor,
      consistent: true,
      map: toMember,
      filter: query.status
        ? { expression: '#status = :status', names: { '#status': 'status' }, values: { ':status': query.status } }
        : undefined,
    }),
  ]);
  if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
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
  const subscriber = await store.get(keys.subscriber(teamId, projectId, subscriberId), { projection: 'member_id' });
  const memberId = subscriber ? parseStoredSubscriberMember(subscriber).member_id : null;
  if (!memberId) return null;
  const item = await readMemberItem(store, teamId, projectId, memberId);
  return item ? toMember(item) : null;
}
