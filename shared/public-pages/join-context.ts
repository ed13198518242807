import type { Principal } from '../auth/principal.js';
import { listActivePlansOfProject } from '../domain/plans/repository.js';
import type { Plan } from '../domain/plans/schema.js';
import { findProjectOfLiveTeam, teamOfProject } from '../domain/projects/repository.js';
import type { Project } from '../domain/projects/schema.js';
import { joinPrincipal } from '../hooks/principal.js';
import type { Store } from '../store/store.js';
import type { PublicRequest } from './http.js';

/**
 * What every join route reads (DESIGN D26): the project of a live team and, for a page, its active plans. A view costs
 * the per-IP counter, one BatchGetItem (team and project) and one Query (plans); the project's team is read once per
 * container, as a project never changes team.
 */

/** A project whose join page exists: its team, the principal joins act as, and the project. */
export interface JoinContext {
  teamId: string;
  principal: Principal;
  project: Project;
}

/** The most project-to-team entries kept per container (the oldest is dropped past it). */
const KNOWN_TEAMS_LIMIT = 10_000;
/** Project id → team id of the projects this container has served. */
const knownTeams = new Map<string, string>();

/** The team of `projectId` (kept once read: it never changes), or null when no project has that id. */
async function teamOf(store: Store, projectId: string): Promise<string | null> {
  const known = knownTeams.get(projectId);
  if (known) return known;
  const teamId = await teamOfProject(store, projectId);
  if (!teamId) return null;
  if (knownTeams.size >= KNOWN_TEAMS_LIMIT) knownTeams.delete(knownTeams.keys().next().value!);
  knownTeams.set(projectId, teamId);
  return teamId;
}

/**
 * The join context of `projectId`, or null when there is no such (active) project of a live team: the caller answers
 * the one 404.
 */
export async function joinContext(request: PublicRequest, projectId: string): Promise<JoinContext | null> {
  const { store } = request.runtime;
  const teamId = await teamOf(store, projectId);
  if (!teamId) return null;
  const project = await findProjectOfLiveTeam(store, teamId, projectId);
  return project?.status === 'active' ? { teamId, principal: joinPrincipal(teamId, projectId), project } : null;
}

/** The project's active plans (at most 100). */
export async function activePlans(context: JoinContext, request: PublicRequest): Promise<Plan[]> {
  return listActivePlansOfProject(request.runtime.store, context.teamId, context.project.id);
}
