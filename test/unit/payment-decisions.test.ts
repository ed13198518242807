/**
 * The pure decisions of payments (DESIGN D15, D16), without DynamoDB: the D15 trigger a payment's outcome
 * fires, a settlement (and its refusal naming the payment's status) and the refundable amount.
 */
import { describe, expect, it } from 'vitest';
import { decideSettlement, paymentTrigger, refundAmount } from '../../shared/domain/payments/decisions.js';
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
