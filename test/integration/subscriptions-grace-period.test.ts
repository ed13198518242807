/**
 * A plan's grace period (DESIGN D32, replacing D15's fixed 14 days), against DynamoDB Local with an injected clock:
 * a failed renewal payment makes the subscription past_due with `grace_period_end` = the failure plus the plan's
 * `grace_days`; the deadline worker makes it unpaid exactly then and not before; a payment during the grace period
 * clears it. Payments are recorded through the `manual` provider.
 */
import { describe, expect, it } from 'vitest';
import { DAY_MS, isoTime } from '../../shared/clock.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import {
  clock,
  newEvents,
  ok,
  projectId,
  record,
  runtime,
  subscriberId,
  types,
  usePaymentsFixture,
} from '../support/fixtures/payments.js';

usePaymentsFixture();

/** Runs the deadline worker at the clock's now. */
const tick = () => applyDueDeadlines(runtime, clock.nowMs());

const subscription = (id: string) => ok('GET', `/v1/subscriptions/${id}`);

/** A subscription paid through the manual provider on a new monthly plan with `graceDays`, then its renewal failed. */
async function pastDueOn(graceDays: number): Promise<{ id: string; failedAtMs: number }> {
  const plan = await ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    { name: `Grace ${graceDays}`, amount: 500, currency: 'EUR', interval: 'month', grace_days: graceDays },
    201,
  );
  expect(plan.grace_days).toBe(graceDays);
  const first = await record({ subscriber_id: subscriberId, plan_id: plan.id, status: 'succeeded' });
  clock.advance(DAY_MS);
  const failedAtMs = clock.nowMs();
  await record({ subscription_id: first.subscription_id, status: 'failed' });
  await newEvents();
  return { id: first.subscription_id, failedAtMs };
}

describe('the plan’s grace period', () => {
  it('keeps a past_due subscription’s access for the plan’s 3 grace days, then the clock makes it unpaid', async () => {
    const { id, failedAtMs } = await pastDueOn(3);
    const pastDue = await subscription(id);
    expect(pastDue).toMatchObject({
      status: 'past_due',
      has_access: true,
      grace_period_end: isoTime(failedAtMs + 3 * DAY_MS),
    });

    clock.advance(3 * DAY_MS - 1);
    expect(await tick()).toEqual({ applied: 0, failed: 0 });
    expect(await subscription(id)).toMatchObject({ status: 'past_due', has_access: true });
    expect(await newEvents()).toEqual([]);

    clock.advance(1);
    expect((await tick()).applied).toBe(1);
    expect(await subscription(id)).toMatchObject({
      status: 'unpaid',
      previous_status: 'past_due',
      has_access: false,
      grace_period_end: null,
      status_changed_at: isoTime(failedAtMs + 3 * DAY_MS),
    });
    expect(types(await newEvents())).toEqual(['subscription.unpaid', 'member.churned']);
  });

  it('with 0 grace days makes the subscription unpaid on the worker’s next run', async () => {
    const { id, failedAtMs } = await pastDueOn(0);
    expect((await subscription(id)).grace_period_end).toBe(isoTime(failedAtMs));
    await tick();
    expect(await subscription(id)).toMatchObject({ status: 'unpaid', has_access: false, grace_period_end: null });
  });

  it('ends when the payment succeeds during it: active again, nothing left for the clock to make unpaid', async () => {
    const { id } = await pastDueOn(3);
    clock.advance(2 * DAY_MS);
    await record({ subscription_id: id, status: 'succeeded' });
    expect(await subscription(id)).toMatchObject({ status: 'active', grace_period_end: null });
    await newEvents();
    clock.advance(2 * DAY_MS);
    await tick();
    expect(await subscription(id)).toMatchObject({ status: 'active' });
    expect(await newEvents()).toEqual([]);
  });
});
