import * as z from '../../schemas/zod.js';
import { Currency, ListQuery, Timestamp, Uuid, listOf } from '../../schemas/common.js';
import { DAY_MS } from '../../clock.js';

/**
 * The creator's own billing with the service (DESIGN D20): the team's tier and its limits, the billing
 * status (grace period, lockdown), invoices. Every constant of the domain is written here once: the
 * tiers, their limits and prices, the statuses, the grace period. The webhook catalogue
 * (`shared/catalogues/webhook-events.ts`) publishes {@link BillingAccount} and {@link BillingInvoice} as
 * the `billing.*` event payloads.
 */

/** The tiers a team can be on (DESIGN D20); a team without a recorded tier is on the first, `free`. */
export const BILLING_TIERS = ['free', 'pro', 'business'] as const;
/** One of {@link BILLING_TIERS}. */
export type BillingTier = (typeof BILLING_TIERS)[number];
/** The tier of a team that never changed it. */
export const DEFAULT_TIER: BillingTier = 'free';

/**
 * The billing status (DESIGN D20): `ok`; `grace_period` — an invoice payment failed, everything keeps
 * working until `grace_period_ends_at`; `locked` — the grace period ended unpaid: creator writes get
 * BILLING_LOCKED (402) until the unpaid invoices are paid, while the subscriber side keeps running.
 */
const BILLING_STATUSES = ['ok', 'grace_period', 'locked'] as const;
/** One of {@link BILLING_STATUSES}. */
export type BillingStatus = (typeof BILLING_STATUSES)[number];

/** What a tier limits (DESIGN D20): objects counted per team, each by an atomic counter on the team item. */
export const USAGE_METRICS = ['projects', 'subscribers', 'webhook_endpoints', 'team_members'] as const;
/** One of {@link USAGE_METRICS}. */
export type UsageMetric = (typeof USAGE_METRICS)[number];

/**
 * The limits of each tier, per metric (DESIGN D20); `null` = no tier limit (webhook endpoints stay
 * capped at 50 per team by D8 whatever the tier). Projects, webhook endpoints and team members are
 * counted while they exist (deleting one frees its place); subscribers are never deleted, so theirs is
 * a total. Team members count invited and active members.
 */
export const TIER_LIMITS = {
  free: { projects: 3, subscribers: 100, webhook_endpoints: 3, team_members: 3 },
  pro: { projects: 20, subscribers: 10_000, webhook_endpoints: 20, team_members: 20 },
  business: { projects: null, subscribers: null, webhook_endpoints: null, team_members: null },
} as const satisfies Record<BillingTier, Record<UsageMetric, number | null>>;

/**
 * The price of one monthly period of each tier, in MINOR units of {@link BILLING_CURRENCY} (cents).
 * A tier priced 0 (`free`) gets no invoices at all.
 */
export const TIER_PRICES = { free: 0, pro: 2_900, business: 9_900 } as const satisfies Record<BillingTier, number>;

/** The currency of the service's own invoices (ISO 4217). */
export const BILLING_CURRENCY = 'USD';

/** How long a team keeps full access after a failed invoice payment before it is locked: 7 days, in MILLISECONDS. */
export const GRACE_PERIOD_MS = 7 * DAY_MS;

/**
 * The statuses of an invoice: `open` until paid (a failed payment leaves it open, with `attempt_count` raised), then
 * `paid`.
 */
const BILLING_INVOICE_STATUSES = ['open', 'paid'] as const;

const count = (what: string) => z.number().check(z.int(), z.nonnegative(), z.describe(what));
const limit = (what: string) =>
  z.nullable(z.number().check(z.int(), z.nonnegative())).check(z.describe(`${what}; null: no limit on this tier.`));

/** A tier's limits, one per {@link USAGE_METRICS} entry (see {@link TIER_LIMITS}). */
const BillingLimits = z
  .object({
    projects: limit('Most projects the team may have'),
    subscribers: limit('Most subscribers the team may create, across its projects'),
    webhook_endpoints: limit('Most webhook endpoints the team may have (50 at most on any tier)'),
    team_members: limit('Most invited and active team members'),
  })
  .register(z.globalRegistry, { id: 'BillingLimits' });
/** A tier's limits (see {@link BillingLimits}). */
type BillingLimits = z.infer<typeof BillingLimits>;

/** What the team uses, per metric (the counters the limits are enforced on). */
export const BillingUsage = z
  .object({
    projects: count('Projects of the team.'),
    subscribers: count('Subscribers created in the team\u2019s projects.'),
    webhook_endpoints: count('Webhook endpoints of the team.'),
    team_members: count('Invited and active team members.'),
  })
  .register(z.globalRegistry, { id: 'BillingUsage' });
/** The team's usage (see {@link BillingUsage}). */
export type BillingUsage = z.infer<typeof BillingUsage>;

const accountShape = {
  team_id: Uuid,
  tier: z.enum(BILLING_TIERS).check(z.describe('The team\u2019s tier.')),
  status: z
    .enum(BILLING_STATUSES)
    .check(
      z.describe(
        '`ok`; `grace_period` after a failed invoice payment; `locked` when the grace period ended unpaid (creator writes get 402 BILLING_LOCKED).',
      ),
    ),
  limits: BillingLimits,
  current_period_start: Timestamp.check(z.describe('Start of the current monthly period.')),
  current_period_end: Timestamp.check(
    z.describe(
      'End of the current monthly period: the next invoice (paid tiers) and the reset of the once-per-period limit notices.',
    ),
  ),
  grace_period_ends_at: z
    .nullable(Timestamp)
    .check(
      z.describe('When the grace period ends (the team is locked then unless it pays); null outside a grace period.'),
    ),
  locked_at: z.nullable(Timestamp).check(z.describe('When the team was locked; null unless `status` is `locked`.')),
};

/**
 * The team's own billing account (the creator's tier with the service; DESIGN D20): the `billing_account` of every
 * `billing.*` event.
 */
export const BillingAccount = z.object(accountShape).register(z.globalRegistry, { id: 'BillingAccount' });
/** The team's billing account (see {@link BillingAccount}). */
export type BillingAccount = z.infer<typeof BillingAccount>;

/** `GET /v1/billing`: the billing account with the team's current usage. */
export const BillingOverview = z
  .object({ ...accountShape, usage: BillingUsage })
  .register(z.globalRegistry, { id: 'BillingOverview' });
/** The answer of `GET /v1/billing` (see {@link BillingOverview}). */
export type BillingOverview = z.infer<typeof BillingOverview>;

/** An invoice of the team's own tier for one monthly period (Stripe Billing's terms: `amount_due`, `attempt_count`). */
export const BillingInvoice = z
  .object({
    id: Uuid,
    team_id: Uuid,
    number: z.string().check(z.describe('Human invoice number, unique per team (e.g. `INV-3F2A9C1B-0001`).')),
    tier: z.enum(BILLING_TIERS).check(z.describe('The tier the invoice charges for.')),
    status: z.enum(BILLING_INVOICE_STATUSES).check(z.describe('`open` until paid; a failed payment leaves it open.')),
    amount_due: z
      .number()
      .check(z.int(), z.nonnegative(), z.describe('Amount in the currency\u2019s minor unit (e.g. cents).')),
    amount_paid: z
      .number()
      .check(z.int(), z.nonnegative(), z.describe('Amount paid, in the currency\u2019s minor unit.')),
    currency: Currency,
    period_start: Timestamp,
    period_end: Timestamp,
    due_at: z
      .nullable(Timestamp)
      .check(z.describe('When payment is due (the period start: invoices are payable on issue).')),
    attempt_count: z.number().check(z.int(), z.nonnegative(), z.describe('Failed payment attempts so far.')),
    last_payment_error: z
      .nullable(z.string())
      .check(z.describe('Why the last payment attempt failed; null when none failed.')),
    paid_at: z.nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'BillingInvoice' });
/** An invoice of the team's own tier (see {@link BillingInvoice}). */
export type BillingInvoice = z.infer<typeof BillingInvoice>;

/** A page of invoices, newest first. */
export const BillingInvoiceList = listOf(BillingInvoice, 'BillingInvoiceList');

/** Query of `GET /v1/billing/invoices`. */
export const ListBillingInvoicesQuery = z.extend(ListQuery, {
  status: z.optional(z.enum(BILLING_INVOICE_STATUSES)).check(z.describe('Only invoices with this status.')),
});
/** Query of `GET /v1/billing/invoices` (see {@link ListBillingInvoicesQuery}). */
export type ListBillingInvoicesQuery = z.infer<typeof ListBillingInvoicesQuery>;

/** Body of `POST /v1/billing/tier`. */
export const ChangeTierRequest = z
  .strictObject({
    tier: z
      .enum(BILLING_TIERS)
      .check(
        z.describe(
          'The tier to move to. Moving from free to a paid tier starts a new monthly period with its invoice at once; between paid tiers the next invoice uses the new price; to free, no more invoices.',
        ),
      ),
  })
  .register(z.globalRegistry, { id: 'ChangeTierRequest' });
/** Body of `POST /v1/billing/tier` (see {@link ChangeTierRequest}). */
export type ChangeTierRequest = z.infer<typeof ChangeTierRequest>;
