import { memberIdOfActor } from '../../auth/principal.js';
import type { Ability } from '../../catalogues/abilities.js';
import type { Store } from '../../store/store.js';
import { memberAbilities } from '../team-members/abilities.js';
import { findMember } from '../team-members/records.js';
import { currentTokenAbilities } from '../tokens/repository.js';

/**
 * The current abilities of each endpoint owner in `ownerIds` (DESIGN D6: owners are re-read at fan-out).
 * An owner is the principal that created the endpoint or last changed its url or events: a token id, or
 * `member:<uuid>` for a team member who did it in the dashboard (DESIGN D21). A revoked or missing token
 * holds nothing; a member holds their team-wide abilities while `active`, nothing once invited or removed.
 * One BatchGetItem for the tokens; per member owner, one GetItem and the reads of their groups and roles.
 */
export async function currentOwnerAbilities(
  store: Store,
  teamId: string,
  ownerIds: readonly string[],
): Promise<Map<string, ReadonlySet<Ability>>> {
  const unique = [...new Set(ownerIds)];
  const memberOwners = unique.flatMap((ownerId) => {
    const memberId = memberIdOfActor(ownerId);
    return memberId ? [{ ownerId, memberId }] : [];
  });
  const tokenIds = unique.filter((ownerId) => memberIdOfActor(ownerId) === null);
  const held = tokenIds.length ? await currentTokenAbilities(store, tokenIds) : new Map<string, ReadonlySet<Ability>>();
  if (memberOwners.length) {
    for (const { ownerId, memberId } of memberOwners) {
      const member = await findMember(store, teamId, memberId);
      held.set(
        ownerId,
        member && member.status === 'active'
          ? (await memberAbilities(store, teamId, member)).teamWide
          : new Set<Ability>(),
      );
    }
  }
  return held;
}
