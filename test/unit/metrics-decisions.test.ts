/**
 * The pure decisions of metrics (DESIGN D14), without DynamoDB: a recurring price normalised to a month,
 * which subscriptions count in MRR, and what a subscription's or a payment's change adds to the gauges
 * and to its UTC day (active, trialing, past due, MRR, new, churned, revenue, refunds, failed payments).
 */
import { describe, expect, it } from 'vitest';
import {
  monthlyAmount,
  paymentMetricsChange,
  priceOf,
  recurringRevenueOf,
  subscriptionMetricsChange,
  type CountedSubscription,
} from '../../shared/domain/metrics/decisions.js';
import type { Payment } from '../../shared/domain/payments/schema.js';
import { samplePayment } from '../support/payments.js';

const MONTH = { amount: 900, currency: 'EUR', interval: 'month', interval_count: 1 } as const;
const counted = (
  status: CountedSubscription['subscription']['status'],
  fields: Partial<CountedSubscription['subscription']> = {},
  price: CountedSubscription['price'] = MONTH,
): CountedSubscription => ({
  subscription: {
    status,
    ends_at: null,
    payment_provider: 'manual',
    status_changed_at: '2026-03-04T23:59:59.000Z',
    ...fields,
  },
  price,
});
const payment = (fields: Partial<Payment> = {}): Payment =>
  samplePayment('2026-03-01T10:00:00.000Z', { updated_at: '2026-03-02T10:00:00.000Z', ...fields });

describe('monthlyAmount', () => {
  it('normalises a price to one month: a week is 52/12 of a month, a year 12 months, divided by interval_count, rounded', () => {
    expect(monthlyAmount(MONTH)).toBe(900);
    expect(monthlyAmount({ ...MONTH, interval_count: 3 })).toBe(300);
    expect(monthlyAmount({ ...MONTH, interval: 'week' })).toBe(3900);
    expect(monthlyAmount({ ...MONTH, amount: 1200, interval: 'week', interval_count: 2 })).toBe(2600);
    expect(monthlyAmount({ ...MONTH, amount: 1000, interval: 'year' })).toBe(83);
    expect(monthlyAmount({ ...MONTH, interval: 'one_time' })).toBeNull();
  });
});

describe('recurringRevenueOf', () => {
  it('counts active, pending_cancellation and past_due subscriptions billed through a provider, open-ended, on a recurring price', () => {
    for (const status of ['active', 'pending_cancellation', 'past_due'] as const)
      expect(recurringRevenueOf(counted(status))).toEqual({ currency: 'EUR', amount: 900 });
    for (const status of ['trialing', 'pending', 'paused', 'canceled', 'unpaid'] as const)
      expect(recurringRevenueOf(counted(status))).toBeNull();
  });

  it('excludes fixed terms, subscriptions without a provider (creator grants, free plans) and one-off prices', () => {
    expect(recurringRevenueOf(counted('active', { ends_at: '2026-04-01T00:00:00.000Z' }))).toBeNull();
    expect(recurringRevenueOf(counted('active', { payment_provider: null }))).toBeNull();
    expect(recurringRevenueOf(counted('active', {}, { ...MONTH, interval: 'one_time' }))).toBeNull();
    expect(recurringRevenueOf(counted('active', {}, { ...MONTH, amount: 0 }))).toBeNull();
  });
});

describe('priceOf', () => {
  it('answers the subscription’s price version, or the plan’s current terms when it is no longer on record', () => {
    const plan = {
      ...MONTH,
      amount: 1500,
      price_history: [{ ...MONTH, version: 1, access_days: null, effective_from: '2026-01-01T00:00:00.000Z' }],
    };
    expect(priceOf(plan, 1).amount).toBe(900);
    expect(priceOf(plan, 2).amount).toBe(1500);
  });
});

describe('subscriptionMetricsChange', () => {
  it('a creation into active counts active, MRR, its net change and a new subscription on the UTC day of its status change', () => {
    expect(subscriptionMetricsChange(null, counted('active'))).toEqual({
      gauges: { active: 1, mrr_EUR: 900 },
      date: '2026-03-04',
      day: { active_change: 1, new: 1 },
    });
  });

  it('a creation into a setup status counts nothing; starting a trial later is new', () => {
    expect(subscriptionMetricsChange(null, counted('scheduled'))).toEqual({ gauges: {}, date: '2026-03-04', day: {} });
    expect(subscriptionMetricsChange(counted('scheduled'), counted('trialing'))).toEqual({
      gauges: { trialing: 1 },
      date: '2026-03-04',
      day: { new: 1 },
    });
  });

  it('a trial converting is not new again; past due keeps MRR and leaves active; cancellation at period end stays active', () => {
    expect(subscriptionMetricsChange(counted('trialing'), counted('active')).day).toEqual({ active_change: 1 });
    expect(subscriptionMetricsChange(counted('active'), counted('past_due'))).toMatchObject({
      gauges: { active: -1, past_due: 1 },
      day: { active_change: -1 },
    });
    expect(subscriptionMetricsChange(counted('active'), counted('pending_cancellation'))).toMatchObject({
      gauges: {},
      day: {},
    });
  });

  it('ending after having had access is churn; ending before ever having it is not', () => {
    expect(subscriptionMetricsChange(counted('pending_cancellation'), counted('canceled'))).toEqual({
      gauges: { active: -1, mrr_EUR: -900 },
      date: '2026-03-04',
      day: { active_change: -1, churned: 1 },
    });
    expect(subscriptionMetricsChange(counted('paused'), counted('canceled')).day).toEqual({ churned: 1 });
    expect(subscriptionMetricsChange(counted('incomplete'), counted('expired')).day).toEqual({});
    expect(subscriptionMetricsChange(counted('scheduled'), counted('canceled')).day).toEqual({});
  });

  it('a renewal at a new price or a plan change moves MRR alone', () => {
    expect(
      subscriptionMetricsChange(counted('active'), counted('active', {}, { ...MONTH, amount: 1200 })),
    ).toMatchObject({ gauges: { mrr_EUR: 300 }, day: {} });
    expect(
      subscriptionMetricsChange(counted('active'), counted('active', {}, { ...MONTH, currency: 'USD' })).gauges,
    ).toEqual({ mrr_EUR: -900, mrr_USD: 900 });
  });
});

describe('paymentMetricsChange', () => {
  it('a payment recorded succeeded is revenue on its day; recorded failed is a failed payment; pending counts nothing', () => {
    expect(paymentMetricsChange(null, payment({ status: 'succeeded' }))).toEqual({
      gauges: {},
      date: '2026-03-02',
      day: { revenue_EUR: 900 },
    });
    expect(paymentMetricsChange(null, payment({ status: 'failed' })).day).toEqual({ failed_payments: 1 });
    expect(paymentMetricsChange(null, payment()).day).toEqual({});
  });

  it('settling counts the outcome once; refunds count what is newly refunded, revenue stays gross', () => {
    expect(paymentMetricsChange(payment(), payment({ status: 'succeeded' })).day).toEqual({ revenue_EUR: 900 });
    expect(paymentMetricsChange(payment({ status: 'failed' }), payment({ status: 'succeeded' })).day).toEqual({
      revenue_EUR: 900,
    });
    expect(
      paymentMetricsChange(payment({ status: 'succeeded' }), payment({ status: 'succeeded', amount_refunded: 300 }))
        .day,
    ).toEqual({ refunds_EUR: 300 });
    expect(
      paymentMetricsChange(
        payment({ status: 'succeeded', amount_refunded: 300 }),
        payment({ status: 'refunded', amount_refunded: 900 }),
      ).day,
    ).toEqual({ refunds_EUR: 600 });
  });
});
