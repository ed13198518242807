import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { teamsModule } from './operations.js';
import { getTeam } from './repository.js';

const operations = teamsModule.operations;

/** `GET /v1/teams/current` / `get_team`: answered from the token's team snapshot when it has one (no extra read). */
export const getCurrentTeam: OperationHandler<typeof operations.getCurrentTeam> = async (_input, { runtime, principal }) =>
  principal.team ?? getTeam(runtime.store, principal.teamId);

/** Every handler of the teams module. */
export const teamsHandlers = { getCurrentTeam } satisfies HandlersOf<typeof teamsModule>;
