import { BatchGetCommand, GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { CREATE_PROJECT_PLATFORM_TYPES } from './catalogues/platform-types.js';
import type { Principal } from './auth/tokens.js';
import { requireProjectAccess } from './auth/authorize.js';
import { isoTime } from './clock.js';
import { ProblemError } from './errors.js';
import { newUuid } from './ids.js';
import type { Runtime } from './runtime.js';
import { keys, sortKeyPrefix } from './store/keys.js';
import { decodeCursor, encodeCursor } from './store/store.js';
import { outboxEvent } from './webhooks/events.js';

/** A project as the API returns it. */
export interface Project {
  id: string;
  name: string;
  platform_type: string;
  description: string | null;
  status: 'active' | 'archived';
  created_at: string;
  updated_at: string;
}

/** Input of project creation (validated at the edge by `CreateProjectRequest`). */
export interface CreateProjectInput {
  name: string;
  platform_type: (typeof CREATE_PROJECT_PLATFORM_TYPES)[number];
  description?: string;
}

function toProject(item: Record<string, unknown>): Project {
  return {
    id: item.id as string,
    name: item.name as string,
    platform_type: item.platform_type as string,
    description: (item.description as string | null) ?? null,
    status: item.status as Project['status'],
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

/**
 * Creates a project in the principal's team and writes `project.created` to the outbox in the same
 * DynamoDB transaction (DESIGN D6). A project-scoped token cannot create projects (its scope names
 * existing projects only): TOKEN_MISSING_ABILITY.
 */
export async function createProject(runtime: Runtime, principal: Principal, input: CreateProjectInput): Promise<Project> {
  if (principal.projectIds !== null) {
    throw new ProblemError('TOKEN_MISSING_ABILITY', 'A project-scoped token cannot create projects.');
  }
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
  const { put } = outboxEvent(runtime.store, runtime.clock, { teamId: principal.teamId, type: 'project.created', projectId: project.id, data: { project } });
  await runtime.store.document.send(
    new TransactWriteCommand({
      TransactItems: [
        { Put: { TableName: runtime.store.tableName, Item: { ...keys.project(principal.teamId, project.id), entity: 'project', team_id: principal.teamId, ...project }, ConditionExpression: 'attribute_not_exists(pk)' } },
        put,
      ],
    }),
  );
  runtime.eventsCommitted();
  return project;
}

/** Reads one project of the principal's team; NOT_FOUND when absent, foreign, or outside a project scope. */
export async function getProject(runtime: Runtime, principal: Principal, projectId: string): Promise<Project> {
  requireProjectAccess(principal, projectId);
  const result = await runtime.store.document.send(new GetCommand({ TableName: runtime.store.tableName, Key: keys.project(principal.teamId, projectId) }));
  if (!result.Item) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return toProject(result.Item);
}

/**
 * Lists the team's projects in id order, paged (DESIGN D12). A project-scoped token pages over its own
 * projects only ({@link listScopedProjects}), so neither a page, its length nor a cursor says anything
 * about the team's other projects. Errors: VALIDATION_FAILED for a cursor of another list.
 */
export async function listProjects(runtime: Runtime, principal: Principal, page: { limit: number; cursor?: string }): Promise<{ data: Project[]; next_cursor: string | null }> {
  if (principal.projectIds !== null) return listScopedProjects(runtime, principal.teamId, principal.projectIds, page);
  const partition = keys.teamPartition(principal.teamId);
  const result = await runtime.store.document.send(
    new QueryCommand({
      TableName: runtime.store.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': partition, ':prefix': sortKeyPrefix.project },
      Limit: page.limit,
      ExclusiveStartKey: decodeCursor(page.cursor, partition, { sortKeyPrefix: sortKeyPrefix.project }),
    }),
  );
  return { data: (result.Items ?? []).map(toProject), next_cursor: encodeCursor(result.LastEvaluatedKey) };
}

/**
 * The projects named by a token's `scope:project:<uuid>` entries, in the same key order and cursor
 * format as the team-wide list, read by key (one BatchGetItem per page): the cursor only ever holds one
 * of the token's own project ids, never another project's.
 */
async function listScopedProjects(runtime: Runtime, teamId: string, projectIds: readonly string[], page: { limit: number; cursor?: string }): Promise<{ data: Project[]; next_cursor: string | null }> {
  const partition = keys.teamPartition(teamId);
  const start = decodeCursor(page.cursor, partition, { sortKeyPrefix: sortKeyPrefix.project });
  const after = typeof start?.sk === 'string' ? start.sk : '';
  const remaining = [...new Set(projectIds)]
    .map((projectId) => keys.project(teamId, projectId))
    .filter((key) => key.sk > after)
    .sort((a, b) => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0));
  const pageKeys = remaining.slice(0, page.limit);
  const items: Record<string, unknown>[] = [];
  let pending: Record<string, unknown>[] = pageKeys;
  for (let round = 0; pending.length > 0; round++) {
    if (round > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, 25 * 2 ** round)));
    const result = await runtime.store.document.send(
      new BatchGetCommand({ RequestItems: { [runtime.store.tableName]: { Keys: pending, ConsistentRead: true } } }),
    );
    items.push(...(result.Responses?.[runtime.store.tableName] ?? []));
    pending = (result.UnprocessedKeys?.[runtime.store.tableName]?.Keys as Record<string, unknown>[] | undefined) ?? [];
  }
  items.sort((a, b) => (String(a.sk) < String(b.sk) ? -1 : 1));
  const last = pageKeys.at(-1);
  return { data: items.map(toProject), next_cursor: remaining.length > pageKeys.length && last ? encodeCursor(last) : null };
}
