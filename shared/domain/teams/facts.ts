import { defineFacts } from '../define-facts.js';

/** Teams' abilities and keys (DESIGN D14): team data lives under `TEAM#<team uuid>`; the team item is `TEAM` in it. */
export const teamsFacts = defineFacts({
  abilities: {
    category: 'team',
    label: 'Team and team members',
    entries: [
      {
        value: 'team:view',
        description: 'Read the team the token is scoped to.',
        roles: ['developer', 'analyst', 'support', 'viewer'],
      },
      { value: 'team:update', description: 'Change the team\u2019s name and settings.', roles: [] },
      { value: 'team:delete', description: 'Delete the team.', roles: [], ownerOnly: true },
    ],
  },
  keys: {
    team: (teamId: string) => ({ pk: `TEAM#${teamId}`, sk: 'TEAM' }),
    teamPartition: (teamId: string) => `TEAM#${teamId}`,
  },
  entity: { team: 'team' },
});
