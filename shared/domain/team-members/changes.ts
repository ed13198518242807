import type { Principal } from '../../auth/principal.js';
import { requireAbility } from '../../auth/authorize.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { Store } from '../../store/store.js';
import { teamMemberStore } from '../../store/team-members.js';
import { countUsage } from '../billing/repository.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { loadGroups, writeGroupMembers, type StoredGroup } from '../groups/records.js';
import { MAX_GROUP_MEMBERS } from '../groups/schema.js';
import { countRoleAssignments, loadRoles } from '../roles/repository.js';
import { difference, distinct, requireGrantable } from '../roles/policy.js';
import { BUILT_IN_ROLE_IDS } from '../roles/built-in.js';
import { getTeam } from '../teams/repository.js';
import { findMemberByEmail } from './repository.js';
import {
  emailSha256,
  findMember,
  memberChangedMeanwhile,
  memberNotFound,
  publicMember,
  type StoredTeamMember,
} from './records.js';
import type { TeamMember, UpdateTeamMemberRequest } from './schema.js';

/**
 * Membership changes (DESIGN D14, D19): a member's name, roles and groups, their removal, and the team's
 * first owner. Role and group changes write the members' lists, the groups' member lists and the roles'
 * assignment counters in one transaction with their events.
 */

const removedConflict = (member: StoredTeamMember) =>
  new ProblemError(
    'CONFLICT',
    `Team member ${member.id} was removed at ${member.removed_at}; a removed member cannot change. Invite the person again instead.`,
  );

/**
 * What giving roles and groups to a member needs (DESIGN D19): `role:assign` for roles and
 * `group:manage-members` for groups (and `role:assign` too when a group gives roles, as when a group
 * gains members); the roles, and the roles of the groups, must exist (NOT_FOUND) and grant only
 * abilities the caller holds (TOKEN_MISSING_ABILITY); each group must have room for one more member
 * (CONFLICT). Returns the groups read.
 */
export async function checkGrants(
  store: Store,
  principal: Principal,
  roleIds: readonly string[],
  groupIds: readonly string[],
  memberId: string | null,
): Promise<StoredGroup[]> {
  if (roleIds.length) requireAbility(principal, 'role:assign');
  if (groupIds.length) requireAbility(principal, 'group:manage-members');
  const groups = await loadGroups(store, principal.teamId, groupIds);
  if (groups.some((group) => group.role_ids.length > 0)) requireAbility(principal, 'role:assign');
  for (const group of groups) {
    if (group.member_ids.length >= MAX_GROUP_MEMBERS && !(memberId && group.member_ids.includes(memberId))) {
      throw new ProblemError(
        'CONFLICT',
        `Group ${group.name} already has ${MAX_GROUP_MEMBERS} members, the most a group can have.`,
      );
    }
  }
  const roles = await loadRoles(store, principal.teamId, [...roleIds, ...groups.flatMap((group) => group.role_ids)]);
  requireGrantable(
    principal,
    roles.flatMap((role) => role.abilities),
    'these roles and groups',
  );
  return groups;
}

/** Emits `group.updated` for each changed group (after the group writes of the same transaction). */
export function emitGroupsUpdated(tx: Transaction, groups: readonly StoredGroup[]): void {
  for (const { version: _version, ...group } of groups)
    tx.emit({ type: 'group.updated', projectId: null, data: { group } });
}

/**
 * Changes a member's name and complete role and group lists (`POST /v1/team-members/{id}`, D19; additions follow {@link
 * checkGrants}); a change emits `team.member_role_changed` and `group.updated` in one transaction with the counters; no
 * change writes nothing. Errors: NOT_FOUND, TOKEN_MISSING_ABILITY, CONFLICT (member removed, group full, concurrent
 * change).
 */
export async function updateTeamMember(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  memberId: string,
  input: UpdateTeamMemberRequest,
): Promise<TeamMember> {
  const teamId = principal.teamId;
  const current = await findMember(runtime.store, teamId, memberId);
  if (!current) throw memberNotFound(memberId);
  if (current.status === 'removed') throw removedConflict(current);
  if (input.role_ids !== undefined) requireAbility(principal, 'role:assign');
  if (input.group_ids !== undefined) requireAbility(principal, 'group:manage-members');
  const roleIds = input.role_ids ? distinct(input.role_ids) : current.role_ids;
  const groupIds = input.group_ids ? distinct(input.group_ids) : current.group_ids;
  const roles = difference(current.role_ids, roleIds);
  const groups = difference(current.group_ids, groupIds);
  const joining = await checkGrants(runtime.store, principal, roles.added, groups.added, memberId);
  const leaving = (await loadGroups(runtime.store, teamId, groups.removed, { skipMissing: true })).filter((group) =>
    group.member_ids.includes(memberId),
  );
  const name = input.name ?? current.name;
  const rolesChanged =
    roles.added.length > 0 || roles.removed.length > 0 || groups.added.length > 0 || groups.removed.length > 0;
  if (!rolesChanged && name === current.name) return publicMember(current);
  const team = rolesChanged ? await getTeam(runtime.store, teamId) : null;
  const now = isoTime(runtime.clock.nowMs());
  const updated: StoredTeamMember = {
    ...current,
    name,
    role_ids: roleIds,
    group_ids: groupIds,
    updated_at: now,
    version: current.version + 1,
  };
  return unitOfWork(runtime, teamId, (tx) => {
    teamMemberStore.writeProfile(tx, teamId, current, updated, () => memberChangedMeanwhile(memberId));
    countRoleAssignments(tx, teamId, roles.added, 1);
    countRoleAssignments(tx, teamId, roles.removed, -1);
    const changedGroups = [
      ...joining.map((group) =>
        writeGroupMembers(tx, teamId, group, [...group.member_ids.filter((id) => id !== memberId), memberId], now),
      ),
      ...leaving.map((group) => writeGroupWithout(tx, teamId, group, memberId, now)),
    ];
    const teamMember = publicMember(updated);
    if (team) {
      tx.emit({
        type: 'team.member_role_changed',
        projectId: null,
        data: {
          team,
          team_member: teamMember,
          previous_role_ids: current.role_ids,
          previous_group_ids: current.group_ids,
        },
      });
    }
    emitGroupsUpdated(tx, changedGroups);
    return teamMember;
  });
}

/**
 * Removes a member (`DELETE /v1/team-members/{id}`, DESIGN D19): the member becomes `removed` and holds
 * no roles or groups any more; their e-mail claim and pending invitation go; their groups and roles'
 * counters follow; `team.member_removed` (and `group.updated` for each group left) is emitted — all in
 * one transaction. Tokens minted on the member's behalf are revoked right after (`revokeMemberTokens`, by
 * the handler). Errors: NOT_FOUND, CONFLICT (already removed; a concurrent change).
 */
export async function removeTeamMember(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  memberId: string,
): Promise<TeamMember> {
  const teamId = principal.teamId;
  const current = await findMember(runtime.store, teamId, memberId);
  if (!current) throw memberNotFound(memberId);
  if (current.status === 'removed')
    throw new ProblemError('CONFLICT', `Team member ${memberId} was already removed at ${current.removed_at}.`);
  const groups = (await loadGroups(runtime.store, teamId, current.group_ids, { skipMissing: true })).filter((group) =>
    group.member_ids.includes(memberId),
  );
  const team = await getTeam(runtime.store, teamId);
  const now = isoTime(runtime.clock.nowMs());
  const removed: StoredTeamMember = {
    ...current,
    status: 'removed',
    role_ids: [],
    group_ids: [],
    invitation_expires_at: null,
    invitation_id: null,
    removed_at: now,
    updated_at: now,
    version: current.version + 1,
  };
  return unitOfWork(runtime, teamId, (tx) => {
    teamMemberStore.remove(tx, teamId, current, removed, () => memberChangedMeanwhile(memberId));
    countUsage(tx, teamId, 'team_members', -1);
    countRoleAssignments(tx, teamId, current.role_ids, -1);
    const changedGroups = groups.map((group) => writeGroupWithout(tx, teamId, group, memberId, now));
    const teamMember = publicMember(removed);
    tx.emit({ type: 'team.member_removed', projectId: null, data: { team, team_member: teamMember } });
    emitGroupsUpdated(tx, changedGroups);
    return teamMember;
  });
}

/**
 * Makes `email` an active member of the team holding the built-in `owner` role (DESIGN D19, D21), with
 * the e-mail claim and the role's assignment counter in one transaction, emitting `team.member_joined`;
 * used for the team's first person, who has nobody to invite them (the `npm start` demo owner, the
 * operator CLI). An address that is already an invited or active member returns that member unchanged.
 * Errors: NOT_FOUND (no team).
 */
export async function ensureTeamOwner(
  runtime: UnitOfWorkRuntime,
  teamId: string,
  input: { email: string; name: string },
): Promise<TeamMember> {
  const existing = await findMemberByEmail(runtime.store, teamId, input.email);
  if (existing) return existing;
  const team = await getTeam(runtime.store, teamId);
  const now = isoTime(runtime.clock.nowMs());
  const ownerRoleId = BUILT_IN_ROLE_IDS.owner;
  const member: StoredTeamMember = {
    id: newUuid(),
    email: input.email,
    name: input.name,
    status: 'active',
    role_ids: [ownerRoleId],
    group_ids: [],
    invitation_expires_at: null,
    joined_at: now,
    removed_at: null,
    created_at: now,
    updated_at: now,
    version: 1,
    invitation_id: null,
    email_sha256: emailSha256(input.email),
  };
  return unitOfWork(runtime, teamId, (tx) => {
    teamMemberStore.create(
      tx,
      teamId,
      member,
      () => new ProblemError('CONFLICT', 'A member with this e-mail address was added meanwhile; retry.'),
    );
    // The owner counts like every active member; a team always has room for its first one.
    countUsage(tx, teamId, 'team_members', 1);
    const teamMember = publicMember(member);
    tx.emit({ type: 'team.member_joined', projectId: null, data: { team, team_member: teamMember } });
    return teamMember;
  });
}

/** Adds to `tx` the group's member list without `memberId` (ISO `now`); returns the group as written. */
function writeGroupWithout(
  tx: Transaction,
  teamId: string,
  group: StoredGroup,
  memberId: string,
  now: string,
): StoredGroup {
  return writeGroupMembers(
    tx,
    teamId,
    group,
    group.member_ids.filter((id) => id !== memberId),
    now,
  );
}
