import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Role } from './schema.js';

/**
 * A role item of the team's own as stored (`ROLE#<uuid>`, DESIGN D14, D19): the public fields
 * (`built_in` is always false for a stored role and is not read), its concurrency `version` and its
 * `assignment_count` (both absent = 0).
 */
const StoredRole = z.extend(z.omit(z.partial(Role, { description: true, project_ids: true }), { built_in: true }), {
  version: z.optional(z.number()),
  assignment_count: z.optional(z.number()),
});

/** Parses a role item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredRole = recordParser(entity.role, StoredRole);
