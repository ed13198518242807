import { timingSafeEqual } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { newTokenSecret, sha256 } from '../../auth/principal.js';
import { requireAbility } from '../../auth/authorize.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUlid, newUuid } from '../../ids.js';
import { entity, keys, sortKeyPrefix } from '../../store/keys.js';
import type { Store } from '../../store/store.js';
import { queryPage, type Page } from '../../store/pages.js';
import type { Item } from '../../store/requests.js';
import { countUsage, withinTierLimit } from '../billing/repository.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { loadGroups, writeGroupMembers, type StoredGroup } from '../groups/records.js';
import { MAX_GROUP_MEMBERS } from '../groups/schema.js';
import { countRoleAssignments, loadRoles } from '../roles/repository.js';
import { difference, distinct, requireGrantable } from '../roles/policy.js';
import { BUILT_IN_ROLE_IDS } from '../roles/built-in.js';
import { findTeam, getTeam } from '../teams/repository.js';
import { findMember, memberChangedMeanwhile, publicMember, toStoredMember, type StoredTeamMember } from './records.js';
import {
  INVITATION_LIFETIME_MS,
  type AcceptedTeamInvitation,
  type InviteTeamMemberRequest,
  type ListTeamMembersQuery,
  type TeamMember,
  type TeamMemberWithInvitation,
  type UpdateTeamMemberRequest,
} from './schema.js';

/**
 * Persistence and use cases of team members and their invitations (DESIGN D14, D19). A member is an
 * item of the team's partition (`TEAM#<team>`, `TEAM_MEMBER#<uuid>`) with an e-mail claim that keeps
 * addresses unique among invited and active members. An invitation is an item of its own partition
 * (`INVITATION#<ULID>`), holding only the SHA-256 of its secret; its token `inv_<ULID>_<secret>` is
 * returned once, in the invitation's response, and never stored, logged or put in an event.
 * Role and group changes write the members' lists, the groups' member lists and the roles' assignment
 * counters in one transaction with their events.
 */

/** `inv_<ULID>_<base62 secret of 32 random bytes>`. */
const INVITATION_TOKEN_PATTERN = /^inv_([0-9A-HJKMNP-TV-Z]{26})_([0-9A-Za-z]{40,64})$/;
/** How long an invitation item outlives its expiry before DynamoDB's TTL may drop it, in seconds (housekeeping only). */
const INVITATION_HOUSEKEEPING_SECONDS = 24 * 60 * 60;

/** The one answer to an invitation token that cannot be accepted, whatever the reason (unknown, expired, used). */
const invalidInvitation = () => new ProblemError('NOT_FOUND', 'This invitation cannot be accepted: it is unknown, expired or already used. Ask for a new invitation.');
const notFound = (memberId: string) => new ProblemError('NOT_FOUND', `No team member ${memberId}.`);
const removedConflict = (member: StoredTeamMember) =>
  new ProblemError('CONFLICT', `Team member ${member.id} was removed at ${member.removed_at}; a removed member cannot change. Invite the person again instead.`);

/** The lower-case hex SHA-256 of an e-mail address as compared for uniqueness (trimmed, lower case). */
function emailSha256(email: string): string {
  return sha256(email.trim().toLowerCase()).toString('hex');
}

function memberItem(teamId: string, member: StoredTeamMember): Item {
  return { ...keys.teamMember(teamId, member.id), entity: entity.teamMember, team_id: teamId, ...member };
}

/** Reads one member of the principal's team (`GET /v1/team-members/{id}`). Errors: NOT_FOUND (absent or another team's). */
export async function getTeamMember(store: Store, principal: Principal, memberId: string): Promise<TeamMember> {
  const member = await findMember(store, principal.teamId, memberId);
  if (!member) throw notFound(memberId);
  return publicMember(member);
}

/**
 * Lists the team's members in id order, paged (DESIGN D12), optionally only those holding a role
 * directly, in a group, or with a status (applied by DynamoDB, so a page may be short while
 * `next_cursor` is set). Errors: VALIDATION_FAILED for a cursor of another list.
 */
export async function listTeamMembers(store: Store, principal: Principal, query: ListTeamMembersQuery): Promise<Page<TeamMember>> {
  const conditions: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (query.role_id) {
    conditions.push('contains(role_ids, :role)');
    values[':role'] = query.role_id;
  }
  if (query.group_id) {
    conditions.push('contains(group_ids, :group)');
    values[':group'] = query.group_id;
  }
  if (query.status) {
    conditions.push('#status = :status');
    names['#status'] = 'status';
    values[':status'] = query.status;
  }
  return queryPage(store, {
    partition: keys.teamPartition(principal.teamId),
    sortKeyPrefix: sortKeyPrefix.teamMember,
    limit: query.limit,
    cursor: query.cursor,
    map: (item) => publicMember(toStoredMember(item)),
    filter: conditions.length ? { expression: conditions.join(' AND '), names: Object.keys(names).length ? names : undefined, values } : undefined,
  });
}

/**
 * What giving roles and groups to a member needs (DESIGN D19): `role:assign` for roles and
 * `group:manage-members` for groups (and `role:assign` too when a group gives roles, as when a group
 * gains members); the roles, and the roles of the groups, must exist (NOT_FOUND) and grant only
 * abilities the caller holds (TOKEN_MISSING_ABILITY); each group must have room for one more member
 * (CONFLICT). Returns the groups read.
 */
async function checkGrants(store: Store, principal: Principal, roleIds: readonly string[], groupIds: readonly string[], memberId: string | null): Promise<StoredGroup[]> {
  if (roleIds.length) requireAbility(principal, 'role:assign');
  if (groupIds.length) requireAbility(principal, 'group:manage-members');
  const groups = await loadGroups(store, principal.teamId, groupIds);
  if (groups.some((group) => group.role_ids.length > 0)) requireAbility(principal, 'role:assign');
  for (const group of groups) {
    if (group.member_ids.length >= MAX_GROUP_MEMBERS && !(memberId && group.member_ids.includes(memberId))) {
      throw new ProblemError('CONFLICT', `Group ${group.name} already has ${MAX_GROUP_MEMBERS} members, the most a group can have.`);
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
function emitGroupsUpdated(tx: Transaction, groups: readonly StoredGroup[]): void {
  for (const { version: _version, ...group } of groups) tx.emit({ type: 'group.updated', projectId: null, data: { group } });
}

/**
 * Invites a person to the principal's team (`POST /v1/team-members/invitations`, DESIGN D19): creates
 * the member (`invited`) with their roles and groups, the e-mail claim and the invitation (only the
 * SHA-256 of its secret, valid {@link INVITATION_LIFETIME_MS}), and emits `team.member_invited` (and
 * `group.updated` for each group joined) in one transaction. Returns the member with the invitation
 * token and link, shown only here. The member counts against the tier's team-member limit until removed
 * (D20). Errors: TOKEN_MISSING_ABILITY, NOT_FOUND (a role or group), TIER_LIMIT_REACHED, CONFLICT
 * (the e-mail address belongs to an invited or active member; a group full; a concurrent change).
 */
export async function inviteTeamMember(runtime: UnitOfWorkRuntime, principal: Principal, input: InviteTeamMemberRequest): Promise<TeamMemberWithInvitation> {
  const teamId = principal.teamId;
  const roleIds = distinct(input.role_ids);
  const groupIds = distinct(input.group_ids ?? []);
  const groups = await checkGrants(runtime.store, principal, roleIds, groupIds, null);
  const team = await getTeam(runtime.store, teamId);
  const nowMs = runtime.clock.nowMs();
  const now = isoTime(nowMs);
  const expiresAtMs = nowMs + INVITATION_LIFETIME_MS;
  const invitationId = newUlid(nowMs);
  const secret = newTokenSecret();
  const member: StoredTeamMember = {
    id: newUuid(),
    email: input.email,
    name: input.name,
    status: 'invited',
    role_ids: roleIds,
    group_ids: groupIds,
    invitation_expires_at: isoTime(expiresAtMs),
    joined_at: null,
    removed_at: null,
    created_at: now,
    updated_at: now,
    version: 1,
    invitation_id: invitationId,
    email_sha256: emailSha256(input.email),
  };
  const token = `inv_${invitationId}_${secret}`;
  // D20: invited and active members count against the tier's limit, in the same transaction.
  return withinTierLimit(runtime, teamId, 'team_members', () =>
    unitOfWork(runtime, teamId, (tx) => {
      countUsage(tx, teamId, 'team_members', 1);
      tx.put(memberItem(teamId, member), { condition: 'attribute_not_exists(pk)' });
      tx.put(
        { ...keys.teamMemberEmail(teamId, member.email_sha256), entity: entity.teamMemberEmail, member_id: member.id },
        {
          condition: 'attribute_not_exists(pk)',
          onConditionFailed: () => new ProblemError('CONFLICT', 'An invited or active member of the team has this e-mail address already; remove them first to invite the address again.'),
        },
      );
      tx.put(
        {
          ...keys.teamInvitation(invitationId),
          entity: entity.teamInvitation,
          id: invitationId,
          team_id: teamId,
          member_id: member.id,
          secret_sha256: sha256(secret).toString('hex'),
          expires_at_ms: expiresAtMs,
          expires_at: Math.floor(expiresAtMs / 1000) + INVITATION_HOUSEKEEPING_SECONDS,
        },
        { condition: 'attribute_not_exists(pk)' },
      );
      countRoleAssignments(tx, teamId, roleIds, 1);
      const changedGroups = groups.map((group) => writeGroupMembers(tx, teamId, group, [...group.member_ids, member.id], now));
      const publicView = publicMember(member);
      tx.emit({ type: 'team.member_invited', projectId: null, data: { team, team_member: publicView } });
      emitGroupsUpdated(tx, changedGroups);
      // The whole answer (token included) is what the request's idempotency record stores, sealed (D3).
      return { ...publicView, invitation_token: token, invitation_link: `/dashboard/invitations/accept#token=${token}` };
    }),
  );
}

/**
 * Accepts an invitation (`POST /v1/team-invitations/accept`, a public route: the token is the only
 * credential, DESIGN D19). The invitation is found by the id in the token and its secret's SHA-256
 * compared in constant time; an unknown, forged, expired or already used token, a removed member and a
 * deleted team all get the same NOT_FOUND problem, revealing none of which. On success the member
 * becomes `active`, the invitation is consumed (deleted) and `team.member_joined` is emitted, in one
 * transaction, so a token can be used once even under a race.
 */
export async function acceptTeamInvitation(runtime: UnitOfWorkRuntime, token: string): Promise<AcceptedTeamInvitation> {
  const parts = INVITATION_TOKEN_PATTERN.exec(token);
  const invitation = parts ? await runtime.store.get(keys.teamInvitation(parts[1])) : undefined;
  const presented = sha256(parts?.[2] ?? token);
  const expected = invitation ? Buffer.from(String(invitation.secret_sha256), 'hex') : Buffer.alloc(32);
  const matches = expected.length === presented.length && timingSafeEqual(presented, expected);
  const nowMs = runtime.clock.nowMs();
  if (!parts || !invitation || !matches || Number(invitation.expires_at_ms) <= nowMs) throw invalidInvitation();
  const teamId = invitation.team_id as string;
  const invitationId = invitation.id as string;
  const [member, team] = await Promise.all([findMember(runtime.store, teamId, invitation.member_id as string), findTeam(runtime.store, teamId)]);
  if (!member || member.status !== 'invited' || member.invitation_id !== invitationId || !team || team.deleted_at) throw invalidInvitation();
  const now = isoTime(nowMs);
  const joined: StoredTeamMember = { ...member, status: 'active', joined_at: now, invitation_expires_at: null, invitation_id: null, updated_at: now, version: member.version + 1 };
  return unitOfWork(runtime, teamId, (tx) => {
    tx.delete(keys.teamInvitation(invitationId), { condition: 'attribute_exists(pk)', onConditionFailed: invalidInvitation });
    tx.update(keys.teamMember(teamId, member.id), {
      expression: 'SET #status = :active, joined_at = :now, invitation_expires_at = :null, invitation_id = :null, updated_at = :now, version = :next',
      condition: 'version = :version AND #status = :invited',
      names: { '#status': 'status' },
      values: { ':active': 'active', ':invited': 'invited', ':now': now, ':null': null, ':next': joined.version, ':version': member.version },
      onConditionFailed: invalidInvitation,
    });
    tx.check(keys.team(teamId), { condition: 'attribute_not_exists(deleted_at)', onConditionFailed: invalidInvitation });
    const teamMember = publicMember(joined);
    tx.emit({ type: 'team.member_joined', projectId: null, data: { team, team_member: teamMember } });
    return { team, team_member: teamMember };
  });
}

/**
 * Changes a member (`POST /v1/team-members/{id}`): name, and the complete lists of their roles and
 * groups (DESIGN D19). A role or group change emits `team.member_role_changed` (with the previous
 * lists) and `group.updated` for each group joined or left, in the same transaction as the member, the
 * groups and the roles' assignment counters; a request that changes nothing writes nothing. Added roles
 * and groups follow {@link checkGrants}. Errors: NOT_FOUND, TOKEN_MISSING_ABILITY, CONFLICT (the member
 * was removed; a group full; a concurrent change).
 */
export async function updateTeamMember(runtime: UnitOfWorkRuntime, principal: Principal, memberId: string, input: UpdateTeamMemberRequest): Promise<TeamMember> {
  const teamId = principal.teamId;
  const current = await findMember(runtime.store, teamId, memberId);
  if (!current) throw notFound(memberId);
  if (current.status === 'removed') throw removedConflict(current);
  if (input.role_ids !== undefined) requireAbility(principal, 'role:assign');
  if (input.group_ids !== undefined) requireAbility(principal, 'group:manage-members');
  const roleIds = input.role_ids ? distinct(input.role_ids) : current.role_ids;
  const groupIds = input.group_ids ? distinct(input.group_ids) : current.group_ids;
  const roles = difference(current.role_ids, roleIds);
  const groups = difference(current.group_ids, groupIds);
  const joining = await checkGrants(runtime.store, principal, roles.added, groups.added, memberId);
  const leaving = (await loadGroups(runtime.store, teamId, groups.removed, { skipMissing: true })).filter((group) => group.member_ids.includes(memberId));
  const name = input.name ?? current.name;
  const rolesChanged = roles.added.length > 0 || roles.removed.length > 0 || groups.added.length > 0 || groups.removed.length > 0;
  if (!rolesChanged && name === current.name) return publicMember(current);
  const team = rolesChanged ? await getTeam(runtime.store, teamId) : null;
  const now = isoTime(runtime.clock.nowMs());
  const updated: StoredTeamMember = { ...current, name, role_ids: roleIds, group_ids: groupIds, updated_at: now, version: current.version + 1 };
  return unitOfWork(runtime, teamId, (tx) => {
    tx.update(keys.teamMember(teamId, memberId), {
      expression: 'SET #name = :name, role_ids = :role_ids, group_ids = :group_ids, updated_at = :now, version = :next',
      condition: 'version = :version AND #status <> :removed',
      names: { '#name': 'name', '#status': 'status' },
      values: { ':name': name, ':role_ids': roleIds, ':group_ids': groupIds, ':now': now, ':next': updated.version, ':version': current.version, ':removed': 'removed' },
      onConditionFailed: () => memberChangedMeanwhile(memberId),
    });
    countRoleAssignments(tx, teamId, roles.added, 1);
    countRoleAssignments(tx, teamId, roles.removed, -1);
    const changedGroups = [
      ...joining.map((group) => writeGroupMembers(tx, teamId, group, [...group.member_ids.filter((id) => id !== memberId), memberId], now)),
      ...leaving.map((group) =>
        writeGroupMembers(
          tx,
          teamId,
          group,
          group.member_ids.filter((id) => id !== memberId),
          now,
        ),
      ),
    ];
    const teamMember = publicMember(updated);
    if (team) {
      tx.emit({
        type: 'team.member_role_changed',
        projectId: null,
        data: { team, team_member: teamMember, previous_role_ids: current.role_ids, previous_group_ids: current.group_ids },
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
export async function removeTeamMember(runtime: UnitOfWorkRuntime, principal: Principal, memberId: string): Promise<TeamMember> {
  const teamId = principal.teamId;
  const current = await findMember(runtime.store, teamId, memberId);
  if (!current) throw notFound(memberId);
  if (current.status === 'removed') throw new ProblemError('CONFLICT', `Team member ${memberId} was already removed at ${current.removed_at}.`);
  const groups = (await loadGroups(runtime.store, teamId, current.group_ids, { skipMissing: true })).filter((group) => group.member_ids.includes(memberId));
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
    tx.update(keys.teamMember(teamId, memberId), {
      expression: 'SET #status = :removed, role_ids = :empty, group_ids = :empty, invitation_expires_at = :null, invitation_id = :null, removed_at = :now, updated_at = :now, version = :next',
      condition: 'version = :version AND #status <> :removed',
      names: { '#status': 'status' },
      values: { ':removed': 'removed', ':empty': [], ':null': null, ':now': now, ':next': removed.version, ':version': current.version },
      onConditionFailed: () => memberChangedMeanwhile(memberId),
    });
    tx.delete(keys.teamMemberEmail(teamId, current.email_sha256));
    countUsage(tx, teamId, 'team_members', -1);
    if (current.invitation_id) tx.delete(keys.teamInvitation(current.invitation_id));
    countRoleAssignments(tx, teamId, current.role_ids, -1);
    const changedGroups = groups.map((group) =>
      writeGroupMembers(
        tx,
        teamId,
        group,
        group.member_ids.filter((id) => id !== memberId),
        now,
      ),
    );
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
export async function ensureTeamOwner(runtime: UnitOfWorkRuntime, teamId: string, input: { email: string; name: string }): Promise<TeamMember> {
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
    tx.put(memberItem(teamId, member), { condition: 'attribute_not_exists(pk)' });
    tx.put(
      { ...keys.teamMemberEmail(teamId, member.email_sha256), entity: entity.teamMemberEmail, member_id: member.id },
      { condition: 'attribute_not_exists(pk)', onConditionFailed: () => new ProblemError('CONFLICT', 'A member with this e-mail address was added meanwhile; retry.') },
    );
    const teamMember = publicMember(member);
    tx.emit({ type: 'team.member_joined', projectId: null, data: { team, team_member: teamMember } });
    return teamMember;
  });
}

/** The invited or active member of the team with this e-mail address (any case), or null. Two GetItems. */
export async function findMemberByEmail(store: Store, teamId: string, email: string): Promise<TeamMember | null> {
  const claim = await store.get(keys.teamMemberEmail(teamId, emailSha256(email)));
  if (!claim) return null;
  const member = await findMember(store, teamId, claim.member_id as string);
  return member && member.status !== 'removed' ? publicMember(member) : null;
}
