import type { ProblemError } from '../errors.js';
import type { TeamMember } from '../domain/team-members/schema.js';

type TeamMemberStatus = TeamMember['status'];
import {
  ITEM_ABSENT_CONDITION,
  ITEM_EXISTS_CONDITION,
  allOf,
  atVersion,
  readByIds,
  setFields,
  type Condition,
} from './expressions.js';
import { entity, keys, sortKeyPrefix } from './keys.js';
import { listFilter, queryPage, type Page } from './pages.js';
import type { Item } from './requests.js';
import type { Store } from './store.js';
import type { Transaction } from './unit-of-work.js';

/**
 * The team member store (DESIGN D14, D19): items of the team's partition (`TEAM_MEMBER#<uuid>`) with a
 * `version`, an e-mail claim per invited or active member (keyed by the address's SHA-256) keeping addresses
 * unique, and pending invitations in partitions of their own (found by the id in the token).
 */

/** A member as the domain holds it: the public fields plus version, pending invitation id and e-mail hash. */
type StoredMemberFields = TeamMember & { version: number; invitation_id: string | null; email_sha256: string };

/** A pending invitation as first written. */
interface NewInvitation {
  id: string;
  teamId: string;
  memberId: string;
  secretSha256: string;
  /** Expiry, epoch MILLISECONDS. */
  expiresAtMs: number;
  /** The item's TTL (housekeeping), epoch SECONDS. */
  ttlSeconds: number;
}

/** The member's version is still the one read and, with `status`, its status is (or with `not`, is not) that. */
function versionAnd(read: StoredMemberFields, status: { is?: TeamMemberStatus; not?: TeamMemberStatus }): Condition {
  const statusCondition: Condition = status.is
    ? { expression: '#status = :read_status', names: { '#status': 'status' }, values: { ':read_status': status.is } }
    : { expression: '#status <> :read_status', names: { '#status': 'status' }, values: { ':read_status': status.not } };
  return allOf(atVersion(read.version), statusCondition);
}

/** Adds to `tx` the update of `fields` of the member as read, under `guard` (else `failed()`). */
function writeFields(
  tx: Transaction,
  teamId: string,
  read: StoredMemberFields,
  fields: Record<string, unknown>,
  guard: Condition,
  failed: () => ProblemError,
): void {
  const set = setFields(fields);
  const condition = allOf(guard);
  tx.update(keys.teamMember(teamId, read.id), {
    expression: `SET ${set.clause}`,
    condition: condition.expression,
    names: { ...set.names, ...condition.names },
    values: { ...set.values, ...condition.values },
    onConditionFailed: failed,
  });
}

/**
 * The team member store adapter: reads and the list of the team's members, e-mail claims and invitations (Store port),
 * and the writes of members with their e-mail claims and invitations, added to a transaction.
 */
export const teamMemberStore = {
  /** The stored member item (strongly consistent), or undefined. */
  async read(store: Store, teamId: string, memberId: string): Promise<Item | undefined> {
    return store.get(keys.teamMember(teamId, memberId));
  },

  /** The stored items of the members among `memberIds` (strongly consistent), in no particular order. */
  async readMany(store: Store, teamId: string, memberIds: readonly string[]): Promise<Item[]> {
    return readByIds(store, memberIds, (memberId) => keys.teamMember(teamId, memberId));
  },

  /** The e-mail claim item of the address whose SHA-256 is `emailSha256` (strongly consistent), or undefined. */
  async readEmailClaim(store: Store, teamId: string, emailSha256: string): Promise<Item | undefined> {
    return store.get(keys.teamMemberEmail(teamId, emailSha256));
  },

  /** The stored invitation `invitationId` (strongly consistent), or undefined. */
  async readInvitation(store: Store, invitationId: string): Promise<Item | undefined> {
    return store.get(keys.teamInvitation(invitationId));
  },

  /**
   * One page of the team's members in id order (D12), optionally only those holding `roleId` directly, in
   * `groupId`, or with `status` (filtered by DynamoDB, so a page may be short). Errors: VALIDATION_FAILED (cursor).
   */
  async listPage<T>(
    store: Store,
    teamId: string,
    query: { limit: number; cursor?: string; roleId?: string; groupId?: string; status?: TeamMemberStatus },
    map: (item: Item) => T,
  ): Promise<Page<T>> {
    const conditions: string[] = [];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    if (query.roleId) {
      conditions.push('contains(role_ids, :role)');
      values[':role'] = query.roleId;
    }
    if (query.groupId) {
      conditions.push('contains(group_ids, :group)');
      values[':group'] = query.groupId;
    }
    const status = listFilter([{ attribute: 'status', equals: query.status }]);
    if (status) {
      conditions.push(status.expression);
      Object.assign(names, status.names);
      Object.assign(values, status.values);
    }
    return queryPage(store, {
      partition: keys.teamPartition(teamId),
      sortKeyPrefix: sortKeyPrefix.teamMember,
      limit: query.limit,
      cursor: query.cursor,
      map,
      filter: conditions.length
        ? { expression: conditions.join(' AND '), names: Object.keys(names).length ? names : undefined, values }
        : undefined,
    });
  },

  /** Adds to `tx` a new member and its e-mail claim, each only if absent; a claimed address is `emailTaken()`. */
  create(tx: Transaction, teamId: string, member: StoredMemberFields, emailTaken: () => ProblemError): void {
    tx.put(
      { ...keys.teamMember(teamId, member.id), entity: entity.teamMember, team_id: teamId, ...member },
      {
        condition: ITEM_ABSENT_CONDITION.expression,
      },
    );
    tx.put(
      { ...keys.teamMemberEmail(teamId, member.email_sha256), entity: entity.teamMemberEmail, member_id: member.id },
      { condition: ITEM_ABSENT_CONDITION.expression, onConditionFailed: emailTaken },
    );
  },

  /** Adds to `tx` a new pending invitation, only if absent. */
  createInvitation(tx: Transaction, invitation: NewInvitation): void {
    tx.put(
      {
        ...keys.teamInvitation(invitation.id),
        entity: entity.teamInvitation,
        id: invitation.id,
        team_id: invitation.teamId,
        member_id: invitation.memberId,
        secret_sha256: invitation.secretSha256,
        expires_at_ms: invitation.expiresAtMs,
        expires_at: invitation.ttlSeconds,
      },
      { condition: ITEM_ABSENT_CONDITION.expression },
    );
  },

  /**
   * Adds to `tx` an invitation's acceptance: the invitation deleted (it must exist) and the member as read set
   * to `next`'s status, dates, invitation and version, conditional on its version and status `invited`; either
   * failure is `invalid()`.
   */
  accept(
    tx: Transaction,
    teamId: string,
    invitationId: string,
    read: StoredMemberFields,
    next: StoredMemberFields,
    invalid: () => ProblemError,
  ): void {
    tx.delete(keys.teamInvitation(invitationId), {
      condition: ITEM_EXISTS_CONDITION.expression,
      onConditionFailed: invalid,
    });
    const fields = {
      status: next.status,
      joined_at: next.joined_at,
      invitation_expires_at: next.invitation_expires_at,
      invitation_id: next.invitation_id,
      updated_at: next.updated_at,
      version: next.version,
    };
    writeFields(tx, teamId, read, fields, versionAnd(read, { is: 'invited' }), invalid);
  },

  /**
   * Adds to `tx` a member's name and role and group lists of `next` (with `updated_at`, `version`), conditional on the
   * version read and the member not removed.
   */
  writeProfile(
    tx: Transaction,
    teamId: string,
    read: StoredMemberFields,
    next: StoredMemberFields,
    changed: () => ProblemError,
  ): void {
    const fields = {
      name: next.name,
      role_ids: next.role_ids,
      group_ids: next.group_ids,
      updated_at: next.updated_at,
      version: next.version,
    };
    writeFields(tx, teamId, read, fields, versionAnd(read, { not: 'removed' }), changed);
  },

  /**
   * Adds to `tx` a member's group list of `next` (with `updated_at`, `version`), conditional on the version read and
   * the member not removed.
   */
  writeGroups(
    tx: Transaction,
    teamId: string,
    read: StoredMemberFields,
    next: StoredMemberFields,
    changed: () => ProblemError,
  ): void {
    const fields = { group_ids: next.group_ids, updated_at: next.updated_at, version: next.version };
    writeFields(tx, teamId, read, fields, versionAnd(read, { not: 'removed' }), changed);
  },

  /**
   * Adds to `tx` a member's removal (`next`: status, emptied lists, dates, version), conditional on the version
   * read and the member not removed yet, with its e-mail claim and pending invitation deleted.
   */
  remove(
    tx: Transaction,
    teamId: string,
    read: StoredMemberFields,
    next: StoredMemberFields,
    changed: () => ProblemError,
  ): void {
    const fields = {
      status: next.status,
      role_ids: next.role_ids,
      group_ids: next.group_ids,
      invitation_expires_at: next.invitation_expires_at,
      invitation_id: next.invitation_id,
      removed_at: next.removed_at,
      updated_at: next.updated_at,
      version: next.version,
    };
    writeFields(tx, teamId, read, fields, versionAnd(read, { not: 'removed' }), changed);
    tx.delete(keys.teamMemberEmail(teamId, read.email_sha256));
    if (read.invitation_id) tx.delete(keys.teamInvitation(read.invitation_id));
  },
};
