import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import { isoTime } from '../../clock.js';
import { ProblemError, fieldErrors } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { Store } from '../../store/store.js';
import { teamStore } from '../../store/teams.js';
import type { Item } from '../../store/requests.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { parseStoredTeam } from './record.js';
import { TeamName, type Team } from './schema.js';

/**
 * Persistence and use cases of teams (DESIGN D14, D19): one item per team (`TEAM#<team>`, `TEAM`).
 * `deleted_at` is absent until the team is deleted (soft delete), so conditions can test it.
 */

function toTeam(item: Item): Team {
  const stored = parseStoredTeam(item);
  return { ...stored, updated_at: stored.updated_at ?? stored.created_at, deleted_at: stored.deleted_at ?? null };
}

/**
 * Creates a team with a new UUID (or `id` when given, for the demo seed) and emits `team.created` in the
 * same transaction (DESIGN D6, D19). `onEventsCommitted` wakes the local outbox relay when the caller has
 * one (the CLI and tests have none: the sweeper or the stream finds the event). Throws VALIDATION_FAILED
 * for a name that is empty or longer than 100 characters, CONFLICT when a team with `id` exists.
 */
export async function createTeam(
  store: Store,
  clock: Clock,
  input: { name: string; id?: string },
  options: { onEventsCommitted?: () => void } = {},
): Promise<Team> {
  const name = TeamName.safeParse(input.name);
  if (!name.success)
    throw new ProblemError('VALIDATION_FAILED', 'The team name must have 1–100 characters.', {
      errors: fieldErrors('name', name.error.issues),
    });
  const now = isoTime(clock.nowMs());
  const team: Team = { id: input.id ?? newUuid(), name: name.data, created_at: now, updated_at: now, deleted_at: null };
  const runtime: UnitOfWorkRuntime = { store, clock, eventsCommitted: options.onEventsCommitted ?? (() => undefined) };
  return unitOfWork(runtime, team.id, (tx) => {
    const { deleted_at: _deletedAt, ...stored } = team;
    teamStore.create(tx, stored, () => new ProblemError('CONFLICT', `A team ${team.id} exists already.`));
    tx.emit({ type: 'team.created', projectId: null, data: { team } });
    return team;
  });
}

/** Reads a team (strongly consistent), deleted or not; null when it does not exist. */
export async function findTeam(store: Store, teamId: string): Promise<Team | null> {
  const item = await teamStore.read(store, teamId);
  return item ? toTeam(item) : null;
}

/** Reads a team, deleted or not; throws NOT_FOUND when it does not exist. */
export async function getTeam(store: Store, teamId: string): Promise<Team> {
  const team = await findTeam(store, teamId);
  if (!team) throw new ProblemError('NOT_FOUND', `No team ${teamId}.`);
  return team;
}

/**
 * The principal's team as `GET /v1/teams/current` answers it: always read from the team item (one
 * GetItem), never from the token's snapshot, so a rename shows at once. A token of a deleted team whose
 * revocation has not reached it yet gets AUTHENTICATION_REQUIRED, like a revoked one.
 */
export async function currentTeam(store: Store, principal: Principal): Promise<Team> {
  const team = await findTeam(store, principal.teamId);
  if (!team || team.deleted_at) {
    throw new ProblemError('AUTHENTICATION_REQUIRED', 'The token’s team was deleted.', {
      headers: { 'WWW-Authenticate': 'Bearer realm="membership"' },
    });
  }
  return team;
}

/**
 * Renames the principal's team (`POST /v1/teams/current`, DESIGN D19). No event: the catalogue has no
 * `team.updated`. Tokens keep their minting-time snapshot; nothing reads its name any more (the smoke
 * test reads the team item, {@link currentTeam}). Errors: AUTHENTICATION_REQUIRED when the team was deleted.
 */
export async function renameTeam(runtime: UnitOfWorkRuntime, principal: Principal, name: string): Promise<Team> {
  const current = await currentTeam(runtime.store, principal);
  if (current.name === name) return current;
  const updated: Team = { ...current, name, updated_at: isoTime(runtime.clock.nowMs()) };
  return unitOfWork(runtime, principal.teamId, (tx) => {
    teamStore.rename(
      tx,
      principal.teamId,
      name,
      updated.updated_at,
      () => new ProblemError('CONFLICT', 'The team was deleted meanwhile.'),
    );
    return updated;
  });
}

/**
 * Soft-deletes the principal's team (D19) with `team.deleted`; the caller then closes its tokens (D2) while the outbox
 * still delivers final events. VALIDATION_FAILED when `confirmTeamId` is not the team's id; an already deleted team is
 * returned as is (a retry completes token closing).
 */
export async function deleteTeam(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  confirmTeamId: string,
): Promise<Team> {
  if (confirmTeamId.toLowerCase() !== principal.teamId.toLowerCase()) {
    throw new ProblemError('VALIDATION_FAILED', 'confirm_team_id must be the id of the token’s own team.', {
      errors: [{ path: 'query.confirm_team_id', message: 'Repeat the id that GET /v1/teams/current answers.' }],
    });
  }
  let team = await getTeam(runtime.store, principal.teamId);
  if (!team.deleted_at) {
    const nowIso = isoTime(runtime.clock.nowMs());
    const deleted: Team = { ...team, updated_at: nowIso, deleted_at: nowIso };
    team = await unitOfWork(runtime, principal.teamId, (tx) => {
      teamStore.markDeleted(
        tx,
        principal.teamId,
        nowIso,
        () => new ProblemError('CONFLICT', 'The team was deleted by another request meanwhile.'),
      );
      tx.emit({ type: 'team.deleted', projectId: null, data: { team: deleted } });
      return deleted;
    });
  }
  return team;
}
