import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { retryLostRaces } from '../roles/policy.js';
import { closeTeamTokens } from '../tokens/repository.js';
import { teamsModule } from './operations.js';
import { currentTeam, deleteTeam, renameTeam } from './repository.js';

type Operations = typeof teamsModule.operations;

/**
 * `GET /v1/teams/current` / `get_team`: the smoke test. Reads the team item (one GetItem) rather than the
 * token's team snapshot, so a rename shows at once (DESIGN D19).
 */
export const getCurrentTeam: OperationHandler<Operations['getCurrentTeam']> = async (_input, { runtime, principal }) =>
  currentTeam(runtime.store, principal);

/** `POST /v1/teams/current`: renames the team. */
export const updateCurrentTeam: OperationHandler<Operations['updateCurrentTeam']> = async (
  input,
  { runtime, principal },
) => retryLostRaces(() => renameTeam(runtime, principal, input.name));

/**
 * `DELETE /v1/teams/current?confirm_team_id=<id>`: soft-deletes the team (`team.deleted`), then marks
 * every token of the team (the caller's last) so authentication refuses them: the team stops serving,
 * while its final events are still delivered (DESIGN D19).
 */
export const deleteCurrentTeam: OperationHandler<Operations['deleteCurrentTeam']> = async (
  input,
  { runtime, principal },
) => {
  const team = await retryLostRaces(() => deleteTeam(runtime, principal, input.confirm_team_id));
  await closeTeamTokens(runtime.store, runtime.clock, principal.teamId, principal.tokenId);
  return team;
};

/** Every handler of the teams module. */
export const teamsHandlers = { getCurrentTeam, updateCurrentTeam, deleteCurrentTeam } satisfies HandlersOf<
  typeof teamsModule
>;
