import * as z from '../../schemas/zod.js';
import { Timestamp, Uuid } from '../../schemas/common.js';
import { entity } from '../../store/keys.js';
import { recordParser, type KeyDescription } from '../../store/records.js';

/** Portal items are keyed by the SHA-256 of a credential: a parse error names the item type, never that hash. */
const hashKey =
  (type: string): KeyDescription =>
  () =>
    `${type} (key: a credential's SHA-256, withheld)`;

/** A one-time portal link as stored (DESIGN D27): its subscriber and when it stops working (epoch MILLISECONDS). */
const StoredPortalLink = z.object({ team_id: Uuid, project_id: Uuid, subscriber_id: Uuid, expires_at_ms: z.number() });

/** Parses a portal link item (throws StoredRecordError when it does not match). */
export const parseStoredPortalLink = recordParser(entity.portalLink, StoredPortalLink, hashKey('portal link'));

/**
 * A free join's one-time confirmation link as stored: the subscription it activates and its end (epoch MILLISECONDS).
 */
const StoredJoinConfirmation = z.extend(StoredPortalLink, { subscription_id: Uuid });
/** A stored confirmation link (see {@link StoredJoinConfirmation}). */
export type JoinConfirmation = z.infer<typeof StoredJoinConfirmation>;

/** Parses a confirmation link item (throws StoredRecordError when it does not match). */
export const parseStoredJoinConfirmation = recordParser(
  entity.joinConfirmation,
  StoredJoinConfirmation,
  hashKey('join confirmation link'),
);

/** A live portal session as stored (DESIGN D27; never its credential). */
const StoredPortalSession = z.object({
  /** A ULID naming the session in logs (not a credential). */
  id: z.string(),
  team_id: Uuid,
  project_id: Uuid,
  subscriber_id: Uuid,
  /** Random per session; every portal form must echo it (CSRF). */
  csrf_token: z.string(),
  created_at: Timestamp,
  /** Epoch milliseconds of the last request. */
  last_seen_at_ms: z.number(),
});
/** A live portal session (never its credential; see {@link StoredPortalSession}). */
export type PortalSession = z.infer<typeof StoredPortalSession>;

/** Parses a portal session item (throws StoredRecordError when it does not match). */
export const parseStoredPortalSession = recordParser(
  entity.portalSession,
  StoredPortalSession,
  hashKey('portal session'),
);
