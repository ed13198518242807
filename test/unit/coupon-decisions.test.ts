import { describe, expect, it } from 'vitest';
import {
  couponSummary,
  discountAfter,
  discountApplies,
  discountedAmount,
  discountOf,
  redemptionRefusal,
} from '../../shared/domain/coupons/decisions.js';
import type { Coupon, PromotionCode } from '../../shared/domain/coupons/schema.js';
import { recurringRevenueOf } from '../../shared/domain/metrics/decisions.js';
import { priceMismatch } from '../../shared/domain/payments/decisions.js';
import { formatPrice } from '../../shared/schemas/common.js';
import { DAY_MS } from '../../shared/clock.js';

const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const PLAN = { id: 'plan-a', amount: 900, currency: 'EUR' };

function coupon(fields: Partial<Coupon> = {}): Coupon {
  return {
    id: 'coupon-1',
    project_id: 'project-1',
    name: 'Launch',
    percent_off: 50,
    amount_off: null,
    currency: null,
    duration: 'once',
    duration_in_months: null,
    max_redemptions: null,
    times_redeemed: 0,
    redeem_by: null,
    applies_to_plans: [],
    status: 'active',
    provider: null,
    promotion_codes: [],
    created_at: iso(T0),
    updated_at: iso(T0),
    ...fields,
  };
}

function code(fields: Partial<PromotionCode> = {}): PromotionCode {
  return {
    id: 'code-1',
    coupon_id: 'coupon-1',
    project_id: 'project-1',
    code: 'LAUNCH50',
    first_time_transaction: false,
    max_redemptions: null,
    times_redeemed: 0,
    expires_at: null,
    status: 'active',
    provider_promotion_code_id: null,
    created_at: iso(T0),
    updated_at: iso(T0),
    ...fields,
  };
}

describe('discounted amounts (minor units)', () => {
  it('rounds a percentage to the nearest minor unit and never goes below zero with an amount off', () => {
    expect(discountedAmount(900, 'EUR', coupon({ percent_off: 50 }))).toBe(450);
    expect(discountedAmount(999, 'EUR', coupon({ percent_off: 33.33 }))).toBe(666);
    expect(discountedAmount(900, 'EUR', coupon({ percent_off: null, amount_off: 200, currency: 'EUR' }))).toBe(700);
    expect(discountedAmount(900, 'EUR', coupon({ percent_off: null, amount_off: 2000, currency: 'EUR' }))).toBe(0);
    expect(discountedAmount(900, 'USD', coupon({ percent_off: null, amount_off: 200, currency: 'EUR' }))).toBe(900);
  });

  it('describes the coupon for people', () => {
    expect(couponSummary(coupon(), formatPrice)).toBe('50% off the first payment');
    expect(couponSummary(coupon({ duration: 'repeating', duration_in_months: 3 }), formatPrice)).toBe(
      '50% off for 3 months',
    );
    expect(
      couponSummary(coupon({ percent_off: null, amount_off: 500, currency: 'EUR', duration: 'forever' }), formatPrice),
    ).toBe('€5.00 off every payment');
  });
});

describe('redemption refusals', () => {
  const refusal = (couponFields: Partial<Coupon>, codeFields: Partial<PromotionCode> = {}, first = true) =>
    redemptionRefusal(coupon(couponFields), code(codeFields), PLAN, T0, first);

  it('accepts a valid code and names why any other is refused', () => {
    expect(refusal({})).toBeNull();
    expect(refusal({ status: 'archived' })).toBe('The code LAUNCH50 is no longer valid.');
    expect(refusal({}, { expires_at: iso(T0) })).toBe('The code LAUNCH50 has expired.');
    expect(refusal({ redeem_by: iso(T0 - 1) })).toBe('The code LAUNCH50 has expired.');
    expect(refusal({}, { max_redemptions: 10, times_redeemed: 10 })).toBe('The code LAUNCH50 has been used up.');
    expect(refusal({ max_redemptions: 1, times_redeemed: 1 })).toBe('The code LAUNCH50 has been used up.');
    expect(refusal({ applies_to_plans: ['plan-b'] })).toBe('The code LAUNCH50 does not apply to this plan.');
    expect(refusal({ percent_off: null, amount_off: 100, currency: 'USD' })).toBe(
      'The code LAUNCH50 does not apply to prices in EUR.',
    );
    expect(refusal({}, { first_time_transaction: true }, false)).toBe(
      'The code LAUNCH50 is for first-time buyers only.',
    );
    expect(refusal({}, { max_redemptions: 10, times_redeemed: 9 })).toBeNull();
  });
});

describe('how long a discount lasts', () => {
  it('a once discount ends with the first period, and is dropped when the next one starts', () => {
    const started = discountOf(coupon(), code(), iso(T0), null);
    expect(started.end).toBeNull();
    const dated = discountAfter(started, iso(T0), iso(T0 + 30 * DAY_MS));
    expect(dated?.end).toBe(iso(T0 + 30 * DAY_MS));
    expect(discountAfter(dated, iso(T0 + 30 * DAY_MS), iso(T0 + 60 * DAY_MS))).toBeNull();
    expect(discountApplies(dated, iso(T0 + 29 * DAY_MS))).toBe(true);
    expect(discountApplies(dated, iso(T0 + 30 * DAY_MS))).toBe(false);
  });

  it('a repeating discount runs for its calendar months; a forever one never ends', () => {
    const repeating = discountOf(coupon({ duration: 'repeating', duration_in_months: 3 }), null, iso(T0), null);
    expect(repeating.end).toBe('2026-06-01T10:00:00.000Z');
    expect(discountAfter(repeating, '2026-05-01T10:00:00.000Z', '2026-06-01T10:00:00.000Z')).toEqual(repeating);
    expect(discountAfter(repeating, '2026-06-01T10:00:00.000Z', '2026-07-01T10:00:00.000Z')).toBeNull();
    const forever = discountOf(coupon({ duration: 'forever' }), code(), iso(T0), iso(T0 + 30 * DAY_MS));
    expect(forever.end).toBeNull();
    expect(discountAfter(forever, iso(T0 + 3650 * DAY_MS), null)).toEqual(forever);
  });
});

describe('money figures with a discount', () => {
  const price = { amount: 900, currency: 'EUR', interval: 'month' as const, interval_count: 1 };
  const subscription = {
    status: 'active' as const,
    ends_at: null,
    payment_provider: 'stripe' as const,
    status_changed_at: iso(T0),
  };
  const discount = discountOf(coupon(), code(), iso(T0), iso(T0 + 30 * DAY_MS));

  it('MRR counts the discounted price while the subscription carries the discount', () => {
    expect(recurringRevenueOf({ subscription: { ...subscription, discount }, price })).toEqual({
      currency: 'EUR',
      amount: 450,
    });
    expect(recurringRevenueOf({ subscription: { ...subscription, discount: null }, price })).toEqual({
      currency: 'EUR',
      amount: 900,
    });
  });

  it('a discounted payment matches its plan while the discount lasts; less than that is flagged', () => {
    const plan = { ...price, price_history: [] };
    const paid = (amount: number) => ({ amount, currency: 'EUR', billing_reason: 'subscription_create' as const });
    expect(priceMismatch(paid(450), { price_version: 1, discount }, plan, true)).toBeNull();
    expect(priceMismatch(paid(450), { price_version: 1, discount: null }, plan, true)).toMatchObject({
      reason: 'amount_below_price',
      expected_amount: 900,
    });
    expect(priceMismatch(paid(400), { price_version: 1, discount }, plan, true)).toMatchObject({
      expected_amount: 450,
    });
  });
});
