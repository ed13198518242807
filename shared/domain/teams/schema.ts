import * as z from 'zod';
import { Timestamp, Uuid } from '../../schemas/common.js';

/** A team (tenant), as `GET /v1/teams/current` returns it. Everything else belongs to exactly one team. */
export const Team = z.object({ id: Uuid, name: z.string(), created_at: Timestamp }).meta({ id: 'Team' });
/** A team (see {@link Team}). */
export type Team = z.infer<typeof Team>;

/** A team name: 1–100 characters after trimming. */
export const TeamName = z.string().trim().min(1).max(100).describe('Team name, 1 to 100 characters.');
