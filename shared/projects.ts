import { GetCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { CREATE_PROJECT_PLATFORM_TYPES } from './catalogues/platform-types.js';
import type { Principal } from './auth/tokens.js';
import { canAccessProject, requireProjectAccess } from './auth/authorize.js';
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

/** Lists the team's projects (only the scoped ones for a project-scoped token), paged (DESIGN D12). */
export async function listProjects(runtime: Runtime, principal: Principal, page: { limit: number; cursor?: string }): Promise<{ data: Project[]; next_cursor: string | null }> {
  const partition = keys.teamPartition(principal.teamId);
  const result = await runtime.store.document.send(
    new QueryCommand({
      TableName: runtime.store.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': partition, ':prefix': sortKeyPrefix.project },
      Limit: page.limit,
      ExclusiveStartKey: decodeCursor(page.cursor, partition),
    }),
  );
  const data = (result.Items ?? []).map(toProject).filter((project) => canAccessProject(principal, project.id));
  return { data, next_cursor: encodeCursor(result.LastEvaluatedKey) };
}
