import * as z from '../../schemas/zod.js';
import { defineEvent } from '../define-facts.js';
import { Team } from './schema.js';

const teamData = z.object({ team: Team });

/** The team's webhook events (`team.*`): create and delete. */
export const teamsEvents = [
  defineEvent('team.created', 'team:view', false, teamData, 'A team was created.'),
  defineEvent('team.deleted', 'team:view', false, teamData, 'A team was deleted.'),
] as const;
