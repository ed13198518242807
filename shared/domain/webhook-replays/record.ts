import { Timestamp } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { WebhookReplay } from './schema.js';

/** A DynamoDB key as stored in a job (a LastEvaluatedKey): attribute name → value. */
const StoredKey = z.record(z.string(), z.unknown());

/** One delivery of a batch in progress, as stored: the dead-letter reference a re-queue needs (`ReplayCandidate`). */
const StoredReplayCandidate = z.object({ id: z.string(), team_id: z.string(), dead_lettered_at: Timestamp });

/**
 * A replay job item as stored (`keys.webhookReplay`, DESIGN D25, D14): the public fields
 * (`completed_at` tolerated absent: read as null) plus its team, the cursor of the next batch (null
 * before the first), the batches done (the guard of each progress write) and, while a batch is in
 * progress, its deliveries and the cursor after it (absent between batches).
 */
const StoredReplayJobRecord = z.extend(z.partial(WebhookReplay, { completed_at: true }), {
  team_id: z.string(),
  cursor: z.nullable(StoredKey),
  batches: z.number().check(z.int(), z.nonnegative()),
  batch: z.optional(z.array(StoredReplayCandidate)),
  batch_next: z.optional(z.nullable(StoredKey)),
});

/** A replay job as stored (see {@link StoredReplayJobRecord}). */
export type StoredReplayJob = z.output<typeof StoredReplayJobRecord>;

/** Parses a replay job item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredReplayJob = recordParser(entity.webhookReplay, StoredReplayJobRecord);
