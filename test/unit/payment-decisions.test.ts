/**
 * The pure decisions of payments (DESIGN D15, D16), without DynamoDB: the D15 trigger a payment's outcome
 * fires, a settlement (and its refusal naming the payment's status), the mismatch of a reported payment with its
 * plan's price and its acceptance, and the refundable amount.
 */
import { describe, expect, it } from 'vitest';
import {
  decideAcceptance,
  decideSettlement,
  paymentTrigger,
  priceMismatch,
  refundAmount,
} from '../../shared/domain/payments/decisions.js';
import type { Payment } from '../../shared/domain/payments/schema.js';
import { reservedAmount } from '../../shared/domain/payments/refund-reservations.js';
import { samplePayment } from '../support/payments.js';
import { thrownProblem } from '../support/problems.js';

const NOW = '2026-01-01T00:00:00.000Z';
const payment = (fields: Partial<Payment> = {}): Payment => samplePayment(NOW, fields);

describe('paymentTrigger', () => {
  it('a succeeded first payment activates a pending subscription; a failed renewal makes an active one past_due', () => {
    expect(paymentTrigger({ status: 'succeeded', billing_reason: 'subscription_create' }, { status: 'pending' })).toBe(
      'payment_succeeded',
    );
    expect(paymentTrigger({ status: 'failed', billing_reason: 'renewal' }, { status: 'active' })).toBe(
      'payment_failed',
    );
  });

  it('moves nothing for a manual payment, a first payment of a live subscription or a failed first payment', () => {
    expect(paymentTrigger({ status: 'succeeded', billing_reason: 'manual' }, { status: 'active' })).toBeNull();
    expect(
      paymentTrigger({ status: 'succeeded', billing_reason: 'subscription_create' }, { status: 'active' }),
    ).toBeNull();
    expect(
      paymentTrigger({ status: 'failed', billing_reason: 'subscription_create' }, { status: 'pending' }),
    ).toBeNull();
  });
});

describe('decideSettlement', () => {
  it('settles a pending renewal to succeeded and renews the active subscription', () => {
    const later = '2026-01-02T00:00:00.000Z';
    const { next, decision } = decideSettlement(payment(), { status: 'active' }, 'succeeded', later);
    expect(next).toMatchObject({ status: 'succeeded', updated_at: later });
    expect(decision).toEqual({ trigger: 'payment_succeeded' });
  });

  it('refuses a payment that is not pending: CONFLICT naming its status', () => {
    const error = thrownProblem(() =>
      decideSettlement(payment({ status: 'succeeded' }), { status: 'active' }, 'failed', NOW),
    );
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain('is succeeded: only a pending payment can be settled');
  });
});

describe('priceMismatch', () => {
  const version = (number: number, amount: number, currency = 'EUR') => ({
    version: number,
    amount,
    currency,
    interval: 'month' as const,
    interval_count: 1,
    access_days: null,
    effective_from: NOW,
  });
  // Price version 1 was 900 EUR; the plan now asks 1200 EUR (version 2).
  const plan = {
    amount: 1200,
    currency: 'EUR',
    interval: 'month' as const,
    interval_count: 1,
    price_history: [version(1, 900), version(2, 1200)],
  };
  const onVersion1 = { price_version: 1 };

  it('flags another currency whatever the amount, and a first payment below its price version', () => {
    expect(
      priceMismatch({ amount: 1, currency: 'JPY', billing_reason: 'subscription_create' }, onVersion1, plan, true),
    ).toEqual({ expected_amount: 900, expected_currency: 'EUR', reason: 'currency' });
    expect(
      priceMismatch({ amount: 90_000, currency: 'JPY', billing_reason: 'renewal' }, onVersion1, plan, false),
    ).toEqual({ expected_amount: 1200, expected_currency: 'EUR', reason: 'currency' });
    expect(
      priceMismatch({ amount: 899, currency: 'EUR', billing_reason: 'subscription_create' }, onVersion1, plan, true),
    ).toEqual({ expected_amount: 900, expected_currency: 'EUR', reason: 'amount_below_price' });
  });

  it('accepts the price, more (tax), a renewal at the price subscribed at, and any amount when it is not checked', () => {
    const first = { currency: 'EUR', billing_reason: 'subscription_create' as const };
    expect(priceMismatch({ ...first, amount: 900 }, onVersion1, plan, true)).toBeNull();
    expect(priceMismatch({ ...first, amount: 1080 }, onVersion1, plan, true)).toBeNull();
    const renewal = { currency: 'EUR', billing_reason: 'renewal' as const };
    expect(priceMismatch({ ...renewal, amount: 900 }, onVersion1, plan, true)).toBeNull();
    expect(priceMismatch({ ...renewal, amount: 899 }, onVersion1, plan, true)).toMatchObject({
      expected_amount: 900,
      reason: 'amount_below_price',
    });
    expect(priceMismatch({ ...renewal, amount: 120 }, onVersion1, plan, false)).toBeNull();
  });
});

describe('decideAcceptance', () => {
  const flagged = payment({
    status: 'succeeded',
    billing_reason: 'subscription_create',
    mismatch: { expected_amount: 900, expected_currency: 'EUR', reason: 'amount_below_price' },
  });

  it('clears the flag and fires the trigger the payment would have fired', () => {
    const later = '2026-01-02T00:00:00.000Z';
    const { next, decision } = decideAcceptance(flagged, { status: 'pending' }, later);
    expect(next).toMatchObject({ mismatch: null, status: 'succeeded', updated_at: later });
    expect(decision).toEqual({ trigger: 'payment_succeeded' });
    expect(decideAcceptance(flagged, { status: 'incomplete_expired' }, later).decision).toBeNull();
  });

  it('refuses a payment that is not flagged or not succeeded: CONFLICT naming its state', () => {
    const plain = thrownProblem(() => decideAcceptance(payment({ status: 'succeeded' }), { status: 'active' }, NOW));
    expect(plain.code).toBe('CONFLICT');
    expect(plain.message).toContain('is succeeded and not flagged');
    const refunded = thrownProblem(() =>
      decideAcceptance({ ...flagged, status: 'refunded' }, { status: 'active' }, NOW),
    );
    expect(refunded.message).toContain('is refunded: only a flagged succeeded payment can be accepted');
  });
});

describe('refundAmount', () => {
  it('defaults to what is left, refuses more than that and a payment that is not succeeded', () => {
    const paid = payment({ status: 'succeeded', amount_refunded: 300 });
    expect(refundAmount(paid, paid.id, {})).toBe(600);
    expect(thrownProblem(() => refundAmount(paid, paid.id, { amount: 601 })).code).toBe('VALIDATION_FAILED');
    const refunded = thrownProblem(() => refundAmount(payment({ status: 'refunded' }), paid.id, {}));
    expect(refunded.code).toBe('CONFLICT');
    expect(refunded.message).toContain('is refunded: it is already refunded in full');
  });
});

describe('reservedAmount (refunds in flight)', () => {
  const hour = 3_600_000;
  const item = {
    pk: 'p',
    sk: 's',
    refund_reservations: { a: { amount: 300, reserved_at_ms: 0 }, b: { amount: 200, reserved_at_ms: 20 * hour } },
  };
  it('sums live reservations, leaves out the caller’s own and those older than 24 hours', () => {
    expect(reservedAmount(item, hour)).toBe(500);
    expect(reservedAmount(item, hour, 'a')).toBe(200);
    expect(reservedAmount(item, 25 * hour)).toBe(200);
    expect(reservedAmount({ pk: 'p', sk: 's' }, hour)).toBe(0);
  });
});
