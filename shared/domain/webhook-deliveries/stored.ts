import { Timestamp } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';
import { entity, secondaryIndex } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import type { Item } from '../../store/requests.js';
import { DeliveryAttempt, WebhookDelivery } from './schema.js';

/**
 * The stored shape of webhook deliveries (DESIGN D7, D14): a delivery item lives in the team's partition
 * (`TEAM#<team>`, `DELIVERY#<dlv_ id>`); while it waits for an attempt (or its lease or dead-letter
 * timer) it is also in the sparse pending-deliveries index at its due time, so the sweeper finds lost
 * timers. Dead deliveries are copied to the dead-letter table. The store adapters in
 * `shared/store/webhook-deliveries/` write the hot paths' expressions out by hand.
 */

/**
 * One attempt record as stored: the public record, the details added later (`planned_at`,
 * `connect_ms`, `remote_address`, `tls_version`) tolerated absent on records written before them
 * (read as null by the public view).
 */
const StoredDeliveryAttemptRecord = z.partial(DeliveryAttempt, {
  planned_at: true,
  connect_ms: true,
  remote_address: true,
  tls_version: true,
});

/** One stored attempt record (see {@link StoredDeliveryAttemptRecord}); every {@link DeliveryAttempt} is one. */
export type StoredDeliveryAttempt = z.output<typeof StoredDeliveryAttemptRecord>;

/**
 * A delivery item as stored (`keys.delivery`, DESIGN D7, D14): the public fields (the nullable times
 * tolerated absent: read as null) plus its team, timers, lease, attempt log (absent: none yet) and body.
 */
const StoredDeliveryRecord = z.extend(
  z.partial(z.omit(WebhookDelivery, { attempt_log: true }), {
    next_attempt_at: true,
    last_attempt_at: true,
    dead_lettered_at: true,
    skipped_at: true,
  }),
  {
    team_id: z.string(),
    /** Epoch MILLISECONDS of the next attempt (pending) or of dead-lettering (pending after attempt 8). */
    due_at_ms: z.nullable(z.number()),
    /** Epoch MILLISECONDS at which an in-flight attempt's lease runs out; null when not delivering. */
    lease_expires_at_ms: z.nullable(z.number()),
    attempt_log: z.optional(z.array(StoredDeliveryAttemptRecord)),
    /** The replay job (DESIGN D25) that last brought it back to pending, if any. */
    last_replay_id: z.optional(z.string()),
    /**
     * The exact POST body (the envelope JSON, redacted for the endpoint owner, DESIGN D10), written at fan-out so an
     * attempt does not read the event again.
     */
    body: z.string(),
    /** Times the sweeper re-queued it since its last lease (`workerIndexes.moveOverdue`); absent when none. */
    sweeper_requeues: z.optional(z.number().check(z.int(), z.nonnegative())),
  },
);

/** A delivery as stored (see {@link StoredDeliveryRecord}); it carries the `DeliveryState` the state machine reads. */
export type StoredDelivery = z.output<typeof StoredDeliveryRecord>;

/**
 * A delivery read from the pending-deliveries index: the stored delivery plus the index sort key it was read at (the
 * guard of the sweeper's move).
 */
const StoredOverdueDeliveryRecord = z.extend(StoredDeliveryRecord, { [secondaryIndex.sortKey]: z.string() });

/** An overdue delivery as read from the pending-deliveries index (see {@link StoredOverdueDeliveryRecord}). */
export type StoredOverdueDelivery = z.output<typeof StoredOverdueDeliveryRecord>;

/**
 * Parses a delivery read from the pending-deliveries index (throws StoredRecordError naming its key when it does not
 * match).
 */
export const parseStoredOverdueDelivery = recordParser(entity.delivery, StoredOverdueDeliveryRecord);

/** Which delivery a dead-letter copy names, as replay-dead reads it. */
export interface DeadLetterRef {
  id: string;
  team_id: string;
  /** ISO time; part of the dead-letter copy's key. */
  dead_lettered_at: string;
}

/**
 * What a replay reads of a dead-letter copy (the dead-letter table, `DEAD#<time>#<id>`): the delivery it copies and
 * when it died.
 */
const StoredDeadLetterRef = z.object({ delivery_id: z.string(), dead_lettered_at: Timestamp });

/** Parses a dead-letter copy's reference (throws StoredRecordError naming its key when it does not match). */
export const parseStoredDeadLetterRef = recordParser(entity.deadDelivery, StoredDeadLetterRef);

/** What a replay reads of a skipped delivery found through the skipped-deliveries index: its id. */
const StoredDeliveryId = z.object({ id: z.string() });

/** Parses a delivery item's id. */
export const parseStoredDeliveryId = recordParser(entity.delivery, StoredDeliveryId);

/**
 * A stored delivery item as read, parsed through its stored-record schema (throws StoredRecordError naming its key when
 * it does not match).
 */
export const asDelivery: (item: Item) => StoredDelivery = recordParser(entity.delivery, StoredDeliveryRecord);
