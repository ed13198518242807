import type { Principal } from '../../auth/principal.js';
import { requireProjectAccess } from '../../auth/authorize.js';
import { ProblemError } from '../../errors.js';
import { keys, sortKeyPrefix } from '../../store/keys.js';
import type { Store } from '../../store/store.js';
import { decodeCursor, encodeCursor, queryPage, type Page } from '../../store/pages.js';
import type { Item } from '../../store/requests.js';
import {
  parseStoredLiveSubscriptions,
  parseStoredProject,
  parseStoredProjectId,
  parseStoredProjectPlans,
  parseStoredProjectTeam,
} from './record.js';
import type { Project, ProjectStatus } from './schema.js';

/**
 * Reads of projects (DESIGN D6, D14, D16, D22): one item per project in its team's partition (`PROJECT#<uuid>`): the public fields,
 * bot, provider connection and resources, plus `revision` (optimistic concurrency), `plan_ids` (string set, kept by the plans use
 * cases) and `live_subscription_count` (absent = 0, kept with `ADD`; delete and provider disconnection require 0).
 */

const notFound = (projectId: string) => new ProblemError('NOT_FOUND', `No project ${projectId}.`);

/** The public project of a stored item (items written before bots, providers and resources existed read as having none). */
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
    archived_at: project.archived_at ?? null,
    created_at: project.created_at,
    updated_at: project.updated_at,
  };
}

/** Live subscriptions counted on a project or plan item (absent = 0: never counted). Throws StoredRecordError when the counter is not a whole number. */
export function liveSubscriptionsOf(item: Item): number {
  return parseStoredLiveSubscriptions(item).live_subscription_count ?? 0;
}

/** The plan ids recorded on a project item (absent: none). Throws StoredRecordError when `plan_ids` is not a set or list of strings. */
export function planIdsOf(item: Item): string[] {
  return [...(parseStoredProjectPlans(item).plan_ids ?? [])];
}

/** The condition "no live subscriptions" on a project or plan item. */
export const NO_LIVE_SUBSCRIPTIONS = {
  expression: '(attribute_not_exists(live_subscription_count) OR live_subscription_count <= :zero_live)',
  values: { ':zero_live': 0 },
};

/**
 * The stored project item of the principal's team (strongly consistent), after the project-scope check:
 * read its fields through {@link toProject}, {@link planIdsOf}, {@link liveSubscriptionsOf} and
 * `revisionOf`. Errors: NOT_FOUND when absent, foreign, or outside the token's project scope.
 */
export async function loadProject(store: Store, principal: Principal, projectId: string): Promise<Item> {
  requireProjectAccess(principal, projectId);
  const item = await store.get(keys.project(principal.teamId, projectId));
  if (!item) throw notFound(projectId);
  return item;
}

/**
 * The team of project `projectId` (the public pages know only the project id, DESIGN D26), or null when no
 * project has that id. One strongly consistent GetItem.
 */
export async function teamOfProject(store: Store, projectId: string): Promise<string | null> {
  const item = await store.get(keys.projectTeam(projectId));
  return item ? parseStoredProjectTeam(item).team_id : null;
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
  const found = new Set(
    (await store.batchGet(projectIds.map((projectId) => keys.project(teamId, projectId)))).map(
      (item) => parseStoredProjectId(item).id,
    ),
  );
  const missing = projectIds.filter((projectId) => !found.has(projectId));
  if (missing.length) throw new ProblemError('NOT_FOUND', `No project ${missing.join(', ')}.`);
}

/**
 * Lists the team's projects in id order, paged (DESIGN D12), optionally only those with `status`. A
 * project-scoped token pages over its own projects only ({@link listScopedProjects}), so neither a page,
 * its length nor a cursor says anything about the team's other projects.
 * Errors: VALIDATION_FAILED for a cursor of another list.
 */
export async function listProjects(
  store: Store,
  principal: Principal,
  query: { limit: number; cursor?: string; status?: ProjectStatus },
): Promise<Page<Project>> {
  const page =
    principal.projectIds !== null
      ? await listScopedProjects(store, principal.teamId, principal.projectIds, query)
      : await queryPage(store, {
          partition: keys.teamPartition(principal.teamId),
          sortKeyPrefix: sortKeyPrefix.project,
          limit: query.limit,
          cursor: query.cursor,
          map: toProject,
          filter: query.status
            ? { expression: '#status = :status', names: { '#status': 'status' }, values: { ':status': query.status } }
            : undefined,
        });
  return page;
}

/**
 * The projects named by a token's `scope:project:<uuid>` entries, in the same key order and cursor
 * format as the team-wide list, read by key (one BatchGetItem per page): the cursor only ever holds one
 * of the token's own project ids, never another project's.
 */
async function listScopedProjects(
  store: Store,
  teamId: string,
  projectIds: readonly string[],
  query: { limit: number; cursor?: string; status?: ProjectStatus },
): Promise<Page<Project>> {
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
