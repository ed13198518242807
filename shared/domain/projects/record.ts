import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Team } from '../teams/schema.js';
import { Project, ProjectPaymentProvider } from './schema.js';

/**
 * A project item as stored (`TEAM#<team>`, `PROJECT#<uuid>`; DESIGN D6, D14, D16, D22): the public
 * fields, those added after the first projects were stored absent on older items (`description`,
 * `bot`, `payment_provider`, `resources`, `archived_at`, `time_zone`) and a provider connected before modes existed
 * without `livemode`. Its bookkeeping is parsed by the schemas below (`plan_ids`,
 * `live_subscription_count`) and by `revisionOf` (`revision`).
 */
const StoredProject = z.extend(
  z.partial(Project, { description: true, bot: true, resources: true, archived_at: true, time_zone: true }),
  {
    payment_provider: z.optional(z.nullable(z.partial(ProjectPaymentProvider, { livemode: true }))),
  },
);

/** Parses a project item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredProject = recordParser(entity.project, StoredProject);

/** The project-to-team item as stored (`PROJECT#<uuid>#TEAM`, DESIGN D26): the team of a project. */
const StoredProjectTeam = z.object({ team_id: Team.shape.id });

/** Parses a project-to-team item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredProjectTeam = recordParser(entity.projectTeam, StoredProjectTeam);

/** The id of a project item, for existence checks (throws StoredRecordError naming its key when it does not match). */
export const parseStoredProjectId = recordParser(entity.project, z.pick(Project, { id: true }));

/**
 * A project item's plans as stored: `plan_ids`, a string set (absent when empty) kept by the plans use cases with
 * `ADD`/`DELETE`.
 */
const StoredProjectPlans = z.object({ plan_ids: z.optional(z.union([z.set(z.string()), z.array(z.string())])) });

/** Parses a project item's plans (throws StoredRecordError naming its key when it does not match). */
export const parseStoredProjectPlans = recordParser(entity.project, StoredProjectPlans);

/**
 * A project or plan item's live-subscription counter as stored: `live_subscription_count`, kept with `ADD` by the
 * subscriptions use cases (absent when never counted).
 */
const StoredLiveSubscriptions = z.object({ live_subscription_count: z.optional(z.number().check(z.int())) });

/**
 * Parses a project or plan item's live-subscription counter (throws StoredRecordError naming its key when it does not
 * match).
 */
export const parseStoredLiveSubscriptions = recordParser(
  `${entity.project} or ${entity.plan}`,
  StoredLiveSubscriptions,
);
