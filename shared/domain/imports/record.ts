import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import {
  IMPORT_KINDS,
  IMPORT_OUTCOMES,
  IMPORT_STATUSES,
  ImportSkip,
  type Import,
  type ImportKind,
  type ImportOutcome,
} from './schema.js';

/** The attribute of one count: `<kind>_<outcome>`, e.g. `subscriptions_created` (a top-level number, grown by ADD). */
export function countAttribute(kind: ImportKind, outcome: ImportOutcome): string {
  return `${kind}_${outcome}`;
}

const countShape = Object.fromEntries(
  IMPORT_KINDS.flatMap((kind) => IMPORT_OUTCOMES.map((outcome) => [countAttribute(kind, outcome), z.number()])),
);

/** The attribute counting the ignored items of imported subscriptions (grown by ADD; absent on older jobs: 0). */
export const IGNORED_ITEMS_ATTRIBUTE = 'subscription_items_ignored';

/**
 * An import job as stored (`keys.importJob`, DESIGN D34, D14): the public fields with the counts as top-level numbers,
 * its team, the plan mapping, the phase (`kind`) and Stripe cursor of the next page, and the pages done (the guard of
 * each progress write, so a repeated page message records nothing twice).
 */
const StoredImportRecord = z.object({
  id: z.string(),
  team_id: z.string(),
  project_id: z.string(),
  dry_run: z.boolean(),
  status: z.enum(IMPORT_STATUSES),
  plan_mapping: z.record(z.string(), z.string()),
  kind: z.nullable(z.enum(IMPORT_KINDS)),
  starting_after: z.nullable(z.string()),
  pages: z.number().check(z.int(), z.nonnegative()),
  skipped: z.array(ImportSkip),
  error: z.nullable(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  completed_at: z.nullable(z.string()),
  ...countShape,
  [IGNORED_ITEMS_ATTRIBUTE]: z.optional(z.number()),
});

/** An import job as stored (see {@link StoredImportRecord}); counts are read with {@link countAttribute}. */
export type StoredImport = z.output<typeof StoredImportRecord> & Record<string, unknown>;

/** Parses an import job item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredImport = recordParser(entity.importJob, StoredImportRecord) as (item: unknown) => StoredImport;

/** Zero for every count attribute (a new job's). */
export function zeroCounts(): Record<string, number> {
  return Object.fromEntries([...Object.keys(countShape), IGNORED_ITEMS_ATTRIBUTE].map((name) => [name, 0]));
}

/** The public view of a stored job. */
export function publicImport(job: StoredImport): Import {
  const counts = (kind: ImportKind) =>
    Object.fromEntries(IMPORT_OUTCOMES.map((outcome) => [outcome, Number(job[countAttribute(kind, outcome)] ?? 0)]));
  return {
    id: job.id,
    project_id: job.project_id,
    source: 'stripe',
    dry_run: job.dry_run,
    status: job.status,
    counts: {
      plans: counts('plans'),
      subscribers: counts('subscribers'),
      subscriptions: counts('subscriptions'),
      subscription_items: { ignored: Number(job[IGNORED_ITEMS_ATTRIBUTE] ?? 0) },
    } as Import['counts'],
    skipped: job.skipped,
    cursor: job.kind ? { kind: job.kind, starting_after: job.starting_after } : null,
    error: job.error,
    created_at: job.created_at,
    completed_at: job.completed_at,
  };
}
