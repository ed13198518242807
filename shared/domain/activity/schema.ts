import * as z from '../../schemas/zod.js';
import { IdSchemas } from '../../ids.js';
import { ListQuery, Timestamp, Uuid, listOf } from '../../schemas/common.js';

/**
 * The surfaces an activity entry can come from (a closed list, written once): `portal` is the subscriber portal and the
 * join pages (DESIGN D26, D27); `hook` is a project's payment provider or platform reporting through its verified hook
 * (D22); `operator` is the operator CLI (DESIGN §5) and the operator's billing hook. Entries of `hook` and `operator`
 * name no token or member.
 */
export const ACTIVITY_SURFACES = ['rest', 'mcp', 'dashboard', 'portal', 'hook', 'operator'] as const;
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
    token_id: z
      .nullable(z.string())
      .check(
        z.describe(
          'The invoking token; null for an unauthenticated request, a dashboard action, a hook or the operator.',
        ),
      ),
    member_id: z
      .nullable(z.string())
      .check(z.describe('The team member who acted in the dashboard (surface `dashboard`); null otherwise.')),
    surface: z.enum(ACTIVITY_SURFACES),
    operation: z.string().check(z.describe('REST operation id or tool name.')),
    outcome: z.string().check(z.describe('`ok` or an error code.')),
    status: z
      .number()
      .check(z.int(), z.describe('HTTP status (tool calls: the status of the error code, 200 when ok).')),
    duration_ms: z.number().check(z.int(), z.describe('Milliseconds.')),
    request_id: z.string(),
  })
  .register(z.globalRegistry, { id: 'ActivityEntry' });
/** An activity entry (see {@link ActivityEntry}). */
export type ActivityEntry = z.infer<typeof ActivityEntry>;
/** What a pipeline records: an entry without its id and time; `member_id` only for dashboard actions. */
export type NewActivityEntry = Omit<ActivityEntry, 'id' | 'occurred_at' | 'member_id'> & { member_id?: string | null };

/** A page of activity entries. */
export const ActivityList = listOf(ActivityEntry, 'ActivityList');

/** Query of `GET /v1/activity` (and the `get_activity_log` tool). */
export const ActivityQuery = z.extend(ListQuery, {
  token_id: z.optional(IdSchemas.token()).check(z.describe('Only entries of this token (a ULID).')),
  member_id: z.optional(Uuid).check(z.describe('Only dashboard actions of this team member.')),
  surface: z
    .optional(z.enum(ACTIVITY_SURFACES))
    .check(z.describe('Only entries of this surface (`hook`: what a payment provider or platform reported).')),
  operation: z
    .optional(z.string().check(z.minLength(1), z.maxLength(200)))
    .check(
      z.describe(
        'Only entries of this operation (a REST operation id such as createProject, or a tool name such as list_projects).',
      ),
    ),
});
