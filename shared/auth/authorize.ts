import type { Ability } from '../catalogues/abilities.js';
import { ProblemError } from '../errors.js';
import type { Principal } from './tokens.js';

/**
 * Throws TOKEN_MISSING_ABILITY (403) unless the principal holds `ability`
 * (interface "Tool-server authorization" 2, DESIGN D5).
 */
export function requireAbility(principal: Principal, ability: Ability): void {
  if (!principal.abilities.has(ability)) {
    throw new ProblemError('TOKEN_MISSING_ABILITY', `This token lacks the ability \`${ability}\`.`);
  }
}

/**
 * True when a project-scoped token may touch `projectId` (interface "Bearer tokens" 4:
 * `scope:project:<uuid>` narrows access). Unscoped tokens may touch every project of their team.
 */
export function canAccessProject(principal: Principal, projectId: string): boolean {
  return principal.projectIds === null || principal.projectIds.includes(projectId);
}

/**
 * Throws NOT_FOUND (never 403, so nothing leaks about existence) when a project-scoped token
 * reaches for a project outside its scope.
 */
export function requireProjectAccess(principal: Principal, projectId: string): void {
  if (!canAccessProject(principal, projectId)) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
}

/**
 * Throws NOT_FOUND when a project-scoped token calls an operation over team-wide data
 * (tokens, webhook endpoints, activity) that a project scope does not cover.
 */
export function requireTeamWideAccess(principal: Principal, what: string): void {
  if (principal.projectIds !== null) {
    throw new ProblemError('TOKEN_MISSING_ABILITY', `A project-scoped token cannot manage team-wide ${what}.`);
  }
}
