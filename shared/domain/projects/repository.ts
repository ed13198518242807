import type { Principal } from '../../auth/principal.js';
import { requireProjectAccess } from '../../auth/authorize.js';
import { ProblemError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import type { Page } from '../../store/pages.js';
import { projectStore } from '../../store/projects.js';
import type { Item } from '../../store/requests.js';
import { parseStoredLiveSubscriptions, parseStoredProject, parseStoredProjectPlans } from './record.js';
import { parseStoredTeam } from '../teams/record.js';
import { DEFAULT_TIME_ZONE, type Project, type ProjectStatus } from './schema.js';

/**
 * Reads of projects (DESIGN D6, D14, D16, D22): one item per project in its team's partition (`PROJECT#<uuid>`): the
 * public fields, bot, provider connection and resources, plus `revision` (optimistic concurrency), `plan_ids` (string
 * set, kept by the plans use cases) and `live_subscription_count` (absent = 0, kept with `ADD`; delete and provider
 * disconnection require 0).
 */

const notFound = (projectId: string) => new ProblemError('NOT_FOUND', `No project ${projectId}.`);

/**
 * The public project of a stored item (items written before bots, providers and resources existed read as having none;
 * before time zones, as UTC).
 */
export function toProject(item: Item): Project {
  const project = parseStoredProject(item);
  return {
    id: project.id,
    name: project.name,
    platform_type: project.platform_type,
    description: project.description ?? null,
    status: project.status,
    bot: project.bot ?? null,
    payment_provider: project.payment_provider ? { livemode: null, ...project.payment_provider } : null,
    resources: project.resources ?? [],
    time_zone: project.time_zone ?? DEFAULT_TIME_ZONE,
    archived_at: project.archived_at ?? null,
    created_at: project.created_at,
    updated_at: project.updated_at,
  };
}

/**
 * Live subscriptions counted on a project or plan item (absent = 0: never counted). Throws StoredRecordError when the
 * counter is not a whole number.
 */
export function liveSubscriptionsOf(item: Item): number {
  return parseStoredLiveSubscriptions(item).live_subscription_count ?? 0;
}

/**
 * The plan ids recorded on a project item (absent: none). Throws StoredRecordError when `plan_ids` is not a set or list
 * of strings.
 */
export function planIdsOf(item: Item): string[] {
  return [...(parseStoredProjectPlans(item).plan_ids ?? [])];
}

/**
 * The stored project item of the principal's team (strongly consistent), after the project-scope check:
 * read its fields through {@link toProject}, {@link planIdsOf}, {@link liveSubscriptionsOf} and
 * `revisionOf`. Errors: NOT_FOUND when absent, foreign, or outside the token's project scope.
 */
export async function loadProject(store: Store, principal: Principal, projectId: string): Promise<Item> {
  requireProjectAccess(principal, projectId);
  const item = await projectStore.read(store, principal.teamId, projectId);
  if (!item) throw notFound(projectId);
  return item;
}

/**
 * The team of project `projectId` (the public pages know only the project id, DESIGN D26), or null when no
 * project has that id. One strongly consistent GetItem.
 */
export async function teamOfProject(store: Store, projectId: string): Promise<string | null> {
  return projectStore.teamOf(store, projectId);
}

/**
 * Project `projectId` of `teamId` as the public pages find it (DESIGN D26): null when the project is absent or its team
 * absent or deleted. The team and the project are read together (one BatchGetItem).
 */
export async function findProjectOfLiveTeam(store: Store, teamId: string, projectId: string): Promise<Project | null> {
  const { team, project } = await projectStore.readWithTeam(store, teamId, projectId);
  if (!team || parseStoredTeam(team).deleted_at || !project) return null;
  return toProject(project);
}

/** Reads one project of the principal's team; NOT_FOUND when absent, foreign, or outside a project scope. */
export async function getProject(store: Store, principal: Principal, projectId: string): Promise<Project> {
  return toProject(await loadProject(store, principal, projectId));
}

/** True when every id names a project of `teamId` (one BatchGetItem); else throws NOT_FOUND naming the missing ones. */
export async function requireProjectsOfTeam(
  store: Store,
  teamId: string,
  projectIds: readonly string[],
): Promise<void> {
  if (projectIds.length === 0) return;
  const found = await projectStore.existingIds(store, teamId, projectIds);
  const missing = projectIds.filter((projectId) => !found.has(projectId));
  if (missing.length) throw new ProblemError('NOT_FOUND', `No project ${missing.join(', ')}.`);
}

/**
 * Lists the team's projects in id order, paged (DESIGN D12), optionally only those with `status`. A
 * project-scoped token pages over its own projects only (read by key, one BatchGetItem per page), so neither a page,
 * its length nor a cursor says anything about the team's other projects.
 * Errors: VALIDATION_FAILED for a cursor of another list.
 */
export async function listProjects(
  store: Store,
  principal: Principal,
  query: { limit: number; cursor?: string; status?: ProjectStatus },
): Promise<Page<Project>> {
  if (principal.projectIds === null) return projectStore.listPage(store, principal.teamId, query, toProject);
  const page = await projectStore.listByIds(store, principal.teamId, principal.projectIds, query, toProject);
  return { ...page, data: page.data.filter((project) => !query.status || project.status === query.status) };
}
