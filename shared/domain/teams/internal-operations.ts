import { defineInternalOperation } from '../../operations/definition.js';
import * as z from '../../schemas/zod.js';
import { Team, TeamName } from './schema.js';

/**
 * Creating a team (DESIGN D19, D35): the operator's action, run by the operator CLI alone (surface `operator`). It has
 * no caller's team: the new team is identified once created, and its log gets the entry.
 */
export const teamsInternalOperations = {
  createTeam: defineInternalOperation({
    id: 'createTeam',
    summary: 'Create a team (emits team.created).',
    tag: 'Teams',
    ability: null,
    teamWide: false,
    body: z.strictObject({ name: TeamName }),
    output: Team,
    events: ['team.created'],
    write: true,
    lockdown: 'exempt',
  }),
};
