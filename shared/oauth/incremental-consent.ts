import { oauthGrantStore } from '../store/oauth-grants.js';
import type { Store } from '../store/store.js';
import { tokenStore } from '../store/tokens/tokens.js';

/**
 * Incremental consent (DESIGN D30 amended; MCP "Authorization" scope challenges): authorizing the same client again,
 * as the same member with the same project scope, adds the newly consented abilities to its live grant instead of
 * starting a second one, so nothing granted before is lost. The live grant is found through the member's live tokens
 * (the team-tokens index, eventually consistent: a grant whose token was minted in the same instant may be missed, and
 * a second grant is then started, as before).
 */

/** A live grant of one client and member: its id, consented abilities and the access tokens it issued. */
export interface LiveGrant {
  id: string;
  abilities: string[];
  accessTokenIds: string[];
}

/**
 * The live (unrevoked) grant of `clientId` to member `memberId` of team `teamId` narrowed to exactly `projectIds`, or
 * null. Reads the member's live tokens, then each OAuth grant among them.
 */
export async function liveGrantOf(
  store: Store,
  grant: { teamId: string; memberId: string; clientId: string; projectIds: readonly string[] },
): Promise<LiveGrant | null> {
  const grantIds = new Set<string>();
  await tokenStore.forEach(store, grant.teamId, { kind: 'live_of_member', memberId: grant.memberId }, async (token) => {
    if (token.oauth_grant_id !== undefined) grantIds.add(token.oauth_grant_id);
  });
  const scope = [...grant.projectIds].sort().join(' ');
  for (const id of grantIds) {
    const stored = await oauthGrantStore.find(store, id);
    if (
      stored &&
      !stored.revoked_at &&
      stored.team_id === grant.teamId &&
      stored.member_id === grant.memberId &&
      stored.client_id === grant.clientId &&
      [...stored.project_ids].sort().join(' ') === scope
    )
      return { id, abilities: stored.abilities, accessTokenIds: stored.access_token_ids ?? [] };
  }
  return null;
}
