import * as z from '../schemas/zod.js';
import { Timestamp } from '../schemas/common.js';
import { Team } from '../domain/teams/schema.js';
import { TeamMember } from '../domain/team-members/schema.js';
import { Token } from '../domain/tokens/schema.js';
import { entity } from '../store/keys.js';
import { recordParser } from '../store/records.js';

/**
 * The OAuth authorization server's items as stored (DESIGN D30), each in a partition of its own keyed by
 * its id: registered clients, pending authorization requests, codes, refresh tokens (codes and refresh
 * tokens hold the SHA-256 of their secret, which only the hash check reads) and grants.
 */

/** A registered public client (RFC 7591 metadata the service keeps). */
const StoredClient = z.object({
  client_id: z.string(),
  client_id_issued_at: z.number(),
  client_name: z.optional(z.nullable(z.string())),
  redirect_uris: z.array(z.string()),
  metadata: z.optional(z.record(z.string(), z.unknown())),
});

/** Parses a client item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredClient = recordParser(entity.oauthClient, StoredClient);

/** A validated authorization request waiting for the member's consent. */
const StoredAuthorizationRequest = z.object({
  id: z.string(),
  client_id: z.string(),
  client_name: z.nullable(z.string()),
  /** The host of a metadata document `client_id` URL, shown on the consent page beside `client_name`. */
  client_host: z.optional(z.nullable(z.string())),
  redirect_uri: z.string(),
  code_challenge: z.string(),
  state: z.nullable(z.string()),
  /** The requested abilities (the consent narrows them to what the member holds). */
  scope: Token.shape.abilities,
  /** The tool server's URL (RFC 8707 `resource`), the audience of the tokens. */
  resource: z.string(),
  /** Epoch MILLISECONDS after which the request is void. */
  expires_at_ms: z.number(),
});
/** A validated authorization request (see {@link StoredAuthorizationRequest}). */
export type AuthorizationRequest = z.infer<typeof StoredAuthorizationRequest>;

/** Parses an authorization request item. */
export const parseStoredAuthorizationRequest = recordParser(entity.oauthRequest, StoredAuthorizationRequest);

/**
 * A single-use authorization code: bound to the client, redirect URI, PKCE challenge, member, abilities and projects
 * consented to.
 */
const StoredCode = z.object({
  secret_sha256: z.string(),
  client_id: z.string(),
  client_name: z.optional(z.nullable(z.string())),
  redirect_uri: z.string(),
  code_challenge: z.string(),
  resource: z.string(),
  team_id: Team.shape.id,
  member_id: TeamMember.shape.id,
  abilities: Token.shape.abilities,
  project_ids: z.array(z.string()),
  expires_at_ms: z.number(),
  /** The grant it started, once exchanged. */
  grant_id: z.optional(z.string()),
});

/** Parses an authorization code item. */
export const parseStoredCode = recordParser(entity.oauthCode, StoredCode);

/** A refresh token of a grant's family. */
const StoredRefresh = z.object({
  secret_sha256: z.string(),
  grant_id: z.string(),
  client_id: z.string(),
  expires_at_ms: z.number(),
  /** When it was used up (rotated). */
  spent_at: z.optional(Timestamp),
});

/** Parses a refresh token item. */
export const parseStoredRefresh = recordParser(entity.oauthRefresh, StoredRefresh);

/**
 * A grant: the member, client and consented abilities (as consented: an ability since retired from the
 * catalogue stays stored and is dropped when tokens are issued) and the access tokens it issued.
 */
const StoredGrant = z.object({
  team_id: Team.shape.id,
  member_id: TeamMember.shape.id,
  client_id: z.string(),
  client_name: z.optional(z.nullable(z.string())),
  abilities: z.array(z.string()),
  project_ids: z.array(z.string()),
  access_token_ids: z.optional(z.array(z.string())),
  revoked_at: z.optional(Timestamp),
});

/** Parses a grant item. */
export const parseStoredGrant = recordParser(entity.oauthGrant, StoredGrant);
