import * as z from '../../schemas/zod.js';
import { Timestamp, Uuid, listOf } from '../../schemas/common.js';

/**
 * Import shapes (DESIGN D34): a creator's import of their connected Stripe account into plans, subscribers and
 * subscriptions, run as a job in the background, one Stripe page per step; the job reports its counts as it runs.
 */

/** An import's statuses: `queued` (no page read yet), `running`, `succeeded` (every page done), `failed`. */
export const IMPORT_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;

/** The kinds an import maps, in the order it reads them from Stripe: prices → plans, customers, subscriptions. */
export const IMPORT_KINDS = ['plans', 'subscribers', 'subscriptions'] as const;
/** One kind of an import (see {@link IMPORT_KINDS}). */
export type ImportKind = (typeof IMPORT_KINDS)[number];

/** What an import did (or, in a dry run, would do) with one Stripe object. */
export const IMPORT_OUTCOMES = ['created', 'updated', 'mapped', 'unchanged', 'skipped'] as const;
/** One outcome (see {@link IMPORT_OUTCOMES}). */
export type ImportOutcome = (typeof IMPORT_OUTCOMES)[number];

/** The most skipped items an import lists (the counts go on). */
export const MAX_LISTED_SKIPS = 50;

/** The body of `POST /v1/projects/{project_id}/imports`. */
export const CreateImportRequest = z
  .strictObject({
    source: z.literal('stripe').check(z.describe('Where to import from: the project\u2019s connected Stripe account.')),
    dry_run: z
      ._default(z.boolean(), false)
      .check(z.describe('Report what would be created, mapped, updated and skipped, and change nothing.')),
    plan_mapping: z
      .optional(z.record(z.string().check(z.regex(/^price_[A-Za-z0-9_]{1,200}$/)), Uuid))
      .check(
        z.describe(
          'Stripe price id → an existing plan of the project: subscriptions on that price join the plan instead of a new plan made from the price.',
        ),
      ),
  })
  .register(z.globalRegistry, {
    id: 'CreateImportRequest',
    examples: [{ source: 'stripe', dry_run: true }],
  });
/** A validated import request (see {@link CreateImportRequest}). */
export type CreateImportRequest = z.infer<typeof CreateImportRequest>;

const Count = z.number().check(z.int(), z.gte(0));
/** The counts of one kind. */
const KindCounts = z.object({
  created: Count,
  updated: Count,
  mapped: Count.check(
    z.describe('Joined to an existing plan (plan_mapping, or a plan already synced with the price).'),
  ),
  unchanged: Count.check(z.describe('Already imported and equal to Stripe.')),
  skipped: Count,
});

/** A skipped Stripe object and why. */
export const ImportSkip = z.object({
  kind: z.enum(IMPORT_KINDS),
  stripe_id: z.string(),
  reason: z.string(),
});
/** A skipped Stripe object (see {@link ImportSkip}). */
export type ImportSkip = z.infer<typeof ImportSkip>;

/** An import job (DESIGN D34). */
export const Import = z
  .object({
    id: Uuid,
    project_id: Uuid,
    source: z.literal('stripe'),
    dry_run: z.boolean(),
    status: z.enum(IMPORT_STATUSES),
    counts: z
      .object({
        plans: KindCounts,
        subscribers: KindCounts,
        subscriptions: KindCounts,
        subscription_items: z.object({
          ignored: Count.check(
            z.describe(
              'Items of imported subscriptions left out because their price has no plan (e.g. metered add-ons); each is listed in `skipped` while the list has room.',
            ),
          ),
        }),
      })
      .check(z.describe('Progress per kind (in a dry run: what would happen); read it again while running.')),
    skipped: z
      .array(ImportSkip)
      .check(z.describe(`The first ${MAX_LISTED_SKIPS} skipped Stripe objects with the reason.`)),
    cursor: z
      .nullable(z.object({ kind: z.enum(IMPORT_KINDS), starting_after: z.nullable(z.string()) }))
      .check(z.describe('Where the next page starts (Stripe\u2019s `starting_after`); null when done.')),
    error: z.nullable(z.string()).check(z.describe('Why a failed import stopped.')),
    created_at: Timestamp,
    completed_at: z.nullable(Timestamp),
  })
  .register(z.globalRegistry, { id: 'Import' });
/** An import job (see {@link Import}). */
export type Import = z.infer<typeof Import>;

/** A page of imports, newest first. */
export const ImportList = listOf(Import, 'ImportList');

/** `{project_id}` path parameters of the imports. */
export const ImportProjectParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project of the imports.')),
});

/** `{project_id}/{import_id}` path parameters of one import. */
export const ImportIdParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project of the import.')),
  import_id: Uuid.check(z.describe('The import id.')),
});
