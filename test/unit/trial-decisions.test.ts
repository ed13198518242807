/**
 * The pure decisions of trials (DESIGN D33): a plan's card choice in its terms (one_time plans refuse a card-less
 * trial; switching to one_time resets it), the trial days a checkout starts and a completed session started, the
 * Checkout Session parameters of a trial with and without a card, and the used-trial refusal the join page recognises.
 */
import { describe, expect, it } from 'vitest';
import { ProblemError } from '../../shared/errors.js';
import { checkoutTrialDays, isTrialUsed, trialUsedConflict } from '../../shared/domain/checkout-sessions/checkout.js';
import { sessionTrialDays } from '../../shared/domain/payments/stripe-checkout-events.js';
import { resolveTerms } from '../../shared/domain/plans/decisions.js';
import type { CheckoutSessionRequest } from '../../shared/providers/payment-provider.js';
import { checkoutSessionParams } from '../../shared/providers/stripe-checkout.js';

const monthly = { amount: 900, currency: 'EUR', interval: 'month' as const, trial_days: 7 };

describe('a plan\u2019s trial card choice (resolveTerms)', () => {
  it('defaults to required, keeps a recurring plan\u2019s choice, and resets it when the plan becomes one_time', () => {
    expect(resolveTerms(monthly).trial_payment_method_required).toBe(true);
    const cardless = resolveTerms({ ...monthly, trial_payment_method_required: false });
    expect(cardless.trial_payment_method_required).toBe(false);
    expect(resolveTerms({ amount: 1000 }, cardless).trial_payment_method_required).toBe(false);
    const pass = resolveTerms({ interval: 'one_time', access_days: 30 }, cardless);
    expect(pass).toMatchObject({ trial_days: 0, trial_payment_method_required: true });
  });

  it('refuses a card-less trial on a one_time plan, naming the field', () => {
    let refused: unknown;
    try {
      resolveTerms({ amount: 500, interval: 'one_time', access_days: 30, trial_payment_method_required: false });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ProblemError);
    expect((refused as ProblemError).code).toBe('VALIDATION_FAILED');
    expect((refused as ProblemError).errors?.map((error) => error.path)).toEqual(['trial_payment_method_required']);
  });
});

describe('trial days of a checkout', () => {
  it('are the plan\u2019s unless the caller buys without the trial or the plan is one_time', () => {
    expect(checkoutTrialDays({ interval: 'month', trial_days: 7 }, undefined)).toBe(7);
    expect(checkoutTrialDays({ interval: 'month', trial_days: 7 }, true)).toBe(7);
    expect(checkoutTrialDays({ interval: 'month', trial_days: 7 }, false)).toBe(0);
    expect(checkoutTrialDays({ interval: 'one_time', trial_days: 7 }, true)).toBe(0);
  });

  it('of a completed session come from its metadata, else from the plan (sessions created before the metadata)', () => {
    const plan = { interval: 'month' as const, trial_days: 7 };
    expect(sessionTrialDays({ mode: 'subscription', metadata: { trial_days: '0' } }, plan)).toBe(0);
    expect(sessionTrialDays({ mode: 'subscription', metadata: { trial_days: '14' } }, plan)).toBe(14);
    expect(sessionTrialDays({ mode: 'subscription', metadata: {} }, plan)).toBe(7);
    expect(sessionTrialDays({ mode: 'subscription', metadata: { trial_days: 'x' } }, plan)).toBe(7);
    expect(sessionTrialDays({ mode: 'payment', metadata: { trial_days: '7' } }, plan)).toBe(0);
  });
});

describe('Checkout Session parameters of a trial', () => {
  const request: CheckoutSessionRequest = {
    team_id: 'team',
    project_id: 'project',
    plan_id: 'plan',
    provider_price_id: 'price_1',
    mode: 'subscription',
    trial_days: 7,
    trial_payment_method_required: true,
    customer_email: 'reader@example.com',
    client_reference_id: null,
    success_url: 'https://members.example/ok',
    cancel_url: 'https://members.example/back',
    promotion_code: null,
    provider_promotion_code_id: null,
    allow_promotion_codes: false,
    idempotency_key: 'checkout-1',
  };

  it('with a card: the trial only (Stripe collects the card by default)', () => {
    const params = checkoutSessionParams(request);
    expect(params.subscription_data).toEqual({
      metadata: { project_id: 'project', plan_id: 'plan' },
      trial_period_days: 7,
    });
    expect(params.payment_method_collection).toBeUndefined();
    expect(params.metadata).toEqual({ project_id: 'project', plan_id: 'plan', trial_days: '7' });
    expect(params.customer_email).toBe('reader@example.com');
  });

  it('without a card: if_required collection and a trial that cancels when it ends without a payment method', () => {
    const params = checkoutSessionParams({ ...request, trial_payment_method_required: false });
    expect(params.payment_method_collection).toBe('if_required');
    expect(params.subscription_data).toMatchObject({
      trial_period_days: 7,
      trial_settings: { end_behavior: { missing_payment_method: 'cancel' } },
    });
  });

  it('without a trial, the card choice changes nothing', () => {
    const params = checkoutSessionParams({ ...request, trial_days: 0, trial_payment_method_required: false });
    expect(params.payment_method_collection).toBeUndefined();
    expect(params.subscription_data).toEqual({ metadata: { project_id: 'project', plan_id: 'plan' } });
    expect(params.metadata).toMatchObject({ trial_days: '0' });
  });
});

describe('the used-trial refusal', () => {
  it('is a CONFLICT naming trial: false that the join page recognises, unlike other conflicts', () => {
    const refusal = trialUsedConflict('plan-1');
    expect(refusal.code).toBe('CONFLICT');
    expect(refusal.detail).toContain('trial: false');
    expect(isTrialUsed(refusal)).toBe(true);
    expect(isTrialUsed(new ProblemError('CONFLICT', 'Plan plan-1 is inactive.'))).toBe(false);
    expect(isTrialUsed({ code: 'VALIDATION_FAILED', errors: [{ path: 'trial' }] })).toBe(false);
  });
});
