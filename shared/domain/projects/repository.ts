import type { Principal } from '../../auth/principal.js';
import { requireProjectAccess } from '../../auth/authorize.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { entity, keys, sortKeyPrefix } from '../../store/keys.js';
import { decodeCursor, encodeCursor, queryPage, type Item, type Page, type Store } from '../../store/store.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import type { Project, ProjectStatus } from './schema.js';

function toProject(item: Item): Project {
  return {
    id: item.id as string,
    name: item.name as string,
    platform_type: item.platform_type as Project['platform_type'],
    description: (item.description as string | null) ?? null,
    status: item.status as ProjectStatus,
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

/**
 * Creates a project in the principal's team and emits `project.created` in the same transaction
 * (DESIGN D6). A project-scoped token cannot create projects (its scope names existing projects only):
 * TOKEN_MISSING_ABILITY.
 */
export async function createProject(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  input: { name: string; platform_type: Project['platform_type']; description?: string },
): Promise<Project> {
  if (principal.projectIds !== null) throw new ProblemError('TOKEN_MISSING_ABILITY', 'A project-scoped token cannot create projects.');
  const now = isoTime(runtime.clock.nowMs());
  const project: Project = {
    id: newUuid(),
    name: input.name,
    platform_type: input.platform_type,
    description: input.description ?? null,
    status: 'active',
    created_at: now,
    updated_at: now,
  };
  return unitOfWork(runtime, principal.teamId, (tx) => {
    tx.put({ ...keys.project(principal.teamId, project.id), entity: entity.project, team_id: principal.teamId, ...project }, { condition: 'attribute_not_exists(pk)' });
    tx.emit({ type: 'project.created', projectId: project.id, data: { project } });
    return project;
  });
}

/** Reads one project of the principal's team; NOT_FOUND when absent, foreign, or outside a project scope. */
export async function getProject(store: Store, principal: Principal, projectId: string): Promise<Project> {
  requireProjectAccess(principal, projectId);
  const item = await store.get(keys.project(principal.teamId, projectId));
  if (!item) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return toProject(item);
}

/** True when every id names a project of `teamId` (one BatchGetItem); else throws NOT_FOUND naming the missing ones. */
export async function requireProjectsOfTeam(store: Store, teamId: string, projectIds: readonly string[]): Promise<void> {
  if (projectIds.length === 0) return;
  const found = new Set((await store.batchGet(projectIds.map((projectId) => keys.project(teamId, projectId)))).map((item) => item.id as string));
  const missing = projectIds.filter((projectId) => !found.has(projectId));
  if (missing.length) throw new ProblemError('NOT_FOUND', `No project ${missing.join(', ')}.`);
}

/**
 * Lists the team's projects in id order, paged (DESIGN D12), optionally only those with `status`. A
 * project-scoped token pages over its own projects only ({@link listScopedProjects}), so neither a page,
 * its length nor a cursor says anything about the team's other projects.
 * Errors: VALIDATION_FAILED for a cursor of another list.
 */
export async function listProjects(store: Store, principal: Principal, query: { limit: number; cursor?: string; status?: ProjectStatus }): Promise<Page<Project>> {
  const page = principal.projectIds !== null
    ? await listScopedProjects(store, principal.teamId, principal.projectIds, query)
    : await queryPage(store, {
        partition: keys.teamPartition(principal.teamId),
        sortKeyPrefix: sortKeyPrefix.project,
        limit: query.limit,
        cursor: query.cursor,
        map: toProject,
        filter: query.status ? { expression: '#status = :status', names: { '#status': 'status' }, values: { ':status': query.status } } : undefined,
      });
  return page;
}

/**
 * The projects named by a token's `scope:project:<uuid>` entries, in the same key order and cursor
 * format as the team-wide list, read by key (one BatchGetItem per page): the cursor only ever holds one
 * of the token's own project ids, never another project's.
 */
async function listScopedProjects(store: Store, teamId: string, projectIds: readonly string[], query: { limit: number; cursor?: string; status?: ProjectStatus }): Promise<Page<Project>> {
  const partition = keys.teamPartition(teamId);
  const start = decodeCursor(query.cursor, partition, { sortKeyPrefix: sortKeyPrefix.project });
  const after = typeof start?.sk === 'string' ? start.sk : '';
  const remaining = [...new Set(projectIds)]
    .map((projectId) => keys.project(teamId, projectId))
    .filter((key) => key.sk > after)
    .sort((a, b) => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0));
  const pageKeys = remaining.slice(0, query.limit);
  const items = (await store.batchGet(pageKeys)).sort((a, b) => (String(a.sk) < String(b.sk) ? -1 : 1));
  const last = pageKeys.at(-1);
  const data = items.map(toProject).filter((project) => !query.status || project.status === query.status);
  return { data, next_cursor: remaining.length > pageKeys.length && last ? encodeCursor(last) : null };
}
