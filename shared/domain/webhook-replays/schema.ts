import * as z from 'zod';
import { WEBHOOK_EVENT_NAMES } from '../../catalogues/webhook-events.js';
import { Timestamp, Uuid } from '../../schemas/common.js';
import { REPLAYABLE_STATUSES } from '../webhook-deliveries/schema.js';

/**
 * The replay job's shapes (DESIGN D25): `POST /v1/webhook-deliveries/replay-dead` answers 202 with a
 * job, which re-queues the matching dead (or skipped) deliveries in the background, in batches;
 * `GET /v1/webhook-replays/{id}` shows its progress. The request is `ReplayDeadRequest`
 * (`../webhook-deliveries/schema.ts`, the body of that operation).
 */

/** A replay job's statuses: `running` (batches still to do) and `completed` (every batch done; a dry run is completed at once). */
const REPLAY_STATUSES = ['running', 'completed'] as const;

/** The filters a job was created with, as it applies them (absolute times). */
const WebhookReplayFilters = z
  .object({
    status: z.enum(REPLAYABLE_STATUSES).describe('Which deliveries: dead or skipped.'),
    since_hours: z.number().int().describe('As requested.'),
    since: Timestamp.describe('The window start: created_at minus since_hours.'),
    until: Timestamp.describe('The window end (inclusive): the requested until, at most created_at.'),
    endpoint_id: Uuid.nullable(),
    event_type: z.enum(WEBHOOK_EVENT_NAMES).nullable(),
  })
  .meta({ id: 'WebhookReplayFilters' });

/** A replay job (DESIGN D25). */
export const WebhookReplay = z
  .object({
    id: Uuid,
    status: z.enum(REPLAY_STATUSES),
    dry_run: z.boolean().describe('true: the job only counted (matched); nothing was re-queued.'),
    matched: z.number().int().min(0).describe('Deliveries that matched the filters when the job was created.'),
    replayed: z.number().int().min(0).describe('Deliveries re-queued as pending so far (each at most once per job).'),
    filters: WebhookReplayFilters,
    created_at: Timestamp,
    updated_at: Timestamp,
    completed_at: Timestamp.nullable(),
  })
  .meta({ id: 'WebhookReplay' });
/** A replay job (see {@link WebhookReplay}). */
export type WebhookReplay = z.infer<typeof WebhookReplay>;

/** `{id}` path parameters of a replay job. */
export const WebhookReplayIdParams = z.object({ id: Uuid.describe('The replay job id.') }).strict();
