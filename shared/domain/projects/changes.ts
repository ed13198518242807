import type { Principal } from '../../auth/principal.js';
import { resourceKindsOf } from '../../catalogues/platform-types.js';
import type { WebhookEventName } from '../../catalogues/webhook-events.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { Item } from '../../store/requests.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { projectStore } from '../../store/projects.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { loadProject, toProject } from './repository.js';
import {
  MAX_BOT_PERMISSIONS,
  MAX_RESOURCES_PER_PROJECT,
  type LinkResourceRequest,
  type Project,
  type ProjectBot,
  type ProjectResource,
  type UpdateProjectRequest,
} from './schema.js';

/**
 * Changes of a project (DESIGN D6, D16, D22): optimistic, one transaction each with its events, conditional
 * on the revision read; renaming, archiving, the bot's permissions in a chat and linked resources.
 */

/** An event a change emits; `data` is built from the project as written. */
export interface ChangeEvent {
  type: WebhookEventName;
  data: (next: Project) => Record<string, unknown>;
}

/** What a change decided from the project it read: the fields to set (none: no write), its events, its answer. */
interface Change<T> {
  set?: Partial<Omit<Project, 'id' | 'platform_type' | 'created_at' | 'updated_at'>>;
  events?: ChangeEvent[];
  /** The write also requires the project to have no live subscriptions (checked in the transaction). */
  noLiveSubscriptions?: boolean;
  /**
   * Other writes of the same transaction (e.g. a stored credential); with no `set`, they are written without touching
   * the project.
   */
  writes?: (tx: Transaction) => void;
  result: (next: Project) => T;
}

/**
 * Reads the project, lets `decide` choose the change (it throws CONFLICT and friends for a state that
 * does not allow it), then writes the change with its events in one transaction, conditional on the
 * revision read (and `decide`'s own condition). A lost race re-reads and decides again, at most
 * `MAX_ATTEMPTS` times, then CONFLICT. Errors: NOT_FOUND, what `decide` throws, CONFLICT.
 */
export async function changeProject<T>(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  decide: (project: Project, item: Item, nowIso: string) => Change<T>,
): Promise<T> {
  return retryOnLostRace(
    async () => {
      const item = await loadProject(runtime.store, principal, projectId);
      const current = toProject(item);
      const nowIso = isoTime(runtime.clock.nowMs());
      const change = decide(current, item, nowIso);
      if (!change.set && !change.writes) return change.result(current);
      const next: Project = change.set ? { ...current, ...change.set, updated_at: nowIso } : current;
      return await unitOfWork(runtime, principal.teamId, (tx) => {
        if (change.set)
          projectStore.writeChange(tx, principal.teamId, item, next, {
            noLiveSubscriptions: change.noLiveSubscriptions,
          });
        change.writes?.(tx);
        for (const event of change.events ?? []) tx.emit({ type: event.type, projectId, data: event.data(next) });
        return change.result(next);
      });
    },
    {
      exhausted: () =>
        new ProblemError(
          'CONFLICT',
          `Project ${projectId} kept changing while this request ran; read it again and retry.`,
        ),
    },
  );
}

/** CONFLICT for a change an archived project refuses (`what` names it). */
export const archivedConflict = (project: Project, what: string) =>
  new ProblemError(
    'CONFLICT',
    `Project ${project.id} is archived: ${what} is not allowed; unarchive it first (POST /v1/projects/${project.id}/unarchive).`,
  );

/**
 * Changes a project's name, description (`description: null` clears it) and/or time zone and emits
 * `project.updated`; a request that changes nothing writes nothing and emits nothing. Archived projects
 * can be renamed. Errors: NOT_FOUND, CONFLICT (lost races).
 */
export async function updateProject(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  input: UpdateProjectRequest,
): Promise<Project> {
  return changeProject(runtime, principal, projectId, (project) => {
    const set: Change<Project>['set'] = {};
    if (input.name !== undefined && input.name !== project.name) set.name = input.name;
    if (input.description !== undefined && input.description !== project.description)
      set.description = input.description;
    if (input.time_zone !== undefined && input.time_zone !== project.time_zone) set.time_zone = input.time_zone;
    if (Object.keys(set).length === 0) return { result: (next) => next };
    return { set, events: [{ type: 'project.updated', data: (next) => ({ project: next }) }], result: (next) => next };
  });
}

/**
 * Archives an active project (`archived_at` set) and emits `project.archived`. Errors: NOT_FOUND, CONFLICT (already
 * archived).
 */
export async function archiveProject(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
): Promise<Project> {
  return changeProject(runtime, principal, projectId, (project, _item, nowIso) => {
    if (project.status === 'archived')
      throw new ProblemError(
        'CONFLICT',
        `Project ${projectId} is already archived (since ${project.archived_at ?? 'earlier'}); only an active project can be archived.`,
      );
    return {
      set: { status: 'archived', archived_at: nowIso },
      events: [{ type: 'project.archived', data: (next) => ({ project: next }) }],
      result: (next) => next,
    };
  });
}

/** Restores an archived project and emits `project.unarchived`. Errors: NOT_FOUND, CONFLICT (not archived). */
export async function unarchiveProject(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
): Promise<Project> {
  return changeProject(runtime, principal, projectId, (project) => {
    if (project.status !== 'archived')
      throw new ProblemError(
        'CONFLICT',
        `Project ${projectId} is ${project.status}, not archived; only an archived project can be unarchived.`,
      );
    return {
      set: { status: 'active', archived_at: null },
      events: [{ type: 'project.unarchived', data: (next) => ({ project: next }) }],
      result: (next) => next,
    };
  });
}

/**
 * Records the permissions the project's bot holds in a chat, as the platform reported them (a Telegram
 * `my_chat_member` update; DESIGN D22): sorted, de-duplicated; `project.bot_permissions_changed` when they
 * changed, nothing otherwise (and nothing without a bot). `principal` is the hook's (the project's team).
 * Errors: NOT_FOUND; CONFLICT after lost races.
 */
export async function recordBotPermissions(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  permissions: readonly string[],
): Promise<Project> {
  const sorted = [...new Set(permissions)].sort().slice(0, MAX_BOT_PERMISSIONS);
  return changeProject(runtime, principal, projectId, (current) => {
    const bot = current.bot;
    if (!bot || bot.permissions.join('\n') === sorted.join('\n')) return { result: (next) => next };
    const changed: ProjectBot = { ...bot, permissions: sorted };
    return {
      set: { bot: changed },
      events: [{ type: 'project.bot_permissions_changed', data: (next) => ({ project: next, bot: changed }) }],
      result: (next) => next,
    };
  });
}

/**
 * Links a platform resource to the project and emits `project.resource_linked`; returns the link.
 * Errors: NOT_FOUND; VALIDATION_FAILED (`kind` not one the project's platform has); CONFLICT (archived
 * project, the same kind and platform id already linked, or {@link MAX_RESOURCES_PER_PROJECT} links).
 */
export async function linkResource(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  input: LinkResourceRequest,
): Promise<ProjectResource> {
  const resourceId = newUuid();
  return changeProject(runtime, principal, projectId, (project, _item, nowIso) => {
    if (project.status === 'archived') throw archivedConflict(project, 'linking a resource');
    const kinds = resourceKindsOf(project.platform_type);
    if (!kinds.includes(input.kind)) {
      throw new ProblemError(
        'VALIDATION_FAILED',
        `A ${project.platform_type} project links resources of kind ${kinds.join(', ')}.`,
        {
          errors: [
            {
              path: 'kind',
              message: `must be one of ${kinds.join(', ')} for a ${project.platform_type} project (service://enums/platform-type, resource_kinds)`,
            },
          ],
        },
      );
    }
    const existing = project.resources.find(
      (resource) => resource.kind === input.kind && resource.platform_resource_id === input.platform_resource_id,
    );
    if (existing)
      throw new ProblemError(
        'CONFLICT',
        `This ${input.kind} is already linked to project ${projectId} as resource ${existing.id}.`,
      );
    if (project.resources.length >= MAX_RESOURCES_PER_PROJECT) {
      throw new ProblemError(
        'CONFLICT',
        `Project ${projectId} already links ${MAX_RESOURCES_PER_PROJECT} resources, the most it can; unlink one first.`,
      );
    }
    const resource: ProjectResource = {
      id: resourceId,
      project_id: projectId,
      kind: input.kind,
      platform_resource_id: input.platform_resource_id,
      name: input.name ?? null,
      linked_at: nowIso,
    };
    return {
      set: { resources: [...project.resources, resource] },
      events: [{ type: 'project.resource_linked', data: (next) => ({ project: next, resource }) }],
      result: () => resource,
    };
  });
}

/**
 * Unlinks one linked resource and emits `project.resource_unlinked`. Errors: NOT_FOUND (project, or no such link in
 * it).
 */
export async function unlinkResource(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  resourceId: string,
): Promise<{ id: string; deleted: true }> {
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
