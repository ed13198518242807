/**
 * The pure part of the Stripe event mapping (DESIGN D15, D16): which D15 change a Stripe
 * subscription's state asks of ours (`stripeSubscriptionDecision`), and our billing reason of a Stripe
 * invoice's (`billingReasonOf`). No I/O.
 */
import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { billingReasonOf, stripeSubscriptionDecision } from '../../shared/domain/payments/stripe-events.js';
import type { Plan } from '../../shared/domain/plans/schema.js';
import type { Subscription } from '../../shared/domain/subscriptions/schema.js';
import { stripeSubscription } from '../support/stripe.js';

const plan = (id: string, amount: number) =>
  ({ id, amount, interval: 'month', interval_count: 1, access_days: null }) as unknown as Plan;
const gold = plan('00000000-0000-4000-8000-00000000000a', 900);
const platinum = plan('00000000-0000-4000-8000-00000000000b', 1900);
const bronze = plan('00000000-0000-4000-8000-00000000000c', 300);
const ours = (status: Subscription['status']) => ({ status, plan_id: gold.id }) as Subscription;
const theirs = (state: Omit<Parameters<typeof stripeSubscription>[0], 'id'>) =>
  stripeSubscription({ id: 'sub_1', ...state }) as Stripe.Subscription;
const decide = (
  state: Omit<Parameters<typeof stripeSubscription>[0], 'id'>,
  status: Subscription['status'],
  target: Plan | null = null,
  deleted = false,
) => stripeSubscriptionDecision(theirs(state), deleted, ours(status), gold, target);

describe('stripeSubscriptionDecision', () => {
  it('maps Stripe statuses, cancel at period end, pause collection and price changes to one D15 trigger', () => {
    expect(decide({ status: 'canceled' }, 'active')).toEqual({ trigger: 'cancel', reason: 'cancellation_requested' });
    expect(decide({}, 'active', null, true)?.trigger).toBe('cancel');
    expect(decide({ status: 'incomplete_expired' }, 'pending')).toEqual({ trigger: 'incomplete_expired' });
    expect(decide({ status: 'unpaid' }, 'past_due')).toEqual({ trigger: 'retries_exhausted' });
    expect(decide({ paused: true }, 'active')).toEqual({ trigger: 'pause' });
    expect(decide({ status: 'paused' }, 'active')).toEqual({ trigger: 'pause' });
    expect(decide({}, 'paused')).toEqual({ trigger: 'resume' });
    expect(decide({ cancelAtPeriodEnd: true }, 'active')).toEqual({ trigger: 'cancel_at_period_end', reason: null });
    expect(decide({}, 'pending_cancellation')).toEqual({ trigger: 'resume' });
    expect(decide({}, 'active', platinum)).toEqual({ trigger: 'upgrade', newPlan: platinum });
    expect(decide({}, 'active', bronze)).toEqual({ trigger: 'downgrade', newPlan: bronze });
  });

  it('asks nothing when ours already matches Stripe', () => {
    expect(decide({}, 'active')).toBeNull();
    expect(decide({}, 'active', gold)).toBeNull();
    expect(decide({ status: 'canceled' }, 'canceled')).toBeNull();
    expect(decide({ status: 'unpaid' }, 'unpaid')).toBeNull();
    expect(decide({ paused: true }, 'paused')).toBeNull();
    expect(decide({ cancelAtPeriodEnd: true }, 'pending_cancellation')).toBeNull();
  });
});

describe('billingReasonOf', () => {
  it('keeps subscription_create and manual; every other Stripe reason is a renewal', () => {
    expect(billingReasonOf('subscription_create')).toBe('subscription_create');
    expect(billingReasonOf('manual')).toBe('manual');
    for (const reason of ['subscription_cycle', 'subscription_update', 'subscription_threshold', null] as const)
      expect(billingReasonOf(reason)).toBe('renewal');
  });
});
