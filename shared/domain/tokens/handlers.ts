import { ProblemError } from '../../errors.js';
import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { retryLostRaces } from '../roles/policy.js';
import { requireMemberHolds } from '../team-members/abilities.js';
import { tokensModule } from './operations.js';
import { listTokens as list, mintToken, revokeToken as revoke, type TokenRecord } from './repository.js';

type Operations = typeof tokensModule.operations;
const withoutTeam = <T extends TokenRecord>({ team_id: _team, ...token }: T) => token;

/**
 * `POST /v1/tokens`: mints within the caller's abilities and projects. With `member_id`, on behalf of that
 * team member (DESIGN D19): every requested ability must also be held by the member (in every project
 * of `project_ids` when given), so the token holds at most the intersection of the caller's and the
 * member's abilities; a request beyond it is refused (TOKEN_MISSING_ABILITY naming what the member
 * lacks), never silently narrowed, as minting beyond the caller already is.
 */
export const createToken: OperationHandler<Operations['createToken']> = async (input, { runtime, principal }) => {
  // The caller's own limits are checked first (by mintToken, before any read); then the member's.
  const callerHoldsAll = input.abilities.every((ability) => principal.abilities.has(ability));
  if (input.member_id && callerHoldsAll)
    await requireMemberHolds(
      runtime.store,
      principal.teamId,
      input.member_id,
      input.abilities,
      input.project_ids ?? [],
    );
  const mint = () =>
    mintToken(runtime.store, runtime.clock, {
      teamId: principal.teamId,
      team: principal.team ?? undefined,
      abilities: input.abilities,
      projectIds: input.project_ids,
      name: input.name ?? null,
      issuer: principal,
      memberId: input.member_id ?? null,
    });
  // Minting for a member checks the member in the same transaction, which can race with a change of them.
  return withoutTeam(await (input.member_id ? retryLostRaces(mint) : mint()));
};

/** `GET /v1/tokens` / `list_tokens`. */
export const listTokens: OperationHandler<Operations['listTokens']> = async (input, { runtime, principal }) => {
  const page = await list(runtime.store, principal.teamId, input);
  return { data: page.data.map(withoutTeam), next_cursor: page.next_cursor };
};

/** `DELETE /v1/tokens/{id}`. */
export const revokeToken: OperationHandler<Operations['revokeToken']> = async (input, { runtime, principal }) => {
  if (input.id === principal.tokenId && input.self !== true) {
    throw new ProblemError(
      'CONFLICT',
      'This is the calling token: revoking it would lock this caller out. Add ?self=true to revoke it anyway.',
    );
  }
  return withoutTeam(await revoke(runtime.store, runtime.clock, principal.teamId, input.id));
};

/** Every handler of the tokens module. */
export const tokensHandlers = { createToken, listTokens, revokeToken } satisfies HandlersOf<typeof tokensModule>;
