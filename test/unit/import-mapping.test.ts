/**
 * The pure part of a Stripe import (DESIGN D34): the D15 state a Stripe Subscription arrives in, with Stripe's periods,
 * and the plan a Price makes, or why each is skipped.
 */
import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { importedPlanId, planItemOf, planOfPrice, stateOfSubscription } from '../../shared/domain/imports/mapping.js';
import { Uuid } from '../../shared/schemas/common.js';

const START = 1_780_000_000;
const END = START + 30 * 86_400;

function price(fields: Record<string, unknown> = {}): Stripe.Price {
  return {
    id: 'price_1',
    product: { id: 'prod_1', name: 'Club' },
    currency: 'usd',
    unit_amount: 900,
    billing_scheme: 'per_unit',
    nickname: null,
    recurring: { interval: 'month', interval_count: 1, usage_type: 'licensed', trial_period_days: null },
    ...fields,
  } as unknown as Stripe.Price;
}

function subscription(fields: Record<string, unknown> = {}, items = 1): Stripe.Subscription {
  const item = { id: 'si_1', price: price(), current_period_start: START, current_period_end: END };
  return {
    id: 'sub_1',
    status: 'active',
    cancel_at_period_end: false,
    cancel_at: null,
    pause_collection: null,
    start_date: START,
    created: START,
    trial_end: null,
    items: { data: Array.from({ length: items }, () => item) },
    ...fields,
  } as unknown as Stripe.Subscription;
}

describe('stateOfSubscription', () => {
  it('keeps Stripe’s status and periods, and maps cancelling and paused collection to D15', () => {
    const status = (fields: Record<string, unknown>) => {
      const state = stateOfSubscription(subscription(fields));
      return 'skip' in state ? state.skip : state.status;
    };
    expect(stateOfSubscription(subscription())).toEqual({
      status: 'active',
      startMs: START * 1000,
      periodStartMs: START * 1000,
      periodEndMs: END * 1000,
      trialEndMs: null,
      cancelAtPeriodEnd: false,
    });
    expect(status({ status: 'trialing', trial_end: END })).toBe('trialing');
    expect(status({ status: 'past_due' })).toBe('past_due');
    expect(status({ status: 'unpaid' })).toBe('unpaid');
    expect(status({ cancel_at_period_end: true })).toBe('pending_cancellation');
    expect(status({ cancel_at: END })).toBe('pending_cancellation');
    expect(status({ pause_collection: { behavior: 'void' } })).toBe('paused');
    expect(status({ status: 'paused' })).toBe('paused');
    expect(status({ status: 'canceled' })).toBe('ended at Stripe (canceled)');
    expect(status({ status: 'incomplete_expired' })).toBe('ended at Stripe (incomplete_expired)');
    expect(status({ status: 'incomplete' })).toMatch(/first payment never succeeded/);
  });

  it('skips a subscription of several items', () => {
    expect(stateOfSubscription(subscription({}, 2))).toEqual({
      skip: '2 items: only single-price subscriptions are imported',
    });
  });
});

describe('planItemOf', () => {
  const metered = price({
    id: 'price_metered',
    recurring: { interval: 'month', interval_count: 1, usage_type: 'metered', trial_period_days: null },
  });
  const itemsOf = (...prices: Stripe.Price[]) =>
    subscription({
      items: {
        data: prices.map((each, index) => ({
          id: `si_${index}`,
          price: each,
          current_period_start: START + index,
          current_period_end: END + index,
        })),
      },
    });
  const makesPlan = (each: Stripe.Price) => !('skip' in planOfPrice(each));

  it('picks the one item whose price has a plan and ignores the others with the reason', () => {
    const chosen = planItemOf(itemsOf(metered, price()), makesPlan);
    expect(chosen).toMatchObject({
      item: { id: 'si_1' },
      ignored: [{ item: { id: 'si_0' }, reason: expect.stringMatching(/^price price_metered has no plan: metered/) }],
    });
    // The periods come from the plan item.
    const item = (chosen as { item: Stripe.SubscriptionItem }).item;
    expect(stateOfSubscription(itemsOf(metered, price()), item)).toMatchObject({ periodStartMs: (START + 1) * 1000 });
  });

  it('skips several plan items (multiple_plans) and no plan item (no_plan)', () => {
    expect(planItemOf(itemsOf(price(), price({ id: 'price_2' })), makesPlan)).toEqual({
      skip: expect.stringMatching(/^multiple_plans: the prices price_1, price_2 /),
    });
    expect(planItemOf(itemsOf(metered), makesPlan)).toEqual({ skip: expect.stringMatching(/^no_plan: .*metered/) });
  });
});

describe('planOfPrice', () => {
  it('makes a plan of a recurring per-unit price, named after its product', () => {
    expect(planOfPrice(price({ nickname: 'Monthly' }))).toMatchObject({
      productId: 'prod_1',
      request: { name: 'Club \u2013 Monthly', amount: 900, currency: 'USD', interval: 'month', interval_count: 1 },
    });
  });

  it('skips one-time, tiered, metered and daily prices, with the reason', () => {
    const skip = (fields: Record<string, unknown>) => (planOfPrice(price(fields)) as { skip: string }).skip;
    expect(skip({ recurring: null })).toMatch(/one-time/);
    expect(skip({ unit_amount: null, billing_scheme: 'tiered' })).toMatch(/tiered/);
    expect(skip({ recurring: { interval: 'month', interval_count: 1, usage_type: 'metered' } })).toMatch(/metered/);
    expect(skip({ recurring: { interval: 'day', interval_count: 1, usage_type: 'licensed' } })).toMatch(/daily/);
  });
});

describe('importedPlanId', () => {
  it('is a UUID, the same on every try, and differs per project and price', () => {
    const project = '22222222-2222-4222-8222-222222222222';
    const id = importedPlanId(project, 'price_1');
    expect(Uuid.safeParse(id).success).toBe(true);
    expect(importedPlanId(project, 'price_1')).toBe(id);
    expect(importedPlanId(project, 'price_2')).not.toBe(id);
    expect(importedPlanId('33333333-3333-4333-8333-333333333333', 'price_1')).not.toBe(id);
  });
});
