import * as z from 'zod';
import { PAYMENT_PROVIDER_VALUES } from '../../catalogues/payment-providers.js';
import { Currency, ListQuery, Timestamp, Uuid, listOf } from '../../schemas/common.js';

/**
 * The subscription plan's shapes (DESIGN D12, D16, D22): what reads return and events carry (`Plan`,
 * imported by the webhook catalogue, so the payload shape is this one definition) and the requests.
 * Amounts are integers in the currency's minor unit (cents); durations are whole days.
 */

/** Billing intervals (a closed list, written once): recurring `week`/`month`/`year`, or a one-off pass of `access_days`. */
export const PLAN_INTERVALS = ['week', 'month', 'year', 'one_time'] as const;
/** A billing interval (see {@link PLAN_INTERVALS}). */
export type PlanInterval = (typeof PLAN_INTERVALS)[number];

/** Plan statuses: `active` plans are open to new subscriptions, `inactive` ones are closed. */
const PLAN_STATUSES = ['active', 'inactive'] as const;
/** A plan status (see {@link PLAN_STATUSES}). */
export type PlanStatus = (typeof PLAN_STATUSES)[number];

/**
 * Where the plan stands with the project's payment provider (DESIGN D22): `not_synced` (never synced;
 * the project had no provider), `pending` (changed since the last sync, or being synced), `synced`,
 * `failed` (the last sync failed; `sync_error` says why).
 */
const PLAN_SYNC_STATUSES = ['not_synced', 'pending', 'synced', 'failed'] as const;

/** Largest price, in minor units (1,000,000.00 in a two-decimal currency). */
const MAX_PLAN_AMOUNT = 100_000_000;
/** Longest one-off pass and longest trial, in days. */
export const MAX_ACCESS_DAYS = 3650;
/** Longest free trial, in days. */
export const MAX_TRIAL_DAYS = 365;
/** Longest billing period per interval (one year, as payment providers allow): the largest `interval_count`. */
export const MAX_INTERVAL_COUNT: Record<PlanInterval, number> = { week: 52, month: 12, year: 1, one_time: 1 };
/** Most plans one project can hold (bounds the project-delete transaction, DESIGN D14). */
export const MAX_PLANS_PER_PROJECT = 40;
/** Most price versions one plan keeps (a plan beyond it is replaced by a new plan). */
export const MAX_PRICE_VERSIONS = 100;

/** One price version of a plan: the billing terms a subscription keeps until its renewal. */
export const PlanPriceVersion = z
  .object({
    version: z.number().int().positive().describe('1 for the first price; each price change on a plan with subscriptions adds one.'),
    amount: z.number().int().nonnegative().describe('Price in the currency\u2019s minor unit (e.g. cents).'),
    currency: Currency,
    interval: z.enum(PLAN_INTERVALS),
    interval_count: z.number().int().positive(),
    access_days: z.number().int().positive().nullable(),
    effective_from: Timestamp.describe('When this version became the plan\u2019s price.'),
  })
  .meta({ id: 'PlanPriceVersion' });
/** A price version (see {@link PlanPriceVersion}). */
export type PlanPriceVersion = z.infer<typeof PlanPriceVersion>;

/** A subscription plan, as the API returns it and events carry it. */
export const Plan = z
  .object({
    id: Uuid,
    project_id: Uuid,
    name: z.string(),
    description: z.string().nullable(),
    amount: z.number().int().nonnegative().describe('Price in the currency\u2019s minor unit (e.g. cents).'),
    currency: Currency,
    interval: z.enum(PLAN_INTERVALS).describe('Billing interval; `one_time` is a single payment for `access_days` of access.'),
    interval_count: z.number().int().positive().describe('Intervals per billing period (1 for one_time).'),
    access_days: z.number().int().positive().nullable().describe('Days of access a one_time plan grants; null for recurring plans.'),
    trial_days: z.number().int().nonnegative().describe('Free trial length in days (0: none).'),
    status: z.enum(PLAN_STATUSES).describe('`active`: open to new subscriptions; `inactive`: closed.'),
    price_version: z.number().int().positive().describe('The current price version (see price_history).'),
    price_history: z.array(PlanPriceVersion).describe('Every price version still on record, oldest first; the last is the current price.'),
    sync_status: z.enum(PLAN_SYNC_STATUSES).describe('Where the plan stands with the payment provider.'),
    payment_provider: z.enum(PAYMENT_PROVIDER_VALUES).nullable().describe('The provider of the last sync, or null.'),
    provider_product_id: z.string().nullable().describe('The product id in the provider\u2019s catalogue, after a sync.'),
    provider_price_id: z.string().nullable().describe('The current price\u2019s id in the provider\u2019s catalogue, after a sync.'),
    synced_at: Timestamp.nullable().describe('When the last successful sync finished.'),
    sync_error: z.string().nullable().describe('Why the last sync failed; null after a success.'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Plan' });
/** A plan (see {@link Plan}). */
export type Plan = z.infer<typeof Plan>;

/** A page of plans. */
export const PlanList = listOf(Plan, 'PlanList');

/** `{id}` path parameters of a plan. */
export const PlanIdParams = z.object({ id: Uuid.describe('The plan id.') }).strict();

/** `{project_id}` path parameters of a project's plans. */
export const PlanProjectParams = z.object({ project_id: Uuid.describe('The project the plans belong to.') }).strict();

const PlanName = z.string().trim().min(1).max(100);
const PlanDescription = z.string().max(1000);
const Amount = z.number().int().min(0).max(MAX_PLAN_AMOUNT);
const IntervalCount = z.number().int().min(1).max(52);
const AccessDays = z.number().int().min(1).max(MAX_ACCESS_DAYS);
const TrialDays = z.number().int().min(0).max(MAX_TRIAL_DAYS);

/**
 * Body of `POST /v1/projects/{project_id}/plans` (and the `create_plan` tool's arguments besides
 * `project_id`). Cross-field rules (checked by the use case, VALIDATION_FAILED): `one_time` needs
 * `access_days` and takes no trial; recurring plans take no `access_days`; `interval_count` at most
 * 52 weeks, 12 months or 1 year.
 */
export const CreatePlanRequest = z
  .object({
    name: PlanName.describe('Plan name, 1 to 100 characters.'),
    description: PlanDescription.optional().describe('Optional description, up to 1000 characters.'),
    amount: Amount.describe(`Price in the currency\u2019s minor unit (e.g. cents), 0 to ${MAX_PLAN_AMOUNT}.`),
    currency: Currency.describe('ISO 4217 currency code, upper case (e.g. USD).'),
    interval: z.enum(PLAN_INTERVALS).describe('Billing interval: week, month, year, or one_time (a single payment for access_days).'),
    interval_count: IntervalCount.optional().describe('Intervals per billing period (default 1): at most 52 weeks, 12 months or 1 year; 1 for one_time.'),
    access_days: AccessDays.optional().describe(`Days of access of a one_time plan, 1 to ${MAX_ACCESS_DAYS} (required for one_time; not allowed otherwise).`),
    trial_days: TrialDays.optional().describe(`Free trial length in days, 0 to ${MAX_TRIAL_DAYS} (default 0; recurring plans only).`),
    status: z.enum(PLAN_STATUSES).optional().describe('active (default) opens the plan to new subscriptions; inactive creates it closed.'),
  })
  .strict()
  .meta({ id: 'CreatePlanRequest' });
/** A validated plan creation (see {@link CreatePlanRequest}). */
export type CreatePlanRequest = z.infer<typeof CreatePlanRequest>;

/**
 * Body of `POST /v1/plans/{id}` (and the `update_plan` tool's arguments besides `id`). A price change
 * (`amount`, `currency`, `interval`, `interval_count`, `access_days`) on a plan with subscriptions adds
 * a price version; `status` activates or deactivates it.
 */
export const UpdatePlanRequest = z
  .object({
    name: PlanName.optional().describe('New name, 1 to 100 characters.'),
    description: PlanDescription.nullable().optional().describe('New description, up to 1000 characters; null clears it.'),
    amount: Amount.optional().describe('New price in the minor unit; on a plan with subscriptions this adds a price version.'),
    currency: Currency.optional().describe('New ISO 4217 currency code, upper case.'),
    interval: z.enum(PLAN_INTERVALS).optional().describe('New billing interval.'),
    interval_count: IntervalCount.optional().describe('New number of intervals per billing period.'),
    access_days: AccessDays.nullable().optional().describe('New access length of a one_time plan; null when switching to a recurring interval.'),
    trial_days: TrialDays.optional().describe('New free trial length in days.'),
    status: z.enum(PLAN_STATUSES).optional().describe('active opens the plan to new subscriptions, inactive closes it (same as activate / deactivate).'),
  })
  .strict()
  .meta({ id: 'UpdatePlanRequest' });
/** A validated plan update (see {@link UpdatePlanRequest}). */
export type UpdatePlanRequest = z.infer<typeof UpdatePlanRequest>;

/** Query of `GET /v1/projects/{project_id}/plans` (and the `list_plans` tool's arguments besides `project_id`). */
export const ListPlansQuery = ListQuery.extend({
  status: z.enum(PLAN_STATUSES).optional().describe('Only plans with this status.'),
}).strict();
/** A validated plan list query (see {@link ListPlansQuery}). */
export type ListPlansQuery = z.infer<typeof ListPlansQuery>;
