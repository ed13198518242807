import type { Principal } from '../../auth/principal.js';
import { requireAbility } from '../../auth/authorize.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { Store } from '../../store/store.js';
import type { Page } from '../../store/pages.js';
import { groupStore } from '../../store/groups.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { countRoleAssignments, loadRoles } from '../roles/repository.js';
import { difference, distinct, normalizeName, requireGrantable } from '../roles/policy.js';
import { loadMembers, writeMemberGroups, type StoredTeamMember } from '../team-members/records.js';
import { MAX_MEMBER_GROUPS } from '../team-members/schema.js';
import { groupChangedMeanwhile, publicGroup, toStoredGroup, type StoredGroup } from './records.js';
import type { CreateGroupRequest, Group, ListGroupsQuery, UpdateGroupRequest } from './schema.js';

/**
 * Persistence and use cases of groups (DESIGN D14, D19): items of the team's partition (`TEAM#<team>`,
 * `GROUP#<uuid>`) with a name claim (`GROUP_NAME#<normalized name>`). A group's member list and each
 * member's group list are written in the same transaction, each guarded by its version, and so are the
 * assignment counters of the group's roles.
 */

const notFound = (groupId: string) => new ProblemError('NOT_FOUND', `No group ${groupId}.`);
const nameTaken = (name: string) =>
  new ProblemError(
    'CONFLICT',
    `The team already has a group named ${name} (names are unique in any case); choose another name.`,
  );

/** Reads one group of the team (strongly consistent); null when absent. */
async function findGroup(store: Store, teamId: string, groupId: string): Promise<StoredGroup | null> {
  const item = await groupStore.read(store, teamId, groupId);
  return item ? toStoredGroup(item) : null;
}

/** Reads one group of the principal's team (`GET /v1/groups/{id}`). Errors: NOT_FOUND (absent or another team's). */
export async function getGroup(store: Store, principal: Principal, groupId: string): Promise<Group> {
  const group = await findGroup(store, principal.teamId, groupId);
  if (!group) throw notFound(groupId);
  return publicGroup(group);
}

/**
 * Lists the team's groups in id order, paged (DESIGN D12), optionally only those holding a member or
 * giving a role (applied by DynamoDB, so a page may be short while `next_cursor` is set).
 * Errors: VALIDATION_FAILED for a cursor of another list.
 */
export async function listGroups(store: Store, principal: Principal, query: ListGroupsQuery): Promise<Page<Group>> {
  const filters = { memberId: query.member_id, roleId: query.role_id };
  return groupStore.listPage(store, principal.teamId, { ...query, ...filters }, (item) =>
    publicGroup(toStoredGroup(item)),
  );
}

/**
 * Checks what granting roles to members needs (DESIGN D19): `role:assign` for giving roles, every
 * ability of `roleIds` held by the caller (TOKEN_MISSING_ABILITY), and the roles existing (NOT_FOUND).
 */
async function requireAssignableRoles(
  store: Store,
  principal: Principal,
  roleIds: readonly string[],
  what: string,
): Promise<void> {
  if (roleIds.length === 0) return;
  requireAbility(principal, 'role:assign');
  const roles = await loadRoles(store, principal.teamId, roleIds);
  requireGrantable(
    principal,
    roles.flatMap((role) => role.abilities),
    what,
  );
}

/**
 * Reads members joining a group: they must exist (NOT_FOUND), not be removed and have room for one more group
 * (CONFLICT).
 */
async function loadJoiningMembers(
  store: Store,
  teamId: string,
  memberIds: readonly string[],
  groupName: string,
): Promise<StoredTeamMember[]> {
  const members = await loadMembers(store, teamId, memberIds);
  for (const member of members) {
    if (member.status === 'removed')
      throw new ProblemError(
        'CONFLICT',
        `Team member ${member.id} was removed; only invited and active members can join group ${groupName}.`,
      );
    if (member.group_ids.length >= MAX_MEMBER_GROUPS) {
      throw new ProblemError(
        'CONFLICT',
        `Team member ${member.id} is already in ${MAX_MEMBER_GROUPS} groups, the most a member can be in; take them out of one first.`,
      );
    }
  }
  return members;
}

/**
 * Creates a group (`POST /v1/groups`) and emits `group.created` in the same transaction (DESIGN D6),
 * with its members' group lists and its roles' assignment counters. Giving roles needs `role:assign`
 * and the roles' abilities held by the caller (TOKEN_MISSING_ABILITY); adding members needs
 * `group:manage-members`. Errors: NOT_FOUND (a role or member), CONFLICT (name taken, a member removed
 * or already in the most groups, a concurrent change).
 */
export async function createGroup(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  input: CreateGroupRequest,
): Promise<Group> {
  const teamId = principal.teamId;
  const roleIds = distinct(input.role_ids ?? []);
  const memberIds = distinct(input.member_ids ?? []);
  if (memberIds.length) requireAbility(principal, 'group:manage-members');
  await requireAssignableRoles(runtime.store, principal, roleIds, `group ${input.name}`);
  const members = await loadJoiningMembers(runtime.store, teamId, memberIds, input.name);
  const now = isoTime(runtime.clock.nowMs());
  const group: StoredGroup = {
    id: newUuid(),
    name: input.name,
    description: input.description ?? null,
    role_ids: roleIds,
    member_ids: memberIds,
    member_count: memberIds.length,
    created_at: now,
    updated_at: now,
    version: 1,
  };
  return unitOfWork(runtime, teamId, (tx) => {
    groupStore.create(tx, teamId, group, normalizeName(input.name), () => nameTaken(input.name));
    countRoleAssignments(tx, teamId, roleIds, 1);
    for (const member of members) writeMemberGroups(tx, teamId, member, [...member.group_ids, group.id], now);
    const created = publicGroup(group);
    tx.emit({ type: 'group.created', projectId: null, data: { group: created } });
    return created;
  });
}

/**
 * Changes a group with `group.updated` (no-op writes nothing). Added roles need `role:assign`; member changes
 * `group:manage-members`; the caller must hold every granted role's abilities (TOKEN_MISSING_ABILITY). Errors:
 * NOT_FOUND, CONFLICT (name taken, member removed or in too many groups, concurrency).
 */
export async function updateGroup(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  groupId: string,
  input: UpdateGroupRequest,
): Promise<Group> {
  const teamId = principal.teamId;
  const current = await findGroup(runtime.store, teamId, groupId);
  if (!current) throw notFound(groupId);
  const roleIds = input.role_ids ? distinct(input.role_ids) : current.role_ids;
  const memberIds = input.member_ids ? distinct(input.member_ids) : current.member_ids;
  const roles = difference(current.role_ids, roleIds);
  const members = difference(current.member_ids, memberIds);
  if (members.added.length || members.removed.length) requireAbility(principal, 'group:manage-members');
  await requireAssignableRoles(runtime.store, principal, roles.added, `group ${current.name}`);
  if (members.added.length) await requireAssignableRoles(runtime.store, principal, roleIds, `group ${current.name}`);
  const joining = await loadJoiningMembers(runtime.store, teamId, members.added, current.name);
  const leaving = (await loadMembers(runtime.store, teamId, members.removed)).filter((member) =>
    member.group_ids.includes(groupId),
  );
  const name = input.name ?? current.name;
  const description = input.description === undefined ? current.description : input.description;
  const renamed = normalizeName(name) !== normalizeName(current.name);
  const unchanged =
    name === current.name &&
    description === current.description &&
    !roles.added.length &&
    !roles.removed.length &&
    !members.added.length &&
    !members.removed.length;
  if (unchanged) return publicGroup(current);
  const now = isoTime(runtime.clock.nowMs());
  const updated: StoredGroup = {
    ...current,
    name,
    description,
    role_ids: roleIds,
    member_ids: memberIds,
    member_count: memberIds.length,
    updated_at: now,
    version: current.version + 1,
  };
  return unitOfWork(runtime, teamId, (tx) => {
    groupStore.writeChange(tx, teamId, current, updated, () => groupChangedMeanwhile(groupId));
    if (renamed) {
      groupStore.releaseName(tx, teamId, normalizeName(current.name));
      groupStore.claimName(tx, teamId, groupId, normalizeName(name), () => nameTaken(name));
    }
    countRoleAssignments(tx, teamId, roles.added, 1);
    countRoleAssignments(tx, teamId, roles.removed, -1);
    for (const member of joining)
      writeMemberGroups(tx, teamId, member, [...member.group_ids.filter((id) => id !== groupId), groupId], now);
    for (const member of leaving)
      writeMemberGroups(
        tx,
        teamId,
        member,
        member.group_ids.filter((id) => id !== groupId),
        now,
      );
    const group = publicGroup(updated);
    tx.emit({ type: 'group.updated', projectId: null, data: { group } });
    return group;
  });
}

/**
 * Deletes a group (`DELETE /v1/groups/{id}`) and emits `group.deleted` in the same transaction, taking it
 * out of its members' group lists and giving back its roles' assignments. Errors: NOT_FOUND, CONFLICT (a
 * concurrent change).
 */
export async function deleteGroup(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  groupId: string,
): Promise<{ id: string; deleted: true }> {
  const teamId = principal.teamId;
  const current = await findGroup(runtime.store, teamId, groupId);
  if (!current) throw notFound(groupId);
  const members = (await loadMembers(runtime.store, teamId, current.member_ids)).filter((member) =>
    member.group_ids.includes(groupId),
  );
  const now = isoTime(runtime.clock.nowMs());
  return unitOfWork(runtime, teamId, (tx) => {
    groupStore.delete(tx, teamId, current, normalizeName(current.name), () => groupChangedMeanwhile(groupId));
    countRoleAssignments(tx, teamId, current.role_ids, -1);
    for (const member of members)
      writeMemberGroups(
        tx,
        teamId,
        member,
        member.group_ids.filter((id) => id !== groupId),
        now,
      );
    tx.emit({ type: 'group.deleted', projectId: null, data: { group: publicGroup(current) } });
    return { id: groupId, deleted: true as const };
  });
}
