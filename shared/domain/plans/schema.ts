import * as z from '../../schemas/zod.js';
import { PAYMENT_PROVIDER_VALUES } from '../../catalogues/payment-providers.js';
import { Currency, listOf, ListQuery, LongText, NameText, Timestamp, Uuid } from '../../schemas/common.js';

/**
 * The subscription plan's shapes (DESIGN D12, D16, D22): what reads return and events carry (`Plan`,
 * imported by the webhook catalogue, so the payload shape is this one definition) and the requests.
 * Amounts are integers in the currency's minor unit (cents); durations are whole days.
 */

/**
 * Billing intervals (a closed list, written once): recurring `week`/`month`/`year`, or a one-off pass of `access_days`.
 */
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
/** Longest one-off pass, longest trial and longest access an access code grants, in days (10 years). */
export const MAX_ACCESS_DAYS = 3650;
/** Longest free trial, in days. */
export const MAX_TRIAL_DAYS = 365;
/** What `allow_promotion_codes` means (DESIGN D33), written once for the plan and its requests. */
const ALLOW_PROMOTION_CODES_DESCRIPTION =
  'Whether Stripe Checkout lets buyers type a promotion code of the project (Stripe’s allow_promotion_codes); a code given with the checkout applies either way.';

/**
 * What `trial_payment_method_required` means (DESIGN D33), written once for the plan and its requests: Stripe
 * Checkout's `payment_method_collection` (`always` / `if_required`) and what ends a card-less trial.
 */
const TRIAL_CARD_DESCRIPTION =
  'Whether a trial\u2019s checkout asks for a card (default true). false: the buyer may start the trial without one; a trial that ends without a payment method ends the subscription (Stripe `missing_payment_method: cancel`). Meaningful only with trial_days > 0; one_time plans have no trial, so false is refused for them.';
/** Longest grace period, in days: how long a past_due subscription keeps access while its payment is retried. */
export const MAX_GRACE_DAYS = 30;
/** A plan's grace period when none is given (and for plans stored before grace periods), in days. */
export const DEFAULT_GRACE_DAYS = 7;
/** Longest billing period per interval (one year, as payment providers allow): the largest `interval_count`. */
export const MAX_INTERVAL_COUNT: Record<PlanInterval, number> = { week: 52, month: 12, year: 1, one_time: 1 };
/** Most plans one project can hold (bounds the project-delete transaction, DESIGN D14). */
export const MAX_PLANS_PER_PROJECT = 40;
/** Most price versions one plan keeps (a plan beyond it is replaced by a new plan). */
export const MAX_PRICE_VERSIONS = 100;

/** One price version of a plan: the billing terms a subscription keeps until its renewal. */
export const PlanPriceVersion = z
  .object({
    version: z
      .number()
      .check(
        z.int(),
        z.positive(),
        z.describe('1 for the first price; each price change on a plan with subscriptions adds one.'),
      ),
    amount: z
      .number()
      .check(z.int(), z.nonnegative(), z.describe('Price in the currency\u2019s minor unit (e.g. cents).')),
    currency: Currency,
    interval: z.enum(PLAN_INTERVALS),
    interval_count: z.number().check(z.int(), z.positive()),
    access_days: z.nullable(z.number().check(z.int(), z.positive())),
    effective_from: Timestamp.check(z.describe('When this version became the plan\u2019s price.')),
  })
  .register(z.globalRegistry, { id: 'PlanPriceVersion' });
/** A price version (see {@link PlanPriceVersion}). */
export type PlanPriceVersion = z.infer<typeof PlanPriceVersion>;

/** A subscription plan, as the API returns it and events carry it. */
export const Plan = z
  .object({
    id: Uuid,
    project_id: Uuid,
    name: z.string(),
    description: z.nullable(z.string()),
    amount: z
      .number()
      .check(z.int(), z.nonnegative(), z.describe('Price in the currency\u2019s minor unit (e.g. cents).')),
    currency: Currency,
    interval: z
      .enum(PLAN_INTERVALS)
      .check(z.describe('Billing interval; `one_time` is a single payment for `access_days` of access.')),
    interval_count: z
      .number()
      .check(z.int(), z.positive(), z.describe('Intervals per billing period (1 for one_time).')),
    access_days: z
      .nullable(z.number().check(z.int(), z.positive()))
      .check(z.describe('Days of access a one_time plan grants; null for recurring plans.')),
    trial_days: z.number().check(z.int(), z.nonnegative(), z.describe('Free trial length in days (0: none).')),
    trial_payment_method_required: z.boolean().check(z.describe(TRIAL_CARD_DESCRIPTION)),
    allow_promotion_codes: z.boolean().check(z.describe(ALLOW_PROMOTION_CODES_DESCRIPTION)),
    grace_days: z
      .number()
      .check(
        z.int(),
        z.gte(0),
        z.lte(MAX_GRACE_DAYS),
        z.describe(
          'Grace period in days: how long a member whose renewal failed (past_due) keeps access while the payment is retried, before the subscription becomes unpaid (0: at once).',
        ),
      ),
    status: z.enum(PLAN_STATUSES).check(z.describe('`active`: open to new subscriptions; `inactive`: closed.')),
    price_version: z
      .number()
      .check(z.int(), z.positive(), z.describe('The current price version (see price_history).')),
    price_history: z
      .array(PlanPriceVersion)
      .check(z.describe('Every price version still on record, oldest first; the last is the current price.')),
    sync_status: z.enum(PLAN_SYNC_STATUSES).check(z.describe('Where the plan stands with the payment provider.')),
    payment_provider: z
      .nullable(z.enum(PAYMENT_PROVIDER_VALUES))
      .check(z.describe('The provider of the last sync, or null.')),
    provider_product_id: z
      .nullable(z.string())
      .check(z.describe('The product id in the provider\u2019s catalogue, after a sync.')),
    provider_price_id: z
      .nullable(z.string())
      .check(z.describe('The current price\u2019s id in the provider\u2019s catalogue, after a sync.')),
    synced_at: z.nullable(Timestamp).check(z.describe('When the last successful sync finished.')),
    sync_error: z.nullable(z.string()).check(z.describe('Why the last sync failed; null after a success.')),
    platform_role_ids: z
      .optional(z.array(z.string()))
      .check(
        z.describe(
          'Discord: the linked roles (their platform_resource_id) this plan grants; absent: every linked role.',
        ),
      ),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'Plan' });
/** A plan (see {@link Plan}). */
export type Plan = z.infer<typeof Plan>;

/** A page of plans. */
export const PlanList = listOf(Plan, 'PlanList');

/** `{id}` path parameters of a plan. */
export const PlanIdParams = z.strictObject({ id: Uuid.check(z.describe('The plan id.')) });

/** `{project_id}` path parameters of a project's plans. */
export const PlanProjectParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project the plans belong to.')),
});

const PlanName = NameText();
const TrialPaymentMethodRequired = z.boolean();
const PlanDescription = LongText();
const Amount = z.number().check(z.int(), z.gte(0), z.lte(MAX_PLAN_AMOUNT));
const IntervalCount = z.number().check(z.int(), z.gte(1), z.lte(52));
const AccessDays = z.number().check(z.int(), z.gte(1), z.lte(MAX_ACCESS_DAYS));
const TrialDays = z.number().check(z.int(), z.gte(0), z.lte(MAX_TRIAL_DAYS));
const GraceDays = z.number().check(z.int(), z.gte(0), z.lte(MAX_GRACE_DAYS));
/** Most roles a plan names (`platform_role_ids`). */
const MAX_PLAN_ROLES = 20;
const PlatformRoleIds = z
  .array(z.string().check(z.trim(), z.minLength(1), z.maxLength(256)))
  .check(z.maxLength(MAX_PLAN_ROLES));

/**
 * Body of `POST /v1/projects/{project_id}/plans` (and the `create_plan` tool's arguments besides `project_id`).
 * Cross-field rules (checked by the use case, VALIDATION_FAILED): `one_time` needs `access_days` and takes no trial
 * (nor `trial_payment_method_required: false`); recurring plans take no `access_days`; `interval_count` at most 52
 * weeks, 12 months or 1 year.
 */
export const CreatePlanRequest = z
  .strictObject({
    name: PlanName.check(z.describe('Plan name, 1 to 100 characters.')),
    description: z.optional(PlanDescription).check(z.describe('Optional description, up to 1000 characters.')),
    amount: Amount.check(z.describe(`Price in the currency\u2019s minor unit (e.g. cents), 0 to ${MAX_PLAN_AMOUNT}.`)),
    currency: Currency.check(z.describe('ISO 4217 currency code, upper case (e.g. USD).')),
    interval: z
      .enum(PLAN_INTERVALS)
      .check(z.describe('Billing interval: week, month, year, or one_time (a single payment for access_days).')),
    interval_count: z
      .optional(IntervalCount)
      .check(
        z.describe('Intervals per billing period (default 1): at most 52 weeks, 12 months or 1 year; 1 for one_time.'),
      ),
    access_days: z
      .optional(AccessDays)
      .check(
        z.describe(
          `Days of access of a one_time plan, 1 to ${MAX_ACCESS_DAYS} (required for one_time; not allowed otherwise).`,
        ),
      ),
    trial_days: z
      .optional(TrialDays)
      .check(z.describe(`Free trial length in days, 0 to ${MAX_TRIAL_DAYS} (default 0; recurring plans only).`)),
    trial_payment_method_required: z.optional(TrialPaymentMethodRequired).check(z.describe(TRIAL_CARD_DESCRIPTION)),
    allow_promotion_codes: z
      .optional(z.boolean())
      .check(z.describe(`${ALLOW_PROMOTION_CODES_DESCRIPTION} Default false.`)),
    grace_days: z
      .optional(GraceDays)
      .check(
        z.describe(
          `Grace period in days, 0 to ${MAX_GRACE_DAYS} (default ${DEFAULT_GRACE_DAYS}): how long a member whose renewal failed keeps access while the payment is retried; then the subscription becomes unpaid.`,
        ),
      ),
    status: z
      .optional(z.enum(PLAN_STATUSES))
      .check(z.describe('active (default) opens the plan to new subscriptions; inactive creates it closed.')),
    platform_role_ids: z
      .optional(PlatformRoleIds)
      .check(
        z.describe(
          `Discord: the linked roles (platform_resource_id of kind role) this plan grants, at most ${MAX_PLAN_ROLES}; default every linked role.`,
        ),
      ),
  })
  .register(z.globalRegistry, { id: 'CreatePlanRequest' });
/** A validated plan creation (see {@link CreatePlanRequest}). */
export type CreatePlanRequest = z.infer<typeof CreatePlanRequest>;

/**
 * Body of `POST /v1/plans/{id}` (and the `update_plan` tool's arguments besides `id`). A price change
 * (`amount`, `currency`, `interval`, `interval_count`, `access_days`) on a plan with subscriptions adds
 * a price version (`grace_days` is not a price change); `status` activates or deactivates it.
 */
export const UpdatePlanRequest = z
  .strictObject({
    name: z.optional(PlanName).check(z.describe('New name, 1 to 100 characters.')),
    description: z
      .optional(z.nullable(PlanDescription))
      .check(z.describe('New description, up to 1000 characters; null clears it.')),
    amount: z
      .optional(Amount)
      .check(z.describe('New price in the minor unit; on a plan with subscriptions this adds a price version.')),
    currency: z.optional(Currency).check(z.describe('New ISO 4217 currency code, upper case.')),
    interval: z.optional(z.enum(PLAN_INTERVALS)).check(z.describe('New billing interval.')),
    interval_count: z.optional(IntervalCount).check(z.describe('New number of intervals per billing period.')),
    access_days: z
      .optional(z.nullable(AccessDays))
      .check(z.describe('New access length of a one_time plan; null when switching to a recurring interval.')),
    trial_days: z.optional(TrialDays).check(z.describe('New free trial length in days.')),
    trial_payment_method_required: z
      .optional(TrialPaymentMethodRequired)
      .check(z.describe(`From now on: ${TRIAL_CARD_DESCRIPTION}`)),
    allow_promotion_codes: z.optional(z.boolean()).check(z.describe(ALLOW_PROMOTION_CODES_DESCRIPTION)),
    grace_days: z
      .optional(GraceDays)
      .check(
        z.describe(
          `New grace period in days, 0 to ${MAX_GRACE_DAYS}; not a price change. Subscriptions already past_due keep their grace_period_end.`,
        ),
      ),
    status: z
      .optional(z.enum(PLAN_STATUSES))
      .check(
        z.describe('active opens the plan to new subscriptions, inactive closes it (same as activate / deactivate).'),
      ),
    platform_role_ids: z
      .optional(z.nullable(PlatformRoleIds))
      .check(
        z.describe(
          'Discord: the linked roles this plan grants from now on (existing grants are not changed); null: every linked role.',
        ),
      ),
  })
  .register(z.globalRegistry, { id: 'UpdatePlanRequest' });
/** A validated plan update (see {@link UpdatePlanRequest}). */
export type UpdatePlanRequest = z.infer<typeof UpdatePlanRequest>;

/** Query of `GET /v1/projects/{project_id}/plans` (and the `list_plans` tool's arguments besides `project_id`). */
export const ListPlansQuery = z.extend(ListQuery, {
  status: z.optional(z.enum(PLAN_STATUSES)).check(z.describe('Only plans with this status.')),
});
/** A validated plan list query (see {@link ListPlansQuery}). */
export type ListPlansQuery = z.infer<typeof ListPlansQuery>;
