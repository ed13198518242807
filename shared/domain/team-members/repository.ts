import type { Principal } from '../../auth/principal.js';
import { keys, sortKeyPrefix } from '../../store/keys.js';
import type { Store } from '../../store/store.js';
import { queryPage, type Page } from '../../store/pages.js';
import {
  emailSha256,
  findMember,
  memberNotFound,
  parseStoredMemberEmailClaim,
  publicMember,
  toStoredMember,
} from './records.js';
import type { ListTeamMembersQuery, TeamMember } from './schema.js';

/**
 * Reads of team members (DESIGN D14, D19), items of the team's partition (`TEAM#<team>`, `TEAM_MEMBER#<uuid>`)
 * with an e-mail claim keeping addresses unique among invited and active members: one member, the team's
 * members paged and filtered, and the member holding an address.
 */

/** Reads one member of the principal's team (`GET /v1/team-members/{id}`). Errors: NOT_FOUND (absent or another team's). */
export async function getTeamMember(store: Store, principal: Principal, memberId: string): Promise<TeamMember> {
  const member = await findMember(store, principal.teamId, memberId);
  if (!member) throw memberNotFound(memberId);
  return publicMember(member);
}

/**
 * Lists the team's members in id order, paged (DESIGN D12), optionally only those holding a role
 * directly, in a group, or with a status (applied by DynamoDB, so a page may be short while
 * `next_cursor` is set). Errors: VALIDATION_FAILED for a cursor of another list.
 */
export async function listTeamMembers(
  store: Store,
  principal: Principal,
  query: ListTeamMembersQuery,
): Promise<Page<TeamMember>> {
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
    filter: conditions.length
      ? { expression: conditions.join(' AND '), names: Object.keys(names).length ? names : undefined, values }
      : undefined,
  });
}

/** The invited or active member of the team with this e-mail address (any case), or null. Two GetItems. */
export async function findMemberByEmail(store: Store, teamId: string, email: string): Promise<TeamMember | null> {
  const claim = await store.get(keys.teamMemberEmail(teamId, emailSha256(email)));
  if (!claim) return null;
  const member = await findMember(store, teamId, parseStoredMemberEmailClaim(claim).member_id);
  return member && member.status !== 'removed' ? publicMember(member) : null;
}
