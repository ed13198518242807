import * as z from '../../schemas/zod.js';
import { defineEvent } from '../define-facts.js';
import { Team } from '../teams/schema.js';
import { TeamMember } from './schema.js';

const id = () => z.uuid().check(z.describe('UUID.'));
const teamMemberData = z.object({ team: Team, team_member: TeamMember });

/** Team members' webhook events (`team.member_*`): membership changes. */
export const teamMembersEvents = [
  defineEvent(
    'team.member_invited',
    'team-member:view-any',
    false,
    teamMemberData,
    'A person was invited to the team (the member is `invited`; never the invitation token).',
  ),
  defineEvent('team.member_joined', 'team-member:view-any', false, teamMemberData, 'A person joined the team.'),
  defineEvent(
    'team.member_removed',
    'team-member:view-any',
    false,
    teamMemberData,
    'A member left or was removed from the team.',
  ),
  defineEvent(
    'team.member_role_changed',
    'team-member:view-any',
    false,
    z.object({
      team: Team,
      team_member: TeamMember,
      previous_role_ids: z.array(id()).check(z.describe('The roles the member held directly before the change.')),
      previous_group_ids: z.array(id()).check(z.describe('The groups the member was in before the change.')),
    }),
    'A team member\u2019s roles or groups changed.',
  ),
] as const;
