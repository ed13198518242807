import * as z from '../../schemas/zod.js';
import { NameText, Timestamp, Uuid } from '../../schemas/common.js';

/**
 * A team (tenant), as `GET /v1/teams/current` returns it and `team.*` events carry it (DESIGN D19).
 * Everything else belongs to exactly one team. `deleted_at` is set once the team is deleted (soft delete:
 * its tokens stop working, its final events are still delivered).
 */
export const Team = z
  .object({
    id: Uuid,
    name: z.string(),
    created_at: Timestamp,
    updated_at: Timestamp,
    deleted_at: z.nullable(Timestamp).check(z.describe('When the team was deleted; null while it is in service.')),
  })
  .register(z.globalRegistry, { id: 'Team' });
/** A team (see {@link Team}). */
export type Team = z.infer<typeof Team>;

/** A team name: 1–100 characters after trimming. */
export const TeamName = NameText().check(z.describe('Team name, 1 to 100 characters.'));

/** Body of `POST /v1/teams/current` (rename the team). */
export const UpdateTeamRequest = z
  .strictObject({ name: TeamName.check(z.describe('The new team name, 1 to 100 characters.')) })
  .register(z.globalRegistry, { id: 'UpdateTeamRequest' });

/**
 * Query of `DELETE /v1/teams/current`: the team's own id, repeated as a guard against deleting a team by
 * mistake (the team is still taken from the token, never from the request).
 */
export const DeleteTeamQuery = z.strictObject({
  confirm_team_id: Uuid.check(
    z.describe('The id of the token’s own team (from GET /v1/teams/current), repeated to confirm the deletion.'),
  ),
});
