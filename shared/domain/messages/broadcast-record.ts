import * as z from '../../schemas/zod.js';
import { MESSAGE_DELIVERIES } from '../message-templates/schema.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { BROADCAST_STATUSES, type Broadcast, BroadcastAudience } from './broadcast-schema.js';

/** A DynamoDB key as stored in a job (a LastEvaluatedKey): attribute name → value. */
const StoredKey = z.record(z.string(), z.unknown());

/** One subscription of a batch in progress: the subscriber it belongs to. */
const StoredBatchEntry = z.object({ subscription_id: z.string(), subscriber_id: z.string() });

/**
 * A broadcast job item as stored (`keys.broadcast`, DESIGN D32, D14): the public fields with the counts as top-level
 * numbers (each grows by an atomic ADD), its team, the texts, the cursor of the next batch (null before the first),
 * the batches done (the guard of each progress write) and, while a batch is in progress, its subscriptions and the
 * cursor after it (absent between batches).
 */
const StoredBroadcastRecord = z.object({
  id: z.string(),
  team_id: z.string(),
  project_id: z.string(),
  status: z.enum(BROADCAST_STATUSES),
  audience: BroadcastAudience,
  delivery: z.enum(MESSAGE_DELIVERIES),
  subject: z.string(),
  body: z.string(),
  queued: z.number(),
  skipped: z.number(),
  sent: z.number(),
  failed: z.number(),
  created_at: z.string(),
  updated_at: z.string(),
  completed_at: z.nullable(z.string()),
  cursor: z.nullable(StoredKey),
  batches: z.number().check(z.int(), z.nonnegative()),
  batch: z.optional(z.array(StoredBatchEntry)),
  batch_next: z.optional(z.nullable(StoredKey)),
});

/** A broadcast job as stored (see {@link StoredBroadcastRecord}). */
export type StoredBroadcast = z.output<typeof StoredBroadcastRecord>;

/** One subscription of a batch (see {@link StoredBatchEntry}). */
export type BroadcastBatchEntry = z.output<typeof StoredBatchEntry>;

/** Parses a broadcast job item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredBroadcast = recordParser(entity.broadcast, StoredBroadcastRecord);

/** The public view of a stored job. */
export function publicBroadcast(job: StoredBroadcast): Broadcast {
  return {
    id: job.id,
    project_id: job.project_id,
    status: job.status,
    audience: job.audience,
    delivery: job.delivery,
    subject: job.subject,
    counts: { queued: job.queued, sent: job.sent, failed: job.failed, skipped: job.skipped },
    created_at: job.created_at,
    completed_at: job.completed_at,
  };
}
