import { SUBSCRIPTION_STATUSES, type SubscriptionStatus } from '../../catalogues/subscription-statuses.js';
import { discountedAmount } from '../coupons/decisions.js';
import type { Payment } from '../payments/schema.js';
import type { Plan, PlanPriceVersion } from '../plans/schema.js';
import type { Subscription } from '../subscriptions/schema.js';

/**
 * The pure decisions of metrics (DESIGN D14): what one change of a subscription or of a payment adds to
 * a scope's gauges and to the day item of its UTC day, as flat counters (attribute name → integer
 * delta; zero deltas left out). Gauges: `active`, `trialing`, `past_due`, `mrr_<CURRENCY>`. Day:
 * `active_change`, `new`, `churned`, `failed_payments`, `revenue_<CURRENCY>`, `refunds_<CURRENCY>`,
 * `discounts_<CURRENCY>`.
 */

/** Integer deltas by counter attribute name. */
export type Counters = Record<string, number>;

/** What one change adds: to the gauges, and to the day item of `date` (UTC, YYYY-MM-DD). */
export interface MetricsDelta {
  gauges: Counters;
  date: string;
  day: Counters;
}

/** The billing terms a subscription is counted at: its price version's. */
export type CountedPrice = Pick<PlanPriceVersion, 'amount' | 'currency' | 'interval' | 'interval_count'>;

/** A subscription with the billing terms it is counted at. */
export interface CountedSubscription {
  subscription: Pick<Subscription, 'status' | 'ends_at' | 'payment_provider' | 'status_changed_at'> &
    Partial<Pick<Subscription, 'discount'>>;
  price: CountedPrice;
}

/** The counter attribute of an amount of one currency: `mrr_EUR`, `revenue_EUR`, `refunds_EUR`, `discounts_EUR`. */
const currencyCounter = (prefix: MoneyCounter, currency: string) => `${prefix}_${currency}`;

/** The money counters, per currency. */
export type MoneyCounter = 'mrr' | 'revenue' | 'refunds' | 'discounts';

/** Statuses counted as `active` (paid up, access granted). */
const ACTIVE: readonly SubscriptionStatus[] = ['active', 'pending_cancellation'];
/** Statuses that count in MRR. */
const RECURRING_REVENUE: readonly SubscriptionStatus[] = ['active', 'pending_cancellation', 'past_due'];
const categoryOf = (status: SubscriptionStatus) =>
  SUBSCRIPTION_STATUSES.find((entry) => entry.value === status)?.category;

/** The UTC day (YYYY-MM-DD) of an ISO 8601 time or epoch milliseconds. */
export const utcDay = (time: string | number) => new Date(time).toISOString().slice(0, 10);

/**
 * The billing terms of `plan` at `priceVersion` (the plan's current terms when that version is no longer on record).
 */
export function priceOf(
  plan: Pick<Plan, 'amount' | 'currency' | 'interval' | 'interval_count' | 'price_history'>,
  priceVersion: number,
): CountedPrice {
  return plan.price_history.find((version) => version.version === priceVersion) ?? plan;
}

/**
 * A recurring price normalised to one month, in the minor unit, rounded to an integer: a week is 52/12
 * of a month, a year 12 months, divided by `interval_count`; null for a one-off (`one_time`) price.
 */
export function monthlyAmount(price: CountedPrice): number | null {
  const monthsPerInterval = { week: 12 / 52, month: 1, year: 12, one_time: null }[price.interval];
  return monthsPerInterval === null ? null : Math.round(price.amount / (monthsPerInterval * price.interval_count));
}

/**
 * The monthly recurring revenue of one subscription, or null when it counts none: counted while
 * `active`, `pending_cancellation` or `past_due`, billed through a payment provider (creator grants and
 * free plans bring none), open-ended (a fixed term, e.g. from an access code, is excluded) and recurring;
 * at the discounted price while it carries a discount (D33).
 */
export function recurringRevenueOf({
  subscription,
  price,
}: CountedSubscription): { currency: string; amount: number } | null {
  if (
    !RECURRING_REVENUE.includes(subscription.status) ||
    subscription.payment_provider === null ||
    subscription.ends_at !== null
  )
    return null;
  const discount = subscription.discount;
  const paid = discount ? { ...price, amount: discountedAmount(price.amount, price.currency, discount) } : price;
  const amount = monthlyAmount(paid);
  return amount ? { currency: price.currency, amount } : null;
}

/** The gauges one subscription holds: 1 in its status's gauge, its MRR. */
function gaugesOf(counted: CountedSubscription | null): Counters {
  if (!counted) return {};
  const status = counted.subscription.status;
  const gauges: Counters = {};
  if (ACTIVE.includes(status)) gauges.active = 1;
  if (status === 'trialing') gauges.trialing = 1;
  if (status === 'past_due') gauges.past_due = 1;
  const revenue = recurringRevenueOf(counted);
  if (revenue) gauges[currencyCounter('mrr', revenue.currency)] = revenue.amount;
  return gauges;
}

/** `after − before` of two counter sets, zero deltas left out. */
function difference(after: Counters, before: Counters): Counters {
  const delta: Counters = {};
  for (const name of new Set([...Object.keys(after), ...Object.keys(before)])) {
    const value = (after[name] ?? 0) - (before[name] ?? 0);
    if (value !== 0) delta[name] = value;
  }
  return delta;
}

/**
 * What a subscription's change adds (`before` null: it is being created), on the UTC day its status
 * changed (`after.status_changed_at`): the gauges' difference; `active_change` (net change of `active`);
 * `new` when it gains access for the first time (from no status or a `setup` one into a status with
 * access); `churned` when it ends (`canceled`, `expired`) from a status other than a `setup` one (it had
 * access).
 */
export function subscriptionMetricsChange(
  before: CountedSubscription | null,
  after: CountedSubscription,
): MetricsDelta {
  const gauges = difference(gaugesOf(after), gaugesOf(before));
  const from = before ? categoryOf(before.subscription.status) : undefined;
  const to = categoryOf(after.subscription.status);
  const day: Counters = {};
  if (gauges.active) day.active_change = gauges.active;
  const neverHadAccess = from === undefined || from === 'setup';
  if (neverHadAccess && (to === 'live' || to === 'at_risk')) day.new = 1;
  if (to === 'ended' && from !== 'ended' && !neverHadAccess) day.churned = 1;
  return { gauges, date: utcDay(after.subscription.status_changed_at), day };
}

/** Payment statuses of a payment that succeeded (a refund in full keeps it gross revenue). */
const SUCCEEDED: readonly Payment['status'][] = ['succeeded', 'refunded'];

/**
 * What a payment's change adds (`before` null: it is being recorded), on the UTC day of the change
 * (`after.updated_at`): `revenue_<CURRENCY>` its amount when it succeeds, `failed_payments` 1 when it
 * fails, `refunds_<CURRENCY>` the amount newly refunded. No gauges.
 */
export function paymentMetricsChange(before: Payment | null, after: Payment): MetricsDelta {
  const day: Counters = {};
  if (SUCCEEDED.includes(after.status) && !(before && SUCCEEDED.includes(before.status))) {
    day[currencyCounter('revenue', after.currency)] = after.amount;
    if (after.discount) day[currencyCounter('discounts', after.currency)] = after.discount.amount;
  }
  if (after.status === 'failed' && before?.status !== 'failed') day.failed_payments = 1;
  const refunded = after.amount_refunded - (before?.amount_refunded ?? 0);
  if (refunded !== 0) day[currencyCounter('refunds', after.currency)] = refunded;
  return { gauges: {}, date: utcDay(after.updated_at), day };
}
