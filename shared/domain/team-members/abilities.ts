import type { Ability } from '../../catalogues/abilities.js';
import { ProblemError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import { loadGroups } from '../groups/records.js';
import { loadRoles } from '../roles/repository.js';
import { findMember, type StoredTeamMember } from './records.js';

/**
 * A member's abilities (DESIGN D19): the union of the abilities of their roles and of their groups'
 * roles. A role without a project scope grants its abilities team-wide; a role narrowed to projects
 * grants them in those projects only. The owner role holds every ability.
 */
export interface MemberAbilities {
  /** Abilities held everywhere (roles without a project scope). */
  teamWide: ReadonlySet<Ability>;
  /** Abilities held only in some projects, by project id (roles with a project scope). */
  byProject: ReadonlyMap<string, ReadonlySet<Ability>>;
}

/**
 * Computes a member's {@link MemberAbilities} from their roles and their groups' roles (one BatchGetItem
 * for the groups, one for the roles). Roles or groups deleted meanwhile are skipped.
 */
export async function memberAbilities(
  store: Store,
  teamId: string,
  member: Pick<StoredTeamMember, 'role_ids' | 'group_ids'>,
): Promise<MemberAbilities> {
  const groups = await loadGroups(store, teamId, member.group_ids, { skipMissing: true });
  const roles = await loadRoles(store, teamId, [...member.role_ids, ...groups.flatMap((group) => group.role_ids)], {
    skipMissing: true,
  });
  const teamWide = new Set<Ability>();
  const byProject = new Map<string, Set<Ability>>();
  for (const role of roles) {
    if (role.project_ids === null) {
      for (const ability of role.abilities) teamWide.add(ability);
      continue;
    }
    for (const projectId of role.project_ids) {
      const held = byProject.get(projectId) ?? new Set<Ability>();
      for (const ability of role.abilities) held.add(ability);
      byProject.set(projectId, held);
    }
  }
  return { teamWide, byProject };
}

/**
 * The abilities a member holds in EVERY project of `projectIds` (team-wide ones plus each project's);
 * with no projects (a team-wide token), only the team-wide ones.
 */
export function abilitiesInProjects(abilities: MemberAbilities, projectIds: readonly string[]): Set<Ability> {
  if (projectIds.length === 0) return new Set(abilities.teamWide);
  const [first, ...rest] = projectIds.map(
    (projectId) => new Set([...abilities.teamWide, ...(abilities.byProject.get(projectId) ?? [])]),
  );
  return new Set([...first].filter((ability) => rest.every((held) => held.has(ability))));
}

/**
 * Checks that a token minted on behalf of member `memberId` (DESIGN D2, D19) stays within that member's
 * abilities: each of `abilities` must be held by the member team-wide or, for a token narrowed to
 * `projectIds`, in every one of those projects. Returns the member.
 * Errors: NOT_FOUND (no such member in the team), CONFLICT (the member is invited or removed, not
 * active), TOKEN_MISSING_ABILITY naming what the member lacks.
 */
export async function requireMemberHolds(
  store: Store,
  teamId: string,
  memberId: string,
  abilities: readonly Ability[],
  projectIds: readonly string[],
): Promise<StoredTeamMember> {
  const member = await findMember(store, teamId, memberId);
  if (!member) throw new ProblemError('NOT_FOUND', `No team member ${memberId}.`);
  if (member.status !== 'active') {
    throw new ProblemError(
      'CONFLICT',
      `Team member ${memberId} is ${member.status}; tokens can be minted only on behalf of active members.`,
    );
  }
  const held = abilitiesInProjects(await memberAbilities(store, teamId, member), projectIds);
  const missing = [...new Set(abilities)].filter((ability) => !held.has(ability));
  if (missing.length) {
    const where = projectIds.length ? ` in project ${projectIds.join(', ')}` : ' team-wide';
    throw new ProblemError(
      'TOKEN_MISSING_ABILITY',
      `A token minted on behalf of team member ${memberId} holds at most the member’s abilities; the member lacks${where}: ${missing.join(', ')}.`,
    );
  }
  return member;
}
