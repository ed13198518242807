import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Team } from '../teams/schema.js';
import { Project, ProjectPaymentProvider } from './schema.js';

/**
 * A project item as stored (`TEAM#<team>`, `PROJECT#<uuid>`; DESIGN D6, D14, D16, D22): the public
 * fields, those added after the first projects were stored absent on older items (`description`,
 * `bot`, `payment_provider`, `resources`, `archived_at`) and a provider connected before modes existed
 * without `livemode`. Its bookkeeping (`revision`, `plan_ids`, `live_subscription_count`) is read from
 * the item by the writes, not here.
 */
const StoredProject = z.extend(z.partial(Project, { description: true, bot: true, resources: true, archived_at: true }), {
  payment_provider: z.optional(z.nullable(z.partial(ProjectPaymentProvider, { livemode: true }))),
});

/** Parses a project item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredProject = recordParser(entity.project, StoredProject);

/** The project-to-team item as stored (`PROJECT#<uuid>#TEAM`, DESIGN D26): the team of a project. */
const StoredProjectTeam = z.object({ team_id: Team.shape.id });

/** Parses a project-to-team item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredProjectTeam = recordParser(entity.projectTeam, StoredProjectTeam);

/** The id of a project item, for existence checks (throws StoredRecordError naming its key when it does not match). */
export const parseStoredProjectId = recordParser(entity.project, z.pick(Project, { id: true }));
