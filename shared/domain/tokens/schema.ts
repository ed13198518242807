import * as z from '../../schemas/zod.js';
import { ABILITY_VALUES } from '../../catalogues/abilities.js';
import { IdSchemas } from '../../ids.js';
import { booleanFilter, listOf, ListQuery, NameText, Timestamp, Uuid } from '../../schemas/common.js';

/** An API token as lists return it (never its secret or hash). */
export const Token = z
  .object({
    id: z.string(),
    name: z.nullable(z.string()),
    abilities: z.array(z.enum(ABILITY_VALUES)),
    scopes: z.array(z.string()),
    created_at: Timestamp,
    revoked_at: z.nullable(Timestamp),
    last_used_at: z
      .nullable(Timestamp)
      .check(
        z.describe(
          'When the token last authenticated a call, to within an hour (the stamp is written at most once an hour per token, so a busy token costs no extra write per call); null if never used.',
        ),
      ),
    member_id: z
      .nullable(Uuid)
      .check(
        z.describe(
          'The team member the token acts for (it holds at most their abilities); null for a token of the team itself.',
        ),
      ),
    expires_at: z
      .nullable(Timestamp)
      .check(
        z.describe(
          'When the token stops working: set only on tokens issued to an OAuth client of the tool server (1 hour); null for tokens that never expire.',
        ),
      ),
  })
  .register(z.globalRegistry, { id: 'Token' });
/** A token (see {@link Token}). */
export type Token = z.infer<typeof Token>;

/**
 * How fresh a token's `last_used_at` is kept, in MILLISECONDS (1 hour): authentication writes the stamp
 * only when the stored one is older than this (or missing), so it costs one write per token per hour.
 */
export const TOKEN_LAST_USED_PRECISION_MS = 60 * 60 * 1000;

/** The minted token, with the bearer string shown once. */
export const TokenWithSecret = z
  .extend(Token, {
    token: z.string().check(z.describe('`svc_live_<id>_<secret>`. Shown only in this response.')),
  })
  .register(z.globalRegistry, { id: 'TokenWithSecret' });

/** A page of tokens. */
export const TokenList = listOf(Token, 'TokenList');

/** Body of `POST /v1/tokens`. */
export const CreateTokenRequest = z
  .strictObject({
    name: z.optional(NameText()).check(z.describe('A name to recognise the token by, 1 to 100 characters.')),
    abilities: z
      .array(z.enum(ABILITY_VALUES))
      .check(
        z.minLength(1),
        z.maxLength(ABILITY_VALUES.length),
        z.describe('Abilities of the new token; each must be held by the caller.'),
      ),
    project_ids: z
      .optional(z.array(Uuid).check(z.maxLength(20)))
      .check(z.describe('Narrow the token to these projects.')),
    member_id: z
      .optional(Uuid)
      .check(
        z.describe(
          'Mint on behalf of this active team member: the token then holds at most the intersection of the caller’s and the member’s abilities (each requested ability must be held by both, in every project of `project_ids` when given).',
        ),
      ),
  })
  .register(z.globalRegistry, { id: 'CreateTokenRequest' });

/** Query of `GET /v1/tokens` (and the `list_tokens` tool). */
export const ListTokensQuery = z.extend(ListQuery, {
  include_revoked: booleanFilter('Include revoked tokens. Default false.'),
});

/** `{id}` path parameters of a token. */
export const TokenIdParams = z.strictObject({ id: IdSchemas.token().check(z.describe('The token id (a ULID).')) });

/** Query of `DELETE /v1/tokens/{id}`: revoking the calling token itself must be asked for explicitly. */
export const RevokeTokenQuery = z.strictObject({
  self: booleanFilter(
    'true to let the calling token revoke itself (its next call then fails). Without it, revoking the calling token is refused, so nobody locks themselves out by mistake.',
  ),
});
