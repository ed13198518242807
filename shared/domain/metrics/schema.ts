import * as z from '../../schemas/zod.js';
import { Currency, Timestamp, Uuid } from '../../schemas/common.js';

/**
 * The shapes of a project's or a team's metrics (`GET /v1/projects/{id}/metrics`, `GET /v1/metrics`): gauges
 * kept as counters and daily rollups written in the same transactions as the changes they count, so a read
 * is O(days), never O(subscribers). Amounts are integers in the currency's MINOR unit; money fields are null
 * for a caller without `project-payment:view-any`.
 */

/** Days in the daily series (oldest first, the last entry is today in UTC). */
export const METRICS_SERIES_DAYS = 90;
/** Days in the "recent" window of `new`, `churned`, `revenue`, `refunds` and `failed_payments`. */
export const METRICS_RECENT_DAYS = 30;

/** An amount of one currency, in its minor unit. */
export const CurrencyAmount = z.object({
  currency: Currency,
  amount: z.number().check(z.int(), z.describe('In the currency\u2019s minor unit (e.g. cents).')),
});
/** An amount of one currency (see {@link CurrencyAmount}). */
export type CurrencyAmount = z.infer<typeof CurrencyAmount>;

/**
 * Amounts per currency, sorted by currency code; an empty list when there are none; null without
 * `project-payment:view-any`.
 */
const MoneyPerCurrency = z.nullable(z.array(CurrencyAmount));

/** One UTC day of the daily series. */
export const MetricsDay = z.object({
  date: z
    .string()
    .check(
      z.regex(/^\d{4}-\d{2}-\d{2}$/),
      z.describe('The UTC day, YYYY-MM-DD.'),
      z.meta({ examples: ['2026-11-27'] }),
    ),
  active: z
    .number()
    .check(
      z.int(),
      z.nonnegative(),
      z.describe('Active subscriptions (`active` or `pending_cancellation`) at the end of the day (now, for today).'),
    ),
  revenue: MoneyPerCurrency.check(z.describe('Gross revenue of payments that succeeded that day, per currency.')),
});
/** One day of the series (see {@link MetricsDay}). */
export type MetricsDay = z.infer<typeof MetricsDay>;

/** A project's metrics, or the team's (every project summed) when `project_id` is null. */
export const Metrics = z
  .object({
    object: z.literal('metrics'),
    project_id: z.nullable(Uuid).check(z.describe('The project, or null for the whole team.')),
    as_of: Timestamp.check(z.describe('When the figures were read.')),
    subscriptions: z.object({
      active: z
        .number()
        .check(
          z.int(),
          z.nonnegative(),
          z.describe('Subscriptions in `active` or `pending_cancellation` (paid up, access granted).'),
        ),
      trialing: z.number().check(z.int(), z.nonnegative(), z.describe('Subscriptions in `trialing`.')),
      past_due: z
        .number()
        .check(
          z.int(),
          z.nonnegative(),
          z.describe('Subscriptions in `past_due` (a renewal failed; access continues).'),
        ),
    }),
    mrr: MoneyPerCurrency.check(
      z.describe(
        'Monthly recurring revenue per currency: each `active`, `pending_cancellation` or `past_due` subscription of a recurring plan (week, month, year) at its price normalised to one month (a week is 52/12 of a month). One-off plans (`one_time`) and fixed-term subscriptions (from access codes) are excluded; trials count from their first payment.',
      ),
    ),
    last_30_days: z.object({
      new: z
        .number()
        .check(
          z.int(),
          z.nonnegative(),
          z.describe('Subscriptions that first gained access (entered `trialing` or `active`) in the last 30 days.'),
        ),
      churned: z
        .number()
        .check(
          z.int(),
          z.nonnegative(),
          z.describe('Subscriptions that ended (`canceled`, `expired`) after having had access, in the last 30 days.'),
        ),
      revenue: MoneyPerCurrency.check(
        z.describe('Gross revenue: payments that succeeded in the last 30 days, per currency, before refunds.'),
      ),
      refunds: MoneyPerCurrency.check(z.describe('Amounts refunded in the last 30 days, per currency.')),
      discounts: MoneyPerCurrency.check(
        z.describe('Amounts coupons took off the payments that succeeded in the last 30 days, per currency.'),
      ),
      failed_payments: z
        .number()
        .check(z.int(), z.nonnegative(), z.describe('Payments that failed in the last 30 days.')),
    }),
    daily: z.array(MetricsDay).check(z.describe('The last 90 UTC days, oldest first; the last entry is today.')),
  })
  .register(z.globalRegistry, { id: 'Metrics' });
/** A project's or the team's metrics (see {@link Metrics}). */
export type Metrics = z.infer<typeof Metrics>;
