import * as z from 'zod';
import { IdSchemas } from '../../ids.js';
import { ListQuery, Timestamp, Uuid, listOf } from '../../schemas/common.js';

/** The surfaces an activity entry can come from (a closed list, written once). */
const ACTIVITY_SURFACES = ['rest', 'mcp', 'dashboard'] as const;
/** One of the activity surfaces (a closed list, written once). */
export type ActivitySurface = (typeof ACTIVITY_SURFACES)[number];

/**
 * An activity-log entry; `token_id` identifies the invoking token (interface "Tool-server
 * authorization" 3), `member_id` the team member of a dashboard action (DESIGN D21; its `token_id` is
 * null). Never holds request bodies, so token secrets and webhook secrets cannot reach it.
 */
export const ActivityEntry = z
  .object({
    id: z.string(),
    occurred_at: Timestamp,
    token_id: z.string().nullable().describe('The invoking token; null for an unauthenticated request or a dashboard action.'),
    member_id: z.string().nullable().describe('The team member who acted in the dashboard (surface `dashboard`); null otherwise.'),
    surface: z.enum(ACTIVITY_SURFACES),
    operation: z.string().describe('REST operation id or tool name.'),
    outcome: z.string().describe('`ok` or an error code.'),
    status: z.number().int().describe('HTTP status (tool calls: the status of the error code, 200 when ok).'),
    duration_ms: z.number().int().describe('Milliseconds.'),
    request_id: z.string(),
  })
  .meta({ id: 'ActivityEntry' });
/** An activity entry (see {@link ActivityEntry}). */
export type ActivityEntry = z.infer<typeof ActivityEntry>;
/** What a pipeline records: an entry without its id and time; `member_id` only for dashboard actions. */
export type NewActivityEntry = Omit<ActivityEntry, 'id' | 'occurred_at' | 'member_id'> & { member_id?: string | null };

/** A page of activity entries. */
export const ActivityList = listOf(ActivityEntry, 'ActivityList');

/** Query of `GET /v1/activity` (and the `get_activity_log` tool). */
export const ActivityQuery = ListQuery.extend({
  token_id: IdSchemas.token().optional().describe('Only entries of this token (a ULID).'),
  member_id: Uuid.optional().describe('Only dashboard actions of this team member.'),
  operation: z.string().min(1).max(200).optional().describe('Only entries of this operation (a REST operation id such as createProject, or a tool name such as list_projects).'),
}).strict();
