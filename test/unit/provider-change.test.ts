/**
 * Which provider call a subscription change needs (DESIGN D27), without a provider: D15 triggers mapped
 * to Stripe's `subscriptions.update` / `.cancel` parameters, the resume of a pause versus the resume of a
 * scheduled cancellation, the proration per plan-change direction, and the refusal of a plan not synced.
 */
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../shared/domain/plans/schema.js';
import { newSubscription } from '../../shared/domain/subscriptions/creation.js';
import { providerChangeOf } from '../../shared/domain/subscriptions/provider-change.js';
import type { Subscription } from '../../shared/domain/subscriptions/schema.js';
import { stripeSubscriptionUpdate } from '../../shared/providers/stripe-params.js';
import { thrownProblem } from '../support/problems.js';

const PROJECT = '00000000-0000-4000-8000-000000000001';
const NOW = Date.parse('2026-01-01T00:00:00Z');
const plan = (id: string, amount: number, extra: Partial<Plan> = {}) =>
  ({
    id,
    project_id: PROJECT,
    status: 'active',
    currency: 'EUR',
    amount,
    interval: 'month',
    interval_count: 1,
    access_days: null,
    trial_days: 0,
    price_version: 1,
    payment_provider: 'stripe',
    provider_price_id: `price_${amount}`,
    ...extra,
  }) as Plan;
const gold = plan('00000000-0000-4000-8000-00000000000a', 900);
const platinum = plan('00000000-0000-4000-8000-00000000000b', 1900);
const billed = (status: Subscription['status'] = 'active'): Subscription => ({
  ...newSubscription({
    projectId: PROJECT,
    subscriberId: '00000000-0000-4000-8000-000000000002',
    plan: gold,
    source: 'provider',
    nowMs: NOW,
    startMs: NOW,
    trialEndMs: null,
    endsAtMs: null,
  }),
  payment_provider: 'stripe',
  status,
});

describe('providerChangeOf', () => {
  it('maps cancel, cancel at period end and pause to their provider changes', () => {
    expect(providerChangeOf(billed(), { trigger: 'cancel' })).toEqual({ kind: 'cancel' });
    expect(providerChangeOf(billed(), { trigger: 'cancel_at_period_end' })).toEqual({ kind: 'cancel_at_period_end' });
    expect(providerChangeOf(billed(), { trigger: 'pause' })).toEqual({ kind: 'pause' });
  });

  it('resumes collection after a pause, and keeps the subscription when a scheduled cancellation is withdrawn', () => {
    expect(providerChangeOf(billed('paused'), { trigger: 'resume' })).toEqual({ kind: 'resume_collection' });
    expect(providerChangeOf(billed('pending_cancellation'), { trigger: 'resume' })).toEqual({ kind: 'keep' });
  });

  it('asks nothing of the provider for triggers that do not bill', () => {
    expect(providerChangeOf(billed(), { trigger: 'suspend' })).toBeNull();
    expect(providerChangeOf(billed('suspended'), { trigger: 'unsuspend' })).toBeNull();
  });

  it('invoices an upgrade at once and changes a downgrade without proration', () => {
    expect(providerChangeOf(billed(), { trigger: 'upgrade', newPlan: platinum })).toEqual({
      kind: 'change_price',
      provider_price_id: 'price_1900',
      proration_behavior: 'always_invoice',
    });
    expect(providerChangeOf(billed(), { trigger: 'downgrade', newPlan: gold })).toEqual({
      kind: 'change_price',
      provider_price_id: 'price_900',
      proration_behavior: 'none',
    });
  });

  it('refuses a plan change to a plan not synced to the subscription’s provider, naming the sync', () => {
    const manual = plan('00000000-0000-4000-8000-00000000000c', 1900, {
      payment_provider: 'manual',
      provider_price_id: 'manual_price',
    });
    const error = thrownProblem(() => providerChangeOf(billed(), { trigger: 'upgrade', newPlan: manual }));
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain(`POST /v1/plans/${manual.id}/sync`);
  });
});

describe('stripeSubscriptionUpdate', () => {
  const id = '00000000-0000-4000-8000-0000000000ff';
  it('turns each change into the update parameters Stripe documents; cancel is not an update', () => {
    const metadata = (kind: string) => ({ subscription_id: id, last_change: kind });
    expect(stripeSubscriptionUpdate({ kind: 'cancel' }, id, null)).toBeNull();
    expect(stripeSubscriptionUpdate({ kind: 'cancel_at_period_end' }, id, null)).toEqual({
      cancel_at_period_end: true,
      metadata: metadata('cancel_at_period_end'),
    });
    expect(stripeSubscriptionUpdate({ kind: 'keep' }, id, null)).toEqual({
      cancel_at_period_end: false,
      metadata: metadata('keep'),
    });
    expect(stripeSubscriptionUpdate({ kind: 'pause' }, id, null)).toEqual({
      pause_collection: { behavior: 'void' },
      metadata: metadata('pause'),
    });
    expect(stripeSubscriptionUpdate({ kind: 'resume_collection' }, id, null)).toEqual({
      pause_collection: '',
      metadata: metadata('resume_collection'),
    });
    expect(
      stripeSubscriptionUpdate(
        { kind: 'change_price', provider_price_id: 'price_2', proration_behavior: 'none' },
        id,
        'si_1',
      ),
    ).toEqual({
      items: [{ id: 'si_1', price: 'price_2' }],
      proration_behavior: 'none',
      metadata: metadata('change_price'),
    });
  });
});
