import { AUTHENTICATED, defineModule, defineOperation } from '../../operations/definition.js';
import { teamsInternalOperations } from './internal-operations.js';
import { DeleteTeamQuery, Team, UpdateTeamRequest } from './schema.js';

/** The team operations (DESIGN D13, D19). */
export const teamsModule = defineModule({
  folder: 'teams',
  operations: {
    getCurrentTeam: defineOperation({
      id: 'getCurrentTeam',
      summary: 'The team the token is scoped to (smoke test: any valid token, no ability needed).',
      tag: 'Teams',
      ability: AUTHENTICATED,
      teamWide: false,
      output: Team,
      events: [],
      rest: { method: 'GET', path: '/v1/teams/current', successStatus: 200 },
      tool: { name: 'get_team', title: 'Get team', kind: 'read', description: 'Read the team the token is scoped to.' },
    }),
    updateCurrentTeam: defineOperation({
      id: 'updateCurrentTeam',
      summary: 'Rename the token’s team.',
      tag: 'Teams',
      ability: 'team:update',
      teamWide: true,
      body: UpdateTeamRequest,
      output: Team,
      events: [],
      rest: { method: 'POST', path: '/v1/teams/current', successStatus: 200 },
    }),
    deleteCurrentTeam: defineOperation({
      id: 'deleteCurrentTeam',
      summary:
        'Delete the token’s team (emits team.deleted): its tokens stop working; its final events are still delivered.',
      tag: 'Teams',
      ability: 'team:delete',
      teamWide: true,
      query: DeleteTeamQuery,
      output: Team,
      events: ['team.deleted'],
      rest: { method: 'DELETE', path: '/v1/teams/current', successStatus: 200 },
    }),
  },
  internal: teamsInternalOperations,
});
