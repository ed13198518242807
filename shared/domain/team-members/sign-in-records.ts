import * as z from '../../schemas/zod.js';
import { Timestamp } from '../../schemas/common.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Team } from '../teams/schema.js';
import { TeamMember } from './schema.js';

/**
 * Dashboard sign-in items as stored (DESIGN D14, D21), parsed on read. Each is keyed by the id inside its
 * credential (a ULID, or a passkey's public credential id), never by its secret; the secret's SHA-256 is
 * compared before parsing and is stripped by these schemas.
 */

/** What a session allows: `registration` (from a sign-in link: register a passkey first) or everything. */
const SessionState = z.enum(['registration', 'active']);
/** A session state (see {@link SessionState}). */
export type SessionState = z.infer<typeof SessionState>;

/** A one-time sign-in link as stored: whom it signs in and until when (epoch MILLISECONDS). */
const StoredSignInLink = z.object({
  team_id: Team.shape.id,
  member_id: TeamMember.shape.id,
  expires_at_ms: z.number(),
});

/** Parses a sign-in link item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredSignInLink = recordParser(entity.signInLink, StoredSignInLink);

/**
 * A dashboard session as stored: `user_agent` absent on sessions made without one (read as empty),
 * `revoked_at` absent until revoked, `last_seen_at_ms` in epoch MILLISECONDS.
 */
const StoredDashboardSession = z.object({
  /** A ULID (not a credential). */
  id: z.string(),
  team_id: Team.shape.id,
  member_id: TeamMember.shape.id,
  state: SessionState,
  csrf_token: z.string(),
  /** How the session began: `link` (sign-in link or invitation) or `passkey`. */
  method: z.enum(['link', 'passkey']),
  user_agent: z.optional(z.string()),
  created_at: Timestamp,
  last_seen_at_ms: z.number(),
  revoked_at: z.optional(z.nullable(Timestamp)),
});

/** Parses a dashboard session item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredDashboardSession = recordParser(entity.dashboardSession, StoredDashboardSession);

/**
 * A passkey as stored: its public credential id, owner, public key (base64url text), signature counter,
 * the transports the authenticator named at registration (absent when it named none) and its times.
 */
const StoredPasskey = z.object({
  id: z.string(),
  team_id: Team.shape.id,
  member_id: TeamMember.shape.id,
  public_key: z.string(),
  counter: z.number(),
  transports: z.optional(z.array(z.string())),
  created_at: Timestamp,
  last_used_at: z.optional(z.nullable(Timestamp)),
});

/** Parses a passkey item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredPasskey = recordParser(entity.passkey, StoredPasskey);

/**
 * A WebAuthn challenge as stored: the challenge to expect, what it is for, the session it is bound to
 * (absent when none) and until when it may be used (epoch MILLISECONDS).
 */
const StoredWebauthnChallenge = z.object({
  challenge: z.string(),
  purpose: z.enum(['registration', 'authentication']),
  session_id: z.optional(z.string()),
  expires_at_ms: z.number(),
});

/** Parses a WebAuthn challenge item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredWebauthnChallenge = recordParser(entity.webauthnChallenge, StoredWebauthnChallenge);
