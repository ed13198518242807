import { NameText } from '../schemas/common.js';
import * as z from '../schemas/zod.js';

/** Largest `POST /oauth/register` body read, in bytes (RFC 7591 metadata is a few hundred bytes). */
export const MAX_CLIENT_METADATA_BYTES = 16 * 1024;

/** A URI or short identifier of the metadata: a string of at most 2,048 characters (RFC 7591 §2). */
const MetadataString = z.string().check(z.maxLength(2048));
/** A list of short strings (grant types, response types, contacts): at most 10 of them. */
const ShortList = z.array(z.string().check(z.maxLength(200))).check(z.maxLength(10));

/**
 * The client metadata a public client may register (RFC 7591 §2; DESIGN D30): the known fields, typed and capped;
 * unknown fields are dropped (so nothing unbounded or non-JSON-safe is stored). Redirect URIs are checked beyond
 * their shape by `isAllowedRedirectUri`; `client_name` is a name like every other (no control characters).
 */
export const ClientMetadata = z.object({
  redirect_uris: z.array(MetadataString).check(z.maxLength(50)),
  token_endpoint_auth_method: z.optional(z.string().check(z.maxLength(100))),
  grant_types: z.optional(ShortList),
  response_types: z.optional(ShortList),
  client_name: z.optional(NameText(100)),
  client_uri: z.optional(MetadataString),
  logo_uri: z.optional(MetadataString),
  tos_uri: z.optional(MetadataString),
  policy_uri: z.optional(MetadataString),
  jwks_uri: z.optional(MetadataString),
  contacts: z.optional(ShortList),
  scope: z.optional(MetadataString),
  software_id: z.optional(z.string().check(z.maxLength(200))),
  software_version: z.optional(z.string().check(z.maxLength(200))),
});
/** Registered client metadata (see {@link ClientMetadata}). */
export type ClientMetadata = z.output<typeof ClientMetadata>;
