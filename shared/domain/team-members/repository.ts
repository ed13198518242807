import type { Principal } from '../../auth/principal.js';
import type { Store } from '../../store/store.js';
import type { Page } from '../../store/pages.js';
import { teamMemberStore } from '../../store/team-members.js';
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

/**
 * Reads one member of the principal's team (`GET /v1/team-members/{id}`). Errors: NOT_FOUND (absent or another team's).
 */
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
  const filters = { roleId: query.role_id, groupId: query.group_id, status: query.status };
  return teamMemberStore.listPage(store, principal.teamId, { ...query, ...filters }, (item) =>
    publicMember(toStoredMember(item)),
  );
}

/** The invited or active member of the team with this e-mail address (any case), or null. Two GetItems. */
export async function findMemberByEmail(store: Store, teamId: string, email: string): Promise<TeamMember | null> {
  const claim = await teamMemberStore.readEmailClaim(store, teamId, emailSha256(email));
  if (!claim) return null;
  const member = await findMember(store, teamId, parseStoredMemberEmailClaim(claim).member_id);
  return member && member.status !== 'removed' ? publicMember(member) : null;
}
