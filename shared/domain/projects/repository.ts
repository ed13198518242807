import type { Principal } from '../../auth/principal.js';
import { requireProjectAccess } from '../../auth/authorize.js';
import { resourceKindsOf } from '../../catalogues/platform-types.js';
import type { WebhookEventName } from '../../catalogues/webhook-events.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { entity, keys, sortKeyPrefix } from '../../store/keys.js';
import type { Store } from '../../store/store.js';
import { decodeCursor, encodeCursor, queryPage, type Page } from '../../store/pages.js';
import type { Item } from '../../store/requests.js';
import { countUsage, withinTierLimit } from '../billing/repository.js';
import { retryOnLostRace, revisionCondition } from '../../store/optimistic.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { CREDENTIAL_KINDS, deleteCredential, deleteSubjectCredentials } from '../../credentials/repository.js';
import { parseStoredProject, parseStoredProjectId, parseStoredProjectTeam } from './record.js';
import {
  MAX_BOT_PERMISSIONS,
  MAX_RESOURCES_PER_PROJECT,
  type LinkResourceRequest,
  type Project,
  type ProjectBot,
  type ProjectResource,
  type ProjectStatus,
  type UpdateProjectRequest,
} from './schema.js';

/**
 * Persistence and use cases of projects (DESIGN D6, D14, D16, D22). A project is one item in its team's
 * partition (`TEAM#<team>`, `PROJECT#<uuid>`) holding the public fields, its bot, its payment-provider
 * connection and its linked resources (at most {@link MAX_RESOURCES_PER_PROJECT}), plus:
 *
 * - `revision` (number): every change of the public fields is a conditional update on the revision it
 *   read (optimistic concurrency), so the event it emits in the same transaction carries exactly the
 *   state it wrote;
 * - `plan_ids` (string set, absent when empty): the project's plans, maintained atomically by the plans
 *   use cases (`ADD`/`DELETE`), so deleting the project deletes exactly its plans;
 * - `live_subscription_count` (number, absent = 0): live subscriptions of the project, maintained by the
 *   subscriptions use cases (`ADD`); delete and provider disconnection are conditional on it being 0.
 */

/** The stored project item: the public fields plus the bookkeeping described above. */
export type StoredProject = Item & {
  revision?: number;
  plan_ids?: Set<string>;
  live_subscription_count?: number;
};

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

/** Live subscriptions counted on a project or plan item (absent = 0). */
export function liveSubscriptionsOf(item: Item): number {
  return Number(item.live_subscription_count ?? 0);
}

/** The plan ids recorded on a project item. */
export function planIdsOf(item: Item): string[] {
  const value = item.plan_ids;
  if (value instanceof Set) return [...(value as Set<string>)];
  return Array.isArray(value) ? (value as string[]) : [];
}

/**
 * Creates a project in the principal's team and emits `project.created` in the same transaction
 * (DESIGN D6), counting it against the tier's project limit (D20). A project-scoped token cannot create
 * projects (its scope names existing projects only): TOKEN_MISSING_ABILITY. Beyond the tier's limit:
 * TIER_LIMIT_REACHED (with `billing.usage_limit_reached` once per period).
 */
export async function createProject(runtime: UnitOfWorkRuntime, principal: Principal, input: { name: string; platform_type: Project['platform_type']; description?: string }): Promise<Project> {
  if (principal.projectIds !== null) throw new ProblemError('TOKEN_MISSING_ABILITY', 'A project-scoped token cannot create projects.');
  const now = isoTime(runtime.clock.nowMs());
  const project: Project = {
    id: newUuid(),
    name: input.name,
    platform_type: input.platform_type,
    description: input.description ?? null,
    status: 'active',
    bot: null,
    payment_provider: null,
    resources: [],
    archived_at: null,
    created_at: now,
    updated_at: now,
  };
  // D20: the team's project counter rises in the same transaction, within the tier's limit.
  return withinTierLimit(runtime, principal.teamId, 'projects', () =>
    unitOfWork(runtime, principal.teamId, (tx) => {
      countUsage(tx, principal.teamId, 'projects', 1);
      tx.put({ ...keys.project(principal.teamId, project.id), entity: entity.project, team_id: principal.teamId, ...project, revision: 1 }, { condition: 'attribute_not_exists(pk)' });
      tx.put({ ...keys.projectTeam(project.id), entity: entity.projectTeam, team_id: principal.teamId, project_id: project.id }, { condition: 'attribute_not_exists(pk)' });
      tx.emit({ type: 'project.created', projectId: project.id, data: { project } });
      return project;
    }),
  );
}

/**
 * The stored project item of the principal's team (strongly consistent), after the project-scope check.
 * Errors: NOT_FOUND when absent, foreign, or outside the token's project scope.
 */
export async function loadProject(store: Store, principal: Principal, projectId: string): Promise<StoredProject> {
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
export async function requireProjectsOfTeam(store: Store, teamId: string, projectIds: readonly string[]): Promise<void> {
  if (projectIds.length === 0) return;
  const found = new Set((await store.batchGet(projectIds.map((projectId) => keys.project(teamId, projectId)))).map((item) => parseStoredProjectId(item).id));
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
  const page =
    principal.projectIds !== null
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

// ---------------------------------------------------------------------------------------------------
// Changes (optimistic, one transaction each, events included)
// ---------------------------------------------------------------------------------------------------

/** An event a change emits; `data` is built from the project as written. */
export interface ChangeEvent {
  type: WebhookEventName;
  data: (next: Project) => Record<string, unknown>;
}

/** What a change decided from the project it read: the fields to set (none: no write), its events, its answer. */
interface Change<T> {
  set?: Partial<Omit<Project, 'id' | 'platform_type' | 'created_at' | 'updated_at'>>;
  events?: ChangeEvent[];
  /** An extra condition on the project item (DynamoDB ConditionExpression with its values). */
  condition?: { expression: string; values: Record<string, unknown> };
  /** Other writes of the same transaction (e.g. a stored credential); with no `set`, they are written without touching the project. */
  writes?: (tx: Transaction) => void;
  result: (next: Project) => T;
}

/** The condition "no live subscriptions" on a project or plan item. */
export const NO_LIVE_SUBSCRIPTIONS = { expression: '(attribute_not_exists(live_subscription_count) OR live_subscription_count <= :zero_live)', values: { ':zero_live': 0 } };

/**
 * Reads the project, lets `decide` choose the change (it throws CONFLICT and friends for a state that
 * does not allow it), then writes the change with its events in one transaction, conditional on the
 * revision read (and `decide`'s own condition). A lost race re-reads and decides again, at most
 * `MAX_ATTEMPTS` times, then CONFLICT. Errors: NOT_FOUND, what `decide` throws, CONFLICT.
 */
export async function changeProject<T>(runtime: UnitOfWorkRuntime, principal: Principal, projectId: string, decide: (project: Project, item: StoredProject, nowIso: string) => Change<T>): Promise<T> {
  return retryOnLostRace(
    async () => {
      const item = await loadProject(runtime.store, principal, projectId);
      const current = toProject(item);
      const nowIso = isoTime(runtime.clock.nowMs());
      const change = decide(current, item, nowIso);
      if (!change.set && !change.writes) return change.result(current);
      const next: Project = change.set ? { ...current, ...change.set, updated_at: nowIso } : current;
      return await unitOfWork(runtime, principal.teamId, (tx) => {
        if (change.set) writeProjectChange(tx, principal.teamId, item, next, change.condition);
        change.writes?.(tx);
        for (const event of change.events ?? []) tx.emit({ type: event.type, projectId, data: event.data(next) });
        return change.result(next);
      });
    },
    { exhausted: () => new ProblemError('CONFLICT', `Project ${projectId} kept changing while this request ran; read it again and retry.`) },
  );
}

/** Adds to `tx` the update of a project's public fields to `next` (revision + 1), conditional on the revision read. */
function writeProjectChange(tx: Transaction, teamId: string, read: Item, next: Project, extra?: { expression: string; values: Record<string, unknown> }): void {
  const revision = revisionCondition(read);
  const fields = ['name', 'description', 'status', 'bot', 'payment_provider', 'resources', 'archived_at', 'updated_at'] as const;
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ...revision.values, ...(extra?.values ?? {}), ':revision': Number(read.revision ?? 0) + 1 };
  const sets = fields.map((field) => {
    names[`#${field}`] = field;
    values[`:${field}`] = next[field];
    return `#${field} = :${field}`;
  });
  tx.update(keys.project(teamId, next.id), {
    expression: `SET ${sets.join(', ')}, revision = :revision`,
    condition: ['attribute_exists(pk)', revision.expression, extra?.expression].filter(Boolean).join(' AND '),
    names,
    values,
  });
}

/** CONFLICT for a change an archived project refuses (`what` names it). */
export const archivedConflict = (project: Project, what: string) =>
  new ProblemError('CONFLICT', `Project ${project.id} is archived: ${what} is not allowed; unarchive it first (POST /v1/projects/${project.id}/unarchive).`);

/**
 * Changes a project's name and/or description (`description: null` clears it) and emits
 * `project.updated`; a request that changes nothing writes nothing and emits nothing. Archived projects
 * can be renamed. Errors: NOT_FOUND, CONFLICT (lost races).
 */
export async function updateProject(runtime: UnitOfWorkRuntime, principal: Principal, projectId: string, input: UpdateProjectRequest): Promise<Project> {
  return changeProject(runtime, principal, projectId, (project) => {
    const set: Change<Project>['set'] = {};
    if (input.name !== undefined && input.name !== project.name) set.name = input.name;
    if (input.description !== undefined && input.description !== project.description) set.description = input.description;
    if (Object.keys(set).length === 0) return { result: (next) => next };
    return { set, events: [{ type: 'project.updated', data: (next) => ({ project: next }) }], result: (next) => next };
  });
}

/** Archives an active project (`archived_at` set) and emits `project.archived`. Errors: NOT_FOUND, CONFLICT (already archived). */
export async function archiveProject(runtime: UnitOfWorkRuntime, principal: Principal, projectId: string): Promise<Project> {
  return changeProject(runtime, principal, projectId, (project, _item, nowIso) => {
    if (project.status === 'archived')
      throw new ProblemError('CONFLICT', `Project ${projectId} is already archived (since ${project.archived_at ?? 'earlier'}); only an active project can be archived.`);
    return { set: { status: 'archived', archived_at: nowIso }, events: [{ type: 'project.archived', data: (next) => ({ project: next }) }], result: (next) => next };
  });
}

/** Restores an archived project and emits `project.unarchived`. Errors: NOT_FOUND, CONFLICT (not archived). */
export async function unarchiveProject(runtime: UnitOfWorkRuntime, principal: Principal, projectId: string): Promise<Project> {
  return changeProject(runtime, principal, projectId, (project) => {
    if (project.status !== 'archived') throw new ProblemError('CONFLICT', `Project ${projectId} is ${project.status}, not archived; only an archived project can be unarchived.`);
    return { set: { status: 'active', archived_at: null }, events: [{ type: 'project.unarchived', data: (next) => ({ project: next }) }], result: (next) => next };
  });
}

/**
 * Records the permissions the project's bot holds in a chat, as the platform reported them (a Telegram
 * `my_chat_member` update; DESIGN D22): sorted, de-duplicated; `project.bot_permissions_changed` when they
 * changed, nothing otherwise (and nothing without a bot). `principal` is the hook's (the project's team).
 * Errors: NOT_FOUND; CONFLICT after lost races.
 */
export async function recordBotPermissions(runtime: UnitOfWorkRuntime, principal: Principal, projectId: string, permissions: readonly string[]): Promise<Project> {
  const sorted = [...new Set(permissions)].sort().slice(0, MAX_BOT_PERMISSIONS);
  return changeProject(runtime, principal, projectId, (current) => {
    const bot = current.bot;
    if (!bot || bot.permissions.join('\n') === sorted.join('\n')) return { result: (next) => next };
    const changed: ProjectBot = { ...bot, permissions: sorted };
    return { set: { bot: changed }, events: [{ type: 'project.bot_permissions_changed', data: (next) => ({ project: next, bot: changed }) }], result: (next) => next };
  });
}

/**
 * Links a platform resource to the project and emits `project.resource_linked`; returns the link.
 * Errors: NOT_FOUND; VALIDATION_FAILED (`kind` not one the project's platform has); CONFLICT (archived
 * project, the same kind and platform id already linked, or {@link MAX_RESOURCES_PER_PROJECT} links).
 */
export async function linkResource(runtime: UnitOfWorkRuntime, principal: Principal, projectId: string, input: LinkResourceRequest): Promise<ProjectResource> {
  const resourceId = newUuid();
  return changeProject(runtime, principal, projectId, (project, _item, nowIso) => {
    if (project.status === 'archived') throw archivedConflict(project, 'linking a resource');
    const kinds = resourceKindsOf(project.platform_type);
    if (!kinds.includes(input.kind)) {
      throw new ProblemError('VALIDATION_FAILED', `A ${project.platform_type} project links resources of kind ${kinds.join(', ')}.`, {
        errors: [{ path: 'kind', message: `must be one of ${kinds.join(', ')} for a ${project.platform_type} project (service://enums/platform-type, resource_kinds)` }],
      });
    }
    const existing = project.resources.find((resource) => resource.kind === input.kind && resource.platform_resource_id === input.platform_resource_id);
    if (existing) throw new ProblemError('CONFLICT', `This ${input.kind} is already linked to project ${projectId} as resource ${existing.id}.`);
    if (project.resources.length >= MAX_RESOURCES_PER_PROJECT) {
      throw new ProblemError('CONFLICT', `Project ${projectId} already links ${MAX_RESOURCES_PER_PROJECT} resources, the most it can; unlink one first.`);
    }
    const resource: ProjectResource = { id: resourceId, project_id: projectId, kind: input.kind, platform_resource_id: input.platform_resource_id, name: input.name ?? null, linked_at: nowIso };
    return {
      set: { resources: [...project.resources, resource] },
      events: [{ type: 'project.resource_linked', data: (next) => ({ project: next, resource }) }],
      result: () => resource,
    };
  });
}

/** Unlinks one linked resource and emits `project.resource_unlinked`. Errors: NOT_FOUND (project, or no such link in it). */
export async function unlinkResource(runtime: UnitOfWorkRuntime, principal: Principal, projectId: string, resourceId: string): Promise<{ id: string; deleted: true }> {
  return changeProject(runtime, principal, projectId, (project) => {
    const resource = project.resources.find((candidate) => candidate.id === resourceId);
    if (!resource) throw new ProblemError('NOT_FOUND', `No resource ${resourceId} is linked to project ${projectId}.`);
    return {
      set: { resources: project.resources.filter((candidate) => candidate.id !== resourceId) },
      events: [{ type: 'project.resource_unlinked', data: (next) => ({ project: next, resource }) }],
      result: () => ({ id: resourceId, deleted: true as const }),
    };
  });
}

/**
 * Deletes a project that has no live subscriptions, with its plans, its links and its credentials (the
 * subscribers' `discord_user` ones right after the transaction), and emits
 * `project.deleted` (the project as it was), all in one transaction conditional on the revision, the
 * live-subscription counter and the plan set read, so a plan or subscription added meanwhile makes the
 * delete try again. Errors: NOT_FOUND; CONFLICT (live subscriptions, or a project that kept changing).
 */
export async function deleteProject(runtime: UnitOfWorkRuntime, principal: Principal, projectId: string): Promise<{ id: string; deleted: true }> {
  return retryOnLostRace(
    async () => {
      const item = await loadProject(runtime.store, principal, projectId);
      const live = liveSubscriptionsOf(item);
      if (live > 0)
        throw new ProblemError('CONFLICT', `Project ${projectId} has ${live} live subscription(s); a project can be deleted only when none is live (cancel them, or archive the project instead).`);
      const project = toProject(item);
      const planIds = planIdsOf(item);
      const revision = revisionCondition(item);
      const planValues: Record<string, unknown> = {};
      const planConditions = planIds.map((planId, index) => {
        planValues[`:plan${index}`] = planId;
        return `contains(plan_ids, :plan${index})`;
      });
      const planCondition = planIds.length === 0 ? 'attribute_not_exists(plan_ids)' : [`size(plan_ids) = :plan_count`, ...planConditions].join(' AND ');
      if (planIds.length > 0) planValues[':plan_count'] = planIds.length;
      const deleted = await unitOfWork(runtime, principal.teamId, (tx) => {
        tx.delete(keys.project(principal.teamId, projectId), {
          condition: ['attribute_exists(pk)', revision.expression, NO_LIVE_SUBSCRIPTIONS.expression, planCondition].join(' AND '),
          values: { ...revision.values, ...NO_LIVE_SUBSCRIPTIONS.values, ...planValues },
        });
        for (const planId of planIds) tx.delete(keys.plan(principal.teamId, planId));
        tx.delete(keys.projectTeam(projectId));
        countUsage(tx, principal.teamId, 'projects', -1);
        for (const kind of CREDENTIAL_KINDS) deleteCredential(tx, projectId, kind);
        tx.emit({ type: 'project.deleted', projectId, data: { project } });
        return { id: projectId, deleted: true as const };
      });
      // The subscribers' own credentials (Discord OAuth2 tokens), too many for the transaction: after it.
      await deleteSubjectCredentials(runtime.store, projectId, 'discord_user');
      return deleted;
    },
    { exhausted: () => new ProblemError('CONFLICT', `Project ${projectId} kept changing while it was being deleted; read it again and retry.`) },
  );
}
