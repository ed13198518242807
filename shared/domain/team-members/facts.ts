import { defineFacts } from '../define-facts.js';

/**
 * Team members' abilities and keys (DESIGN D14, D19): items in the team's partition, plus a claim item
 * that keeps a member's e-mail unique per team (keyed by a SHA-256 of the normalized address, never the
 * address). An invitation lives in a partition of its own, found by the id inside the invitation token:
 * the public accept route knows no team until it has read it.
 */
export const teamMembersFacts = defineFacts({
  abilities: {
    category: 'team',
    entries: [
      {
        value: 'team-member:view-any',
        description: 'List the members of the team.',
        roles: ['developer', 'analyst', 'viewer'],
      },
      { value: 'team-member:invite', description: 'Invite a person to the team.', roles: [] },
      { value: 'team-member:update', description: 'Change a team member\u2019s role.', roles: [] },
      { value: 'team-member:remove', description: 'Remove a member from the team.', roles: [] },
    ],
  },
  keys: {
    teamMember: (teamId: string, memberId: string) => ({ pk: `TEAM#${teamId}`, sk: `TEAM_MEMBER#${memberId}` }),
    teamMemberEmail: (teamId: string, emailSha256: string) => ({
      pk: `TEAM#${teamId}`,
      sk: `TEAM_MEMBER_EMAIL#${emailSha256}`,
    }),
    teamInvitation: (invitationId: string) => ({ pk: `INVITATION#${invitationId}`, sk: 'INVITATION' }),
  },
  sortKeyPrefix: { teamMember: 'TEAM_MEMBER#' },
  entity: { teamMember: 'team_member', teamMemberEmail: 'team_member_email', teamInvitation: 'team_invitation' },
});
