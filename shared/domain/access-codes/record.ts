import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { AccessCode, AccessCodeBatch } from './schema.js';

/**
 * A code item as stored (`ACCESS_CODE#<batch>#<code id>`, DESIGN D14, D18): the public fields but
 * `expires_at`, stored as `code_expires_at` (absent for "never": `expires_at` is the table's TTL
 * attribute); `access_days`, `max_redemptions`, `times_redeemed` and `revoked_at` absent until set. The item also
 * keeps `code_sha256` (its lookup item's key, never the code), which reads strip.
 */
const StoredAccessCode = z.extend(
  z.omit(z.partial(AccessCode, { access_days: true, max_redemptions: true, times_redeemed: true, revoked_at: true }), {
    expires_at: true,
  }),
  {
    code_expires_at: z.optional(AccessCode.shape.expires_at),
  },
);
/** A stored code (see {@link StoredAccessCode}). */
export type StoredAccessCode = z.infer<typeof StoredAccessCode>;

/** Parses a code item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredAccessCode = recordParser(entity.accessCode, StoredAccessCode);

/**
 * What a cleanup needs of a code item: its id and `code_sha256`, the key of its lookup item (absent on items written
 * before it was kept).
 */
const StoredAccessCodeKeys = z.object({
  id: AccessCode.shape.id,
  code_sha256: z.optional(z.string().check(z.regex(/^[0-9a-f]{64}$/))),
});

/** Parses a code item's id and lookup key. */
export const parseStoredAccessCodeKeys = recordParser(entity.accessCode, StoredAccessCodeKeys);

/** What a code's status at a time needs of its item: the stored status and expiry. */
const StoredAccessCodeStatus = z.pick(StoredAccessCode, { status: true, code_expires_at: true });

/** Parses a code item's stored status and expiry. */
export const parseStoredAccessCodeStatus = recordParser(entity.accessCode, StoredAccessCodeStatus);

/**
 * What reads need of a batch item: its id and `state` (`pending` while being written, `active` once complete,
 * `discarded`).
 */
const StoredBatchState = z.object({ id: AccessCodeBatch.shape.id, state: z.enum(['pending', 'active', 'discarded']) });

/** Parses a batch item's id and state. */
export const parseStoredBatchState = recordParser(entity.accessCodeBatch, StoredBatchState);

/** A code's reference item (`ACCESS_CODE_REF`): the project and batch of a code id. */
const StoredAccessCodeRef = z.object({ project_id: AccessCode.shape.project_id, batch_id: AccessCode.shape.batch_id });

/** Parses a code's reference item. */
export const parseStoredAccessCodeRef = recordParser(entity.accessCodeRef, StoredAccessCodeRef);

/**
 * A code's lookup item (`keys.accessCodeLookup`, keyed by the SHA-256 of the normalized code): the code's id and batch.
 */
const StoredAccessCodeLookup = z.object({ access_code_id: AccessCode.shape.id, batch_id: AccessCode.shape.batch_id });

/** Parses a code's lookup item (throws StoredRecordError naming the item type, never its key: the hash of a code). */
export const parseStoredAccessCodeLookup = recordParser(
  entity.accessCodeLookup,
  StoredAccessCodeLookup,
  () => "access code lookup (key: a code's SHA-256, withheld)",
);
