import * as z from '../../schemas/zod.js';
import { WEBHOOK_EVENT_NAMES } from '../../catalogues/webhook-events.js';
import { Timestamp, Uuid } from '../../schemas/common.js';
import { REPLAYABLE_STATUSES } from '../webhook-deliveries/schema.js';

/**
 * The replay job's shapes (DESIGN D25): `POST /v1/webhook-deliveries/replay-dead` answers 202 with a
 * job, which re-queues the matching dead (or skipped) deliveries in the background, in batches;
 * `GET /v1/webhook-replays/{id}` shows its progress. The request is `ReplayDeadRequest`
 * (`../webhook-deliveries/schema.ts`, the body of that operation).
 */

/**
 * A replay job's statuses: `running` (batches still to do), `completed` (every batch done; a dry run is completed at
 * once) and `cancelled` (stopped before its last batch; what it re-queued stays re-queued).
 */
const REPLAY_STATUSES = ['running', 'completed', 'cancelled'] as const;

/** The filters a job was created with, as it applies them (absolute times). */
const WebhookReplayFilters = z
  .object({
    status: z.enum(REPLAYABLE_STATUSES).check(z.describe('Which deliveries: dead or skipped.')),
    since_hours: z.number().check(z.int(), z.describe('As requested.')),
    since: Timestamp.check(z.describe('The window start: created_at minus since_hours.')),
    until: Timestamp.check(z.describe('The window end (inclusive): the requested until, at most created_at.')),
    endpoint_id: z.nullable(Uuid),
    event_type: z.nullable(z.enum(WEBHOOK_EVENT_NAMES)),
  })
  .register(z.globalRegistry, { id: 'WebhookReplayFilters' });

/** A replay job (DESIGN D25). */
export const WebhookReplay = z
  .object({
    id: Uuid,
    status: z.enum(REPLAY_STATUSES),
    dry_run: z.boolean().check(z.describe('true: the job only counted (matched); nothing was re-queued.')),
    matched: z
      .number()
      .check(z.int(), z.gte(0), z.describe('Deliveries that matched the filters when the job was created.')),
    replayed: z
      .number()
      .check(z.int(), z.gte(0), z.describe('Deliveries re-queued as pending so far (each at most once per job).')),
    filters: WebhookReplayFilters,
    created_at: Timestamp,
    updated_at: Timestamp,
    completed_at: z.nullable(Timestamp),
  })
  .register(z.globalRegistry, { id: 'WebhookReplay' });
/** A replay job (see {@link WebhookReplay}). */
export type WebhookReplay = z.infer<typeof WebhookReplay>;

/** `{id}` path parameters of a replay job. */
export const WebhookReplayIdParams = z.strictObject({ id: Uuid.check(z.describe('The replay job id.')) });
