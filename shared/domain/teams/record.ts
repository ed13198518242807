import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Team } from './schema.js';

/**
 * A team item as stored (`TEAM#<team>`, `TEAM`; DESIGN D14, D19): the public fields, `deleted_at`
 * absent until the team is deleted and `updated_at` absent on teams stored before it existed.
 */
const StoredTeam = z.object({
  id: Team.shape.id,
  name: Team.shape.name,
  created_at: Team.shape.created_at,
  updated_at: z.optional(Team.shape.updated_at),
  deleted_at: z.optional(Team.shape.deleted_at),
});

/** Parses a team item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredTeam = recordParser(entity.team, StoredTeam);
