import { ABILITY_VALUES } from '../catalogues/abilities.js';
import { findTeam } from '../domain/teams/repository.js';
import type { Store } from '../store/store.js';
import type { Principal } from './principal.js';

/** The {@link Principal.tokenId} of the operator: no token, no member. */
const OPERATOR_ACTOR_ID = 'operator';

/**
 * The principal of the service's operator acting on team `teamId` (the operator CLI, the operator's billing hook;
 * DESIGN §5, D20): every ability, every project, no token; its writes are exempt from the billing lockdown (the
 * operator is not the creator). Null when the team does not exist (a deleted one does), so nothing is run or logged for
 * a team that is not there. One GetItem.
 */
export async function operatorPrincipal(store: Store, teamId: string): Promise<Principal | null> {
  if (!(await findTeam(store, teamId))) return null;
  return {
    tokenId: OPERATOR_ACTOR_ID,
    teamId,
    abilities: new Set(ABILITY_VALUES),
    projectIds: null,
    team: null,
    operator: true,
  };
}
