import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { tokensModule } from './operations.js';
import { listTokens as list, mintToken, revokeToken as revoke, type TokenRecord } from './repository.js';

const operations = tokensModule.operations;
const withoutTeam = <T extends TokenRecord>({ team_id: _team, ...token }: T) => token;

/** `POST /v1/tokens`: mints within the caller's abilities and projects. */
export const createToken: OperationHandler<typeof operations.createToken> = async (input, { runtime, principal }) =>
  withoutTeam(
    await mintToken(runtime.store, runtime.clock, {
      teamId: principal.teamId,
      team: principal.team ?? undefined,
      abilities: input.abilities,
      projectIds: input.project_ids,
      name: input.name ?? null,
      issuer: principal,
    }),
  );

/** `GET /v1/tokens` / `list_tokens`. */
export const listTokens: OperationHandler<typeof operations.listTokens> = async (input, { runtime, principal }) => {
  const page = await list(runtime.store, principal.teamId, input);
  return { data: page.data.map(withoutTeam), next_cursor: page.next_cursor };
};

/** `DELETE /v1/tokens/{id}`. */
export const revokeToken: OperationHandler<typeof operations.revokeToken> = async (input, { runtime, principal }) =>
  withoutTeam(await revoke(runtime.store, runtime.clock, principal.teamId, input.id));

/** Every handler of the tokens module. */
export const tokensHandlers = { createToken, listTokens, revokeToken } satisfies HandlersOf<typeof tokensModule>;
