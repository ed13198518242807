import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { retryLostRaces } from '../roles/policy.js';
import { revokeMemberTokens } from '../tokens/repository.js';
import { teamMembersModule } from './operations.js';
import { removeTeamMember as remove, updateTeamMember as update } from './changes.js';
import { acceptTeamInvitation as accept, emailInvitation, inviteTeamMember as invite } from './invitations.js';
import { getTeam } from '../teams/repository.js';
import { getTeamMember as read, listTeamMembers as list } from './repository.js';
import { narrowMemberTokens } from '../tokens/narrowing.js';

type Operations = typeof teamMembersModule.operations;

/** `GET /v1/team-members` / `list_team_members`. */
export const listTeamMembers: OperationHandler<Operations['listTeamMembers']> = async (input, { runtime, principal }) =>
  list(runtime.store, principal, input);

/** `GET /v1/team-members/{id}`. */
export const getTeamMember: OperationHandler<Operations['getTeamMember']> = async (input, { runtime, principal }) =>
  read(runtime.store, principal, input.id);

/**
 * `POST /v1/team-members/invitations`: the answer carries the invitation token and link, once; the link is also
 * e-mailed to the invitee (`emailInvitation`). Each write use case of this module runs again when it lost a race
 * (`retryLostRaces`).
 */
export const inviteTeamMember: OperationHandler<Operations['inviteTeamMember']> = async (
  input,
  { runtime, principal },
) => {
  const invited = await retryLostRaces(() => invite(runtime, principal, input));
  const team = await getTeam(runtime.store, principal.teamId);
  await emailInvitation(runtime, team.name, invited);
  return invited;
};

/**
 * `POST /v1/team-invitations/accept` and the dashboard's form: public (no bearer token; every surface counts each
 * call in the per-IP `rest-anonymous` bucket, `perIpLimit`). The invitation token is the only credential; the
 * activity entry goes to the team joined, naming the new member.
 */
export const acceptTeamInvitation: OperationHandler<Operations['acceptTeamInvitation']> = async (
  input,
  { runtime, identify },
) => {
  const accepted = await retryLostRaces(() => accept(runtime, input.token));
  identify?.({ teamId: accepted.team.id, memberId: accepted.team_member.id });
  return accepted;
};

/**
 * `POST /v1/team-members/{id}`; then the tokens minted on behalf of members are narrowed to what they hold now
 * (`narrowMemberTokens`).
 */
export const updateTeamMember: OperationHandler<Operations['updateTeamMember']> = async (
  { id, ...changes },
  { runtime, principal },
) => {
  const result = await retryLostRaces(() => update(runtime, principal, id, changes));
  await narrowMemberTokens(runtime.store, principal.teamId);
  return result;
};

/** `DELETE /v1/team-members/{id}`: removes the member, then revokes the tokens minted on their behalf. */
export const removeTeamMember: OperationHandler<Operations['removeTeamMember']> = async (
  input,
  { runtime, principal },
) => {
  const member = await retryLostRaces(() => remove(runtime, principal, input.id));
  await revokeMemberTokens(runtime.store, runtime.clock, principal.teamId, member.id);
  return member;
};

/** Every handler of the team members module. */
export const teamMembersHandlers = {
  listTeamMembers,
  getTeamMember,
  inviteTeamMember,
  acceptTeamInvitation,
  updateTeamMember,
  removeTeamMember,
} satisfies HandlersOf<typeof teamMembersModule>;
