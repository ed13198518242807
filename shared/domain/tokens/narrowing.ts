import type { Ability } from '../../catalogues/abilities.js';
import type { Store } from '../../store/store.js';
import { tokenStore } from '../../store/tokens/tokens.js';
import { abilitiesInProjects, memberAbilities, type MemberAbilities } from '../team-members/abilities.js';
import { findMember } from '../team-members/records.js';

/**
 * Member-bound tokens follow their member (DESIGN D2, D19): a token minted on behalf of a team member
 * never holds more than the member does now. After every change of roles, groups or a member's roles,
 * the team's live member-bound tokens are narrowed in place to the member's current abilities (in the
 * token's projects), so authentication needs no extra read per call. Narrowing only removes abilities;
 * a member who gains abilities back does not widen old tokens.
 */

/** The abilities of `token` that `member` holds now in the token's projects (team-wide for an unscoped token). */
function allowedOf(token: { abilities: Ability[]; scopes: string[] }, member: MemberAbilities): Ability[] {
  const projectIds = token.scopes
    .filter((scope) => scope.startsWith('scope:project:'))
    .map((scope) => scope.slice('scope:project:'.length));
  const held = abilitiesInProjects(member, projectIds);
  return token.abilities.filter((ability) => held.has(ability));
}

/**
 * Narrows every live token of `teamId` minted on behalf of a member to what that member holds now (one
 * Query of the team's tokens, one BatchGetItem pair per member, one conditional UpdateItem per token that
 * changes; a token changed meanwhile is left for the next change). A member no longer active is skipped:
 * removing a member revokes their tokens. Returns how many tokens were narrowed.
 */
export async function narrowMemberTokens(store: Store, teamId: string): Promise<number> {
  const byMember = new Map<string, MemberAbilities | null>();
  let narrowed = 0;
  await tokenStore.forEach(store, teamId, { kind: 'live_member_bound' }, async (token) => {
    const memberId = token.member_id!;
    if (!byMember.has(memberId)) {
      const member = await findMember(store, teamId, memberId);
      byMember.set(
        memberId,
        member && member.status === 'active' ? await memberAbilities(store, teamId, member) : null,
      );
    }
    const member = byMember.get(memberId);
    if (!member) return;
    const abilities = token.abilities;
    const allowed = allowedOf(token, member);
    if (allowed.length === abilities.length) return;
    if (await tokenStore.narrow(store, token.id, abilities, allowed)) narrowed++;
  });
  return narrowed;
}
