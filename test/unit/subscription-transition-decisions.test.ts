/**
 * The pure decisions of a subscription change (DESIGN D15), without DynamoDB: a transition's outcome
 * (next status, event, access change, end), a refused pair's CONFLICT naming the current status and the
 * allowed triggers, a plan change's upgrade / downgrade and its refusals, and the access-summary sets.
 */
import { describe, expect, it } from 'vitest';
import type { Plan } from '../../shared/domain/plans/schema.js';
import { newSubscription } from '../../shared/domain/subscriptions/creation.js';
import type { Subscription } from '../../shared/domain/subscriptions/schema.js';
import {
  accessSetChange,
  decidePlanChange,
  decideTransition,
} from '../../shared/domain/subscriptions/transition-decisions.js';
import { thrownProblem } from '../support/problems.js';
import { DAY_MS } from '../../shared/clock.js';

const PROJECT = '00000000-0000-4000-8000-000000000001';
const NOW = Date.parse('2026-01-01T00:00:00Z');
const plan = (id: string, amount: number, extra: Partial<Plan> = {}) =>
  ({
    id,
    project_id: PROJECT,
    status: 'active',
    currency: 'eur',
    amount,
    interval: 'month',
    interval_count: 1,
    access_days: null,
    trial_days: 0,
    price_version: 1,
    ...extra,
  }) as Plan;
const gold = plan('00000000-0000-4000-8000-00000000000a', 900);
const platinum = plan('00000000-0000-4000-8000-00000000000b', 1900);
const bronze = plan('00000000-0000-4000-8000-00000000000c', 300);

const active = (): Subscription =>
  newSubscription({
    projectId: PROJECT,
    subscriberId: '00000000-0000-4000-8000-000000000002',
    plan: gold,
    source: 'creator_grant',
    nowMs: NOW,
    startMs: NOW,
    trialEndMs: null,
    endsAtMs: null,
  });
const inStatus = (status: Subscription['status']): Subscription => ({ ...active(), status, has_access: false });

describe('decideTransition', () => {
  it('cancels an active subscription at once: canceled, its event, access ends, it ends', () => {
    const outcome = decideTransition(active(), gold, { trigger: 'cancel', reason: 'moved away' }, NOW + 1000);
    expect(outcome.next.status).toBe('canceled');
    expect(outcome.next.previous_status).toBe('active');
    expect(outcome.transition.event).toBe('subscription.canceled');
    expect(outcome.planAfter).toBe(gold);
    expect(outcome.accessChanges).toBe(true);
    expect(outcome.ends).toBe(true);
  });

  it('pauses an active subscription: access ends, the subscription does not', () => {
    const outcome = decideTransition(active(), gold, { trigger: 'pause' }, NOW);
    expect(outcome.next.status).toBe('paused');
    expect(outcome.accessChanges).toBe(true);
    expect(outcome.ends).toBe(false);
  });

  it('takes effect at the last change when the clock applies a transition due before it (times never go backwards)', () => {
    // A term due to end on day 10, applied on day 40 to a subscription changed (unsuspended) on day 38.
    const changed: Subscription = {
      ...active(),
      updated_at: new Date(NOW + 38 * DAY_MS).toISOString(),
      status_changed_at: new Date(NOW + 38 * DAY_MS).toISOString(),
    };
    const late = decideTransition(changed, gold, { trigger: 'term_ended' }, NOW + 10 * DAY_MS);
    expect(late.next.status).toBe('expired');
    expect(late.next.status_changed_at).toBe(changed.updated_at);
    expect(late.next.updated_at).toBe(changed.updated_at);
    // Due after the last change: at its due time, as before.
    const onTime = decideTransition(changed, gold, { trigger: 'term_ended' }, NOW + 39 * DAY_MS);
    expect(onTime.next.status_changed_at).toBe(new Date(NOW + 39 * DAY_MS).toISOString());
  });

  it('refuses a pair the table does not allow: CONFLICT naming the current status and what it allows', () => {
    const error = thrownProblem(() => decideTransition(inStatus('paused'), gold, { trigger: 'pause' }, NOW));
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain('The subscription is paused: pause is not allowed');
    expect(error.message).toMatch(/it allows .*resume/);
  });

  it('refuses any trigger on a terminal status, naming it terminal', () => {
    const error = thrownProblem(() => decideTransition(inStatus('canceled'), gold, { trigger: 'resume' }, NOW));
    expect(error.code).toBe('CONFLICT');
    expect(error.message).toContain('canceled');
    expect(error.message).toContain('terminal');
  });
});

describe('decidePlanChange', () => {
  it('a higher price per day is an upgrade, a lower one a downgrade, carrying the new plan', () => {
    expect(decidePlanChange(active(), gold, platinum)).toEqual({ trigger: 'upgrade', newPlan: platinum });
    expect(decidePlanChange(active(), gold, bronze)).toEqual({ trigger: 'downgrade', newPlan: bronze });
  });

  it('refuses the plan it is already on, an inactive plan, another currency and a status without plan changes', () => {
    expect(thrownProblem(() => decidePlanChange(active(), gold, gold)).code).toBe('CONFLICT');
    expect(
      thrownProblem(() => decidePlanChange(active(), gold, plan(platinum.id, 1900, { status: 'inactive' }))).code,
    ).toBe('CONFLICT');
    expect(
      thrownProblem(() => decidePlanChange(active(), gold, plan(platinum.id, 1900, { currency: 'usd' }))).code,
    ).toBe('VALIDATION_FAILED');
    const refused = thrownProblem(() => decidePlanChange(inStatus('paused'), gold, platinum));
    expect(refused.code).toBe('CONFLICT');
    expect(refused.message).toContain('The subscription is paused: upgrade is not allowed');
  });
});

describe('accessSetChange', () => {
  it('adds a subscription gaining access to granting and removes one losing it', () => {
    const subscription = active();
    expect(accessSetChange(null, subscription).add.granting).toEqual([subscription.id]);
    const canceled = decideTransition(subscription, gold, { trigger: 'cancel' }, NOW).next;
    expect(accessSetChange(subscription, canceled).delete.granting).toEqual([subscription.id]);
    expect(accessSetChange(subscription, { ...subscription })).toEqual({
      add: { granting: [], paid: [] },
      delete: { granting: [], paid: [] },
    });
  });
});
