import { defineModule, defineOperation } from '../../operations/definition.js';
import { Team } from './schema.js';

/** The team operations (DESIGN D13). */
export const teamsModule = defineModule({
  folder: 'teams',
  operations: {
    getCurrentTeam: defineOperation({
      id: 'getCurrentTeam',
      summary: 'The team the token is scoped to (smoke test).',
      tag: 'Teams',
      ability: 'team:view',
      teamWide: false,
      output: Team,
      events: [],
      rest: { method: 'GET', path: '/v1/teams/current', successStatus: 200 },
      tool: { name: 'get_team', title: 'Get team', kind: 'read', description: 'Read the team the token is scoped to.' },
    }),
  },
});
