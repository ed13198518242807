import { memberPrincipal } from '../auth/principal.js';
import { memberAbilities } from '../domain/team-members/abilities.js';
import { findMember } from '../domain/team-members/records.js';
import { findTeam } from '../domain/teams/repository.js';
import { SESSION_COOKIE, safeReturnPath, type DashboardRequest, type SignedInRequest } from './http.js';
import { findSession } from '../domain/team-members/sessions.js';

/**
 * The signed-in viewer of a dashboard request (DESIGN D21), or null: no, unknown, revoked or idle session;
 * member no longer active; team deleted.
 */
export async function signedIn(request: DashboardRequest): Promise<SignedInRequest | null> {
  const { store, clock } = request.runtime;
  const session = await findSession(store, clock, request.cookies[SESSION_COOKIE]);
  if (!session) return null;
  const [member, team] = await Promise.all([
    findMember(store, session.team_id, session.member_id),
    findTeam(store, session.team_id),
  ]);
  if (!member || member.status !== 'active' || !team || team.deleted_at) return null;
  const abilities = await memberAbilities(store, session.team_id, member);
  return {
    ...request,
    session,
    viewer: {
      principal: memberPrincipal({
        teamId: team.id,
        memberId: member.id,
        abilities: abilities.teamWide,
        team: { id: team.id, name: team.name, created_at: team.created_at },
      }),
      member: { id: member.id, name: member.name, email: member.email },
      team: { id: team.id, name: team.name },
      csrfToken: session.csrf_token,
    },
  };
}

/** The path and query of a GET dashboard request, to return to after sign-in, when it is a {@link safeReturnPath}. */
export function signInReturnPath(request: DashboardRequest): string | null {
  const query = request.query.toString();
  return safeReturnPath(`${request.path}${query ? `?${query}` : ''}`);
}
