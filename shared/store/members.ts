import { createHash } from 'node:crypto';
import { deadlineItem, type Deadline } from '../deadlines/deadline.js';
import {
  INVITE_LINK_REVOCATIONS_ATTRIBUTE,
  parseStoredMemberRef,
  parseStoredPlatformUserClaim,
  type StoredPlatformUserClaim,
} from '../domain/members/record.js';
import { Member, type MemberPlatformError } from '../domain/members/schema.js';
import { parseStoredSubscriberMember } from '../domain/subscribers/record.js';
import type { PlatformResourceTarget } from '../platforms/platform-adapter.js';
import * as z from '../schemas/zod.js';
import { dueAtUnchanged, ITEM_ABSENT, ITEM_EXISTS, REVISION_INCREMENT } from './expressions.js';
import { entity, keys, sortKeyPrefix } from './keys.js';
import { revisionCondition } from './optimistic.js';
import { queryPage, type Page } from './pages.js';
import { recordParser } from './records.js';
import type { Item } from './requests.js';
import { type Store } from './store.js';
import type { Transaction } from './unit-of-work.js';
import { projectExists } from './subscriptions/reads.js';

/**
 * The store of members (DESIGN D14, D17, D22): one item per member in its project's partition (`keys.member`, id
 * order), a reference item (`keys.memberRef`) for `/v1/members/{id}`, and the platform-user claim
 * (`keys.platformUser`, SHA-256 of the platform user id, one per project) naming its subscriber and member.
 */

/**
 * The key hash of a platform user id: hex SHA-256 of its UTF-8 text (keeps arbitrary platform ids out of key syntax).
 */
function platformUserHash(platformUserId: string): string {
  return createHash('sha256').update(platformUserId, 'utf8').digest('hex');
}

/** The key of the platform-user claim of `platformUserId` in a project. */
export function platformUserKey(teamId: string, projectId: string, platformUserId: string) {
  return keys.platformUser(teamId, projectId, platformUserHash(platformUserId));
}

/** A member item by project and id (strongly consistent), without any scope check; undefined when absent. */
export async function readMemberItem(
  store: Store,
  teamId: string,
  projectId: string,
  memberId: string,
): Promise<Item | undefined> {
  return await store.get(keys.member(teamId, projectId, memberId));
}

/** The project of a member id (its reference item, strongly consistent), or undefined when there is none. */
export async function readMemberProjectId(store: Store, teamId: string, memberId: string): Promise<string | undefined> {
  const ref = await store.get(keys.memberRef(teamId, memberId));
  return ref ? parseStoredMemberRef(ref).project_id : undefined;
}

/** A member item read for its subscriber (projection `subscriber_id`; absent or null: none yet). */
const parseMemberSubscriber = recordParser(
  entity.member,
  z.object({ subscriber_id: z.optional(Member.shape.subscriber_id) }),
);

/**
 * The subscriber a member is linked to (null: none yet), or undefined when there is no such member (one projected
 * GetItem).
 */
export async function readMemberSubscriberId(
  store: Store,
  teamId: string,
  projectId: string,
  memberId: string,
): Promise<string | null | undefined> {
  const member = await store.get(keys.member(teamId, projectId, memberId), { projection: 'subscriber_id' });
  return member ? (parseMemberSubscriber(member).subscriber_id ?? null) : undefined;
}

/** A member item read for its status. */
const parseMemberStatus = recordParser(
  entity.member,
  z.object({ status: Member.shape.status, status_changed_at: Member.shape.status_changed_at }),
);

/** A member's status and when it changed (one GetItem), or undefined when there is no such member. */
export async function readMemberStatus(
  store: Store,
  teamId: string,
  projectId: string,
  memberId: string,
): Promise<Pick<Member, 'status' | 'status_changed_at'> | undefined> {
  const member = await store.get(keys.member(teamId, projectId, memberId));
  return member ? parseMemberStatus(member) : undefined;
}

/**
 * The member a subscriber is linked to (one projected GetItem of the subscriber), or null: none, or no such subscriber.
 */
export async function readSubscriberMemberId(
  store: Store,
  teamId: string,
  projectId: string,
  subscriberId: string,
): Promise<string | null> {
  const subscriber = await store.get(keys.subscriber(teamId, projectId, subscriberId), { projection: 'member_id' });
  return (subscriber ? parseStoredSubscriberMember(subscriber).member_id : null) ?? null;
}

/**
 * A page of a project's member items mapped by `map`, in id order, optionally only those with `status` (a page may
 * be short while `next_cursor` is set); null when the project is gone. Errors: VALIDATION_FAILED (cursor).
 */
export async function listMembersOfProject<T>(
  store: Store,
  teamId: string,
  projectId: string,
  query: { limit: number; cursor?: string; status?: string },
  map: (item: Item) => T,
): Promise<Page<T> | null> {
  const [found, page] = await Promise.all([
    projectExists(store, teamId, projectId),
    queryPage(store, {
      partition: keys.memberPartition(teamId, projectId),
      sortKeyPrefix: sortKeyPrefix.member,
      limit: query.limit,
      cursor: query.cursor,
      consistent: true,
      map,
      filter: query.status
        ? { expression: '#status = :status', names: { '#status': 'status' }, values: { ':status': query.status } }
        : undefined,
    }),
  ]);
  return found ? page : null;
}

/**
 * Reads the claim of `platformUserId` in a project (strongly consistent); undefined when nobody holds it. With its
 * member, it carries the member's status copy ({@link claimStatusCopy}; absent on claims written before it was kept).
 */
export async function readPlatformUserClaim(
  store: Store,
  teamId: string,
  projectId: string,
  platformUserId: string,
): Promise<StoredPlatformUserClaim | undefined> {
  const claim = await store.get(platformUserKey(teamId, projectId, platformUserId));
  return claim ? parseStoredPlatformUserClaim(claim) : undefined;
}

/**
 * The SET clause and values of the member's status copy on its platform-user claim (`member_status`,
 * `member_status_changed_at`), written in the transaction of every status change, so the copy always equals the member
 * and a known sender costs the Telegram hook one read (DESIGN D34).
 */
export function claimStatusCopy(member: Pick<Member, 'status' | 'status_changed_at'>): {
  clause: string;
  values: Record<string, unknown>;
} {
  return {
    clause: 'member_status = :member_status, member_status_changed_at = :member_status_changed_at',
    values: { ':member_status': member.status, ':member_status_changed_at': member.status_changed_at },
  };
}

/** Adds the creation of a new member (revision 0) and its reference item, both conditional on absence. */
export function putNewMember(tx: Transaction, teamId: string, member: Member): void {
  const item = { ...keys.member(teamId, member.project_id, member.id), entity: entity.member, ...member, revision: 0 };
  tx.put(item, { condition: ITEM_ABSENT });
  tx.put(
    { ...keys.memberRef(teamId, member.id), entity: entity.memberRef, project_id: member.project_id },
    { condition: ITEM_ABSENT },
  );
}

/**
 * Adds the update of a member's mutable fields to `next` (revision + 1), conditional on the revision of `read`; a
 * status change also updates the status copy on the member's platform-user claim (conditional on naming the member).
 */
export function writeMemberChange(tx: Transaction, teamId: string, read: Item, next: Member): void {
  const revision = revisionCondition(read);
  if (read.status !== next.status) {
    const copy = claimStatusCopy(next);
    tx.update(platformUserKey(teamId, next.project_id, next.platform_user_id), {
      expression: `SET ${copy.clause}`,
      condition: 'member_id = :member',
      values: { ...copy.values, ':member': next.id },
    });
  }
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
    condition: `${ITEM_EXISTS} AND ${revision.expression}`,
    names,
    values,
  });
}

/** A pending invite-link revocation kept on a member (`url`: a bearer secret). */
interface InviteLinkRevocation {
  resource: PlatformResourceTarget;
  url: string;
}

/**
 * Adds the member's `platform_error` (null clears it), `updated_at` and revision + 1; conditional on the revision of
 * `read` when given, else on the member existing. `revocations`: the pending invite-link revocations — replacing the
 * stored ones (empty removes them), or added to them with `append` — or undefined to leave them alone.
 */
export function writeMemberPlatformError(
  tx: Transaction,
  teamId: string,
  member: Pick<Member, 'id' | 'project_id'>,
  error: MemberPlatformError | null,
  nowIso: string,
  read?: Item,
  revocations?: InviteLinkRevocation[],
  append = false,
): void {
  const revision = read ? revisionCondition(read) : null;
  const set = `SET platform_error = :error, updated_at = :now, ${REVISION_INCREMENT.clause}`;
  const attribute = INVITE_LINK_REVOCATIONS_ATTRIBUTE;
  let links = '';
  const linkValues: Record<string, unknown> = {};
  if (revocations?.length) {
    links = append
      ? `, ${attribute} = list_append(if_not_exists(${attribute}, :no_revocations), :revocations)`
      : `, ${attribute} = :revocations`;
    Object.assign(linkValues, { ':revocations': revocations }, append ? { ':no_revocations': [] } : {});
  } else if (revocations && !append) links = ` REMOVE ${attribute}`;
  tx.update(keys.member(teamId, member.project_id, member.id), {
    expression: set + links,
    condition: revision ? `${ITEM_EXISTS} AND ${revision.expression}` : ITEM_EXISTS,
    values: { ':error': error, ':now': nowIso, ...REVISION_INCREMENT.values, ...revision?.values, ...linkValues },
  });
}

/**
 * Adds the move of a sync deadline being applied (`current`, conditional on its due time) to `dueAt` (ISO 8601),
 * with `attributes` stored on the moved item.
 */
export function moveSyncDeadline(
  tx: Transaction,
  current: Deadline,
  dueAt: string,
  attributes: Record<string, unknown>,
): void {
  const guard = dueAtUnchanged(current.dueAt);
  tx.put({ ...deadlineItem({ ...current, dueAt }), ...attributes }, guard);
}

/**
 * Adds the link of a new member to a subscriber invited through its personal link: the subscriber takes the
 * platform user id and the member (revision + 1), conditional on it having neither yet.
 */
export function linkInvitedSubscriber(
  tx: Transaction,
  teamId: string,
  projectId: string,
  subscriberId: string,
  link: { platformUserId: string; memberId: string; nowIso: string },
): void {
  tx.update(keys.subscriber(teamId, projectId, subscriberId), {
    expression: `SET platform_user_id = :platform_user, member_id = :member, updated_at = :now, ${REVISION_INCREMENT.clause}`,
    condition: `${ITEM_EXISTS} AND (attribute_not_exists(platform_user_id) OR attribute_type(platform_user_id, :null_type)) AND (attribute_not_exists(member_id) OR attribute_type(member_id, :null_type))`,
    values: {
      ':platform_user': link.platformUserId,
      ':member': link.memberId,
      ':now': link.nowIso,
      ...REVISION_INCREMENT.values,
      ':null_type': 'NULL',
    },
  });
}

/**
 * Adds the link of a new member to the subscriber (revision + 1), conditional on the subscriber having no member yet.
 */
export function linkMemberToSubscriber(
  tx: Transaction,
  teamId: string,
  projectId: string,
  subscriberId: string,
  memberId: string,
): void {
  tx.update(keys.subscriber(teamId, projectId, subscriberId), {
    expression: `SET member_id = :member, ${REVISION_INCREMENT.clause}`,
    condition: `${ITEM_EXISTS} AND (attribute_not_exists(member_id) OR attribute_type(member_id, :null_type))`,
    values: { ':member': memberId, ...REVISION_INCREMENT.values, ':null_type': 'NULL' },
  });
}

/**
 * Adds the claim of `platformUserId` by a new member (revision 0, with its status copy): with `subscriberId` on a claim
 * that subscriber holds without a member (`invited`: on a claim nobody holds, naming the subscriber too), without on a
 * claim nobody holds.
 */
export function claimPlatformUser(
  tx: Transaction,
  teamId: string,
  member: Pick<Member, 'id' | 'project_id' | 'platform_user_id' | 'status' | 'status_changed_at'>,
  claim: { subscriberId: string | null; invited: boolean },
): void {
  const { project_id: projectId, platform_user_id: platformUserId } = member;
  const copy = claimStatusCopy(member);
  const values = { ':member': member.id, ':entity': entity.platformUser, ':project': projectId, ...copy.values };
  const set = `SET member_id = :member, #entity = :entity, project_id = :project, ${copy.clause}`;
  const free = 'attribute_not_exists(subscriber_id) AND attribute_not_exists(member_id)';
  if (claim.invited && claim.subscriberId) {
    tx.update(platformUserKey(teamId, projectId, platformUserId), {
      expression: `${set}, subscriber_id = :subscriber`,
      condition: free,
      names: { '#entity': 'entity' },
      values: { ':subscriber': claim.subscriberId, ...values },
    });
    return;
  }
  tx.update(platformUserKey(teamId, projectId, platformUserId), {
    expression: set,
    condition: claim.subscriberId ? 'subscriber_id = :subscriber AND attribute_not_exists(member_id)' : free,
    names: { '#entity': 'entity' },
    values: { ...values, ...(claim.subscriberId ? { ':subscriber': claim.subscriberId } : {}) },
  });
}
