import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Clock } from './clock.js';
import { isoTime } from './clock.js';
import { ProblemError } from './errors.js';
import { newUuid } from './ids.js';
import { keys } from './store/keys.js';
import type { Store } from './store/store.js';

/** A team (tenant). Everything else belongs to exactly one team. */
export interface Team {
  id: string;
  name: string;
  created_at: string;
}

/** Creates a team with a new UUID (or `id` when given, for the demo seed). Throws VALIDATION_FAILED for an empty name. */
export async function createTeam(store: Store, clock: Clock, input: { name: string; id?: string }): Promise<Team> {
  const name = input.name.trim();
  if (!name || name.length > 100) {
    throw new ProblemError('VALIDATION_FAILED', 'The team name must have 1–100 characters.', { errors: [{ path: 'name', message: '1–100 characters' }] });
  }
  const team: Team = { id: input.id ?? newUuid(), name, created_at: isoTime(clock.nowMs()) };
  await store.document.send(
    new PutCommand({ TableName: store.tableName, Item: { ...keys.team(team.id), entity: 'team', ...team }, ConditionExpression: 'attribute_not_exists(pk)' }),
  );
  return team;
}

/** Reads a team; throws NOT_FOUND when it does not exist. */
export async function getTeam(store: Store, teamId: string): Promise<Team> {
  const result = await store.document.send(new GetCommand({ TableName: store.tableName, Key: keys.team(teamId) }));
  if (!result.Item) throw new ProblemError('NOT_FOUND', `No team ${teamId}.`);
  return { id: result.Item.id, name: result.Item.name, created_at: result.Item.created_at };
}
