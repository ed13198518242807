import type { Clock } from '../../clock.js';
import { isoTime } from '../../clock.js';
import { ProblemError, fieldErrors } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { entity, keys } from '../../store/keys.js';
import { ConditionFailedError, type Store } from '../../store/store.js';
import { TeamName, type Team } from './schema.js';

/**
 * Creates a team with a new UUID (or `id` when given, for the demo seed). Throws VALIDATION_FAILED for a
 * name that is empty or longer than 100 characters, CONFLICT when a team with `id` exists.
 */
export async function createTeam(store: Store, clock: Clock, input: { name: string; id?: string }): Promise<Team> {
  const name = TeamName.safeParse(input.name);
  if (!name.success) throw new ProblemError('VALIDATION_FAILED', 'The team name must have 1–100 characters.', { errors: fieldErrors('name', name.error.issues) });
  const team: Team = { id: input.id ?? newUuid(), name: name.data, created_at: isoTime(clock.nowMs()) };
  try {
    await store.put({ Item: { ...keys.team(team.id), entity: entity.team, ...team }, ConditionExpression: 'attribute_not_exists(pk)' });
  } catch (error) {
    if (error instanceof ConditionFailedError) throw new ProblemError('CONFLICT', `A team ${team.id} exists already.`);
    throw error;
  }
  return team;
}

/** Reads a team; null when it does not exist. */
export async function findTeam(store: Store, teamId: string): Promise<Team | null> {
  const item = await store.get(keys.team(teamId));
  return item ? { id: item.id as string, name: item.name as string, created_at: item.created_at as string } : null;
}

/** Reads a team; throws NOT_FOUND when it does not exist. */
export async function getTeam(store: Store, teamId: string): Promise<Team> {
  const team = await findTeam(store, teamId);
  if (!team) throw new ProblemError('NOT_FOUND', `No team ${teamId}.`);
  return team;
}
