/**
 * A plan's grace period (DESIGN D32, replacing D15's fixed 14 days): a failed renewal sets the subscription's
 * `grace_period_end` to the failure plus the plan's `grace_days`, the clock's `retries_exhausted` is due then, and
 * the field is null whenever the subscription is not past_due. Pure: `applyTrigger` and `nextDueTrigger`.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_GRACE_DAYS, type Plan } from '../../shared/domain/plans/schema.js';
import { newSubscription } from '../../shared/domain/subscriptions/creation.js';
import { applyTrigger, nextDueTrigger } from '../../shared/domain/subscriptions/lifecycle.js';
import { DAY_MS } from '../../shared/clock.js';
import type { Subscription } from '../../shared/domain/subscriptions/schema.js';
import type { SubscriptionTrigger } from '../../shared/domain/subscriptions/state-machine.js';

const PROJECT = '00000000-0000-4000-8000-000000000001';
const START = Date.parse('2026-01-01T00:00:00Z');
/** When the renewal payment fails: a while after the start, not on a day boundary. */
const FAILED_AT = START + 31 * DAY_MS + 3_600_000;

const planWithGrace = (graceDays: number): Plan =>
  ({
    id: '00000000-0000-4000-8000-00000000000a',
    project_id: PROJECT,
    status: 'active',
    currency: 'EUR',
    amount: 900,
    interval: 'month',
    interval_count: 1,
    access_days: null,
    trial_days: 0,
    grace_days: graceDays,
    price_version: 1,
  }) as Plan;

const active = (plan: Plan): Subscription =>
  newSubscription({
    projectId: PROJECT,
    subscriberId: '00000000-0000-4000-8000-000000000002',
    plan,
    source: 'provider',
    billing: { provider: 'manual', firstPayment: 'succeeded' },
    nowMs: START,
    startMs: START,
    trialEndMs: null,
    endsAtMs: null,
  });

const apply = (subscription: Subscription, trigger: SubscriptionTrigger, plan: Plan, atMs: number) =>
  applyTrigger(subscription, trigger, { atMs, plan }).next;

/** The subscription after its renewal payment failed at {@link FAILED_AT}. */
const pastDue = (plan: Plan) => apply(active(plan), 'payment_failed', plan, FAILED_AT);

describe('grace period', () => {
  it('is null on a new subscription and nothing is due for a provider-billed active one before its renewal', () => {
    const subscription = active(planWithGrace(DEFAULT_GRACE_DAYS));
    expect(subscription.grace_period_end).toBeNull();
    expect(nextDueTrigger(subscription)).toBeNull();
  });

  it.each([
    [DEFAULT_GRACE_DAYS, 'the default 7 days'],
    [30, 'the longest, 30 days'],
    [3, '3 days'],
  ])('ends %i days after the failed payment (%s): retries_exhausted is due then', (graceDays) => {
    const subscription = pastDue(planWithGrace(graceDays));
    expect(subscription.status).toBe('past_due');
    expect(subscription.has_access).toBe(true);
    expect(subscription.grace_period_end).toBe(new Date(FAILED_AT + graceDays * DAY_MS).toISOString());
    expect(nextDueTrigger(subscription)).toEqual({
      trigger: 'retries_exhausted',
      atMs: FAILED_AT + graceDays * DAY_MS,
    });
  });

  it('of 0 days makes the subscription due to become unpaid at once', () => {
    const plan = planWithGrace(0);
    const subscription = pastDue(plan);
    expect(subscription.grace_period_end).toBe(new Date(FAILED_AT).toISOString());
    expect(nextDueTrigger(subscription)).toEqual({ trigger: 'retries_exhausted', atMs: FAILED_AT });
    const unpaid = apply(subscription, 'retries_exhausted', plan, FAILED_AT);
    expect(unpaid.status).toBe('unpaid');
    expect(unpaid.has_access).toBe(false);
    expect(unpaid.grace_period_end).toBeNull();
  });

  it('is cleared when the payment succeeds during it, and set anew by the next failure', () => {
    const plan = planWithGrace(DEFAULT_GRACE_DAYS);
    const recovered = apply(pastDue(plan), 'payment_succeeded', plan, FAILED_AT + 2 * DAY_MS);
    expect(recovered.status).toBe('active');
    expect(recovered.grace_period_end).toBeNull();
    const failedAgain = apply(recovered, 'payment_failed', plan, FAILED_AT + 40 * DAY_MS);
    expect(failedAgain.grace_period_end).toBe(new Date(FAILED_AT + (40 + DEFAULT_GRACE_DAYS) * DAY_MS).toISOString());
  });

  it('is cleared when the subscription leaves past_due by becoming unpaid, pausing, suspension or cancellation', () => {
    const plan = planWithGrace(DEFAULT_GRACE_DAYS);
    const later = FAILED_AT + DAY_MS;
    for (const trigger of ['retries_exhausted', 'pause', 'suspend', 'cancel'] as const) {
      const next = apply(pastDue(plan), trigger, plan, later);
      expect(next.status).not.toBe('past_due');
      expect(next.grace_period_end).toBeNull();
    }
  });

  it('is kept by a plan change while past_due, whatever the new plan\u2019s grace_days', () => {
    const subscription = pastDue(planWithGrace(DEFAULT_GRACE_DAYS));
    const richer = { ...planWithGrace(30), id: '00000000-0000-4000-8000-00000000000b', amount: 1900 };
    const upgraded = apply(subscription, 'upgrade', richer, FAILED_AT + DAY_MS);
    expect(upgraded.status).toBe('past_due');
    expect(upgraded.grace_period_end).toBe(subscription.grace_period_end);
    expect(nextDueTrigger(upgraded)?.atMs).toBe(FAILED_AT + DEFAULT_GRACE_DAYS * DAY_MS);
  });

  it('of a past_due subscription stored without one ends the default 7 days after it entered past_due', () => {
    const stored: Subscription = { ...pastDue(planWithGrace(30)), grace_period_end: null };
    expect(nextDueTrigger(stored)).toEqual({
      trigger: 'retries_exhausted',
      atMs: Date.parse(stored.status_changed_at) + DEFAULT_GRACE_DAYS * DAY_MS,
    });
  });
});
