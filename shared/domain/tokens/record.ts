import * as z from '../../schemas/zod.js';
import { Timestamp } from '../../schemas/common.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Team } from '../teams/schema.js';
import { Token } from './schema.js';

/**
 * A token item as stored (`TOKEN#<id>`, DESIGN D2): the public fields (absent until set: `revoked_at`,
 * `last_used_at`, `member_id`) plus its team, the deleted team's stamp and, for OAuth access tokens,
 * `expires_at_ms` (epoch MILLISECONDS) and the grant. Reads never carry the secret's hash.
 */
export const StoredToken = z.object({
  id: Token.shape.id,
  team_id: Team.shape.id,
  name: z.optional(Token.shape.name),
  abilities: Token.shape.abilities,
  scopes: Token.shape.scopes,
  created_at: Token.shape.created_at,
  revoked_at: z.optional(Token.shape.revoked_at),
  last_used_at: z.optional(Token.shape.last_used_at),
  member_id: z.optional(Token.shape.member_id),
  expires_at_ms: z.optional(z.number()),
  oauth_grant_id: z.optional(z.string()),
  team_deleted_at: z.optional(Timestamp),
});
/** A stored token (see {@link StoredToken}). */
export type StoredToken = z.infer<typeof StoredToken>;

/** Parses a token item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredToken = recordParser(entity.token, StoredToken);

/**
 * What authentication reads of a token item on every request (DESIGN D2, D19, D30): the fields of the
 * checks and the principal, the secret's SHA-256 and the team snapshot taken at minting (absent on
 * tokens minted before snapshots existed).
 */
const TokenCredential = z.extend(
  z.pick(StoredToken, {
    id: true,
    team_id: true,
    abilities: true,
    scopes: true,
    revoked_at: true,
    last_used_at: true,
    team_deleted_at: true,
    expires_at_ms: true,
    oauth_grant_id: true,
  }),
  {
    secret_sha256: z.string(),
    team_snapshot: z.optional(z.pick(Team, { id: true, name: true, created_at: true })),
  },
);

/**
 * Parses what authentication needs of a token item (throws StoredRecordError naming its key when it does not match).
 */
export const parseTokenCredential = recordParser(entity.token, TokenCredential);
