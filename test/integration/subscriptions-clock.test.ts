/**
 * Subscriptions (DESIGN D6, D14, D15): creation (creator grant, free plan, trial,
 * scheduled start, fixed term), read by id alone, lists per project and per subscriber with filters and
 * paging, every operation-driven transition over REST and the five subscription tools (CONFLICT naming
 * the allowed actions otherwise), idempotent replay, the live subscription counters of project and plan,
 * member access events, the ban's `suspendSubscriptionsOfSubscriber`, and every clock-driven transition
 * through the deadline worker with an injected clock (applying twice does nothing). Every event emitted
 * is read from the outbox and checked against its published JSON Schema. Against DynamoDB Local.
 */

import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, isoTime } from '../../shared/clock.js';
import { deadlineItem } from '../../shared/deadlines/deadline.js';
import { SUBSCRIPTION_DEADLINE_KIND } from '../../shared/domain/subscriptions/writes.js';
import { keys } from '../../shared/store/keys.js';
import {
  clock,
  deadlines,
  free,
  liveCount,
  newEvents,
  newSubscriber,
  ok,
  projectId,
  runtime,
  silver,
  subscribe,
  team,
  tick,
  types,
  useSubscriptionsFixture,
} from '../support/fixtures/subscriptions.js';

useSubscriptionsFixture();

describe('clock-driven transitions (deadline worker)', () => {
  it('ends a trial, renews the period, and applies each deadline once', async () => {
    const subscription = await subscribe({ trial: true });
    await newEvents();
    expect(await tick()).toEqual({ applied: 0, failed: 0 });
    clock.advance(7 * DAY_MS);
    expect((await tick()).applied).toBe(1);
    const active = await ok('GET', `/v1/subscriptions/${subscription.id}`);
    expect(active).toMatchObject({
      status: 'active',
      previous_status: 'trialing',
      current_period_start: subscription.trial_ends_at,
    });
    expect(types(await newEvents())).toEqual(['subscription.activated']);
    expect(await tick()).toEqual({ applied: 0, failed: 0 });
    expect(await newEvents()).toEqual([]);

    clock.advance(Date.parse(active.current_period_end) - clock.nowMs());
    await tick();
    const renewed = await ok('GET', `/v1/subscriptions/${subscription.id}`);
    expect(renewed).toMatchObject({
      status: 'active',
      previous_status: 'active',
      current_period_start: active.current_period_end,
    });
    expect(types(await newEvents())).toEqual(['subscription.renewed']);
    // Two periods missed at once are both renewed in one run.
    clock.advance(Date.parse(renewed.current_period_end) - clock.nowMs() + 40 * DAY_MS);
    await tick();
    expect(types(await newEvents())).toEqual(['subscription.renewed', 'subscription.renewed']);
    expect((await deadlines()).length).toBe(1);
  });

  it('starts a scheduled subscription, expires a fixed term and cancels at the period end', async () => {
    const scheduled = await subscribe({ starts_at: isoTime(clock.nowMs() + DAY_MS), trial: true });
    const fixed = await subscribe({
      ends_at: isoTime(clock.nowMs() + 3 * DAY_MS),
      plan_id: free.id,
      subscriber_id: await newSubscriber('Gus'),
    });
    const leaving = await subscribe({ plan_id: silver.id, subscriber_id: await newSubscriber('Hal') });
    await ok('POST', `/v1/subscriptions/${leaving.id}/cancel`, {});
    await newEvents();

    clock.advance(DAY_MS);
    await tick();
    expect(await ok('GET', `/v1/subscriptions/${scheduled.id}`)).toMatchObject({
      status: 'trialing',
      previous_status: 'scheduled',
      has_access: true,
    });
    expect(types(await newEvents())).toEqual(['subscription.activated', 'member.converted']);

    clock.advance(2 * DAY_MS);
    await tick();
    expect(await ok('GET', `/v1/subscriptions/${fixed.id}`)).toMatchObject({
      status: 'expired',
      previous_status: 'active',
    });
    expect(types(await newEvents())).toEqual(['subscription.expired']);

    clock.advance(Date.parse(leaving.current_period_end) - clock.nowMs());
    await tick();
    expect(await ok('GET', `/v1/subscriptions/${leaving.id}`)).toMatchObject({
      status: 'canceled',
      previous_status: 'pending_cancellation',
    });
    const events = await newEvents();
    expect(types(events)).toContain('subscription.canceled');
    expect(await liveCount(keys.plan(team.team.id, silver.id))).toBe(0);
    expect(await liveCount(keys.plan(team.team.id, free.id))).toBe(0);
  });

  it('applies the 23-hour incomplete expiry, the default 7-day grace of a past_due subscription stored without grace_period_end, and the 30-day unpaid limit', async () => {
    // Payments arrive in a later part: put two subscriptions into incomplete and past_due directly.
    const incomplete = await subscribe({});
    const overdue = await subscribe({ plan_id: silver.id, subscriber_id: await newSubscriber('Ivy') });
    await newEvents();
    const force = async (id: string, status: string) => {
      await runtime.store.update({
        Key: keys.subscription(team.team.id, id),
        UpdateExpression: 'SET #status = :status, status_changed_at = :now',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':status': status, ':now': isoTime(clock.nowMs()) },
      });
      // A stale deadline due now: the worker moves it to the status's own limit.
      await runtime.store.put({
        Item: deadlineItem({
          teamId: team.team.id,
          kind: SUBSCRIPTION_DEADLINE_KIND,
          subjectId: id,
          projectId,
          dueAt: isoTime(clock.nowMs()),
        }),
      });
    };
    await force(incomplete.id, 'incomplete');
    await force(overdue.id, 'past_due');
    await tick();
    expect(await newEvents()).toEqual([]);
    const dueTimes = (await deadlines()).map((item) => item.due_at).sort();
    expect(dueTimes).toEqual(
      [isoTime(Date.parse(incomplete.created_at) + 23 * HOUR_MS), isoTime(clock.nowMs() + 7 * DAY_MS)].sort(),
    );

    clock.advance(23 * HOUR_MS);
    await tick();
    expect(await ok('GET', `/v1/subscriptions/${incomplete.id}`)).toMatchObject({
      status: 'incomplete_expired',
      previous_status: 'incomplete',
    });
    expect(types(await newEvents())).toEqual(['subscription.incomplete_expired']);

    clock.advance(7 * DAY_MS);
    await tick();
    expect(await ok('GET', `/v1/subscriptions/${overdue.id}`)).toMatchObject({
      status: 'unpaid',
      previous_status: 'past_due',
      has_access: false,
    });
    expect(types(await newEvents())).toEqual(['subscription.unpaid', 'member.churned']);
    clock.advance(30 * DAY_MS);
    await tick();
    expect(await ok('GET', `/v1/subscriptions/${overdue.id}`)).toMatchObject({
      status: 'canceled',
      previous_status: 'unpaid',
    });
    expect(types(await newEvents())).toEqual(['subscription.canceled']);
    expect(await deadlines()).toEqual([]);
    expect(await liveCount(keys.project(team.team.id, projectId))).toBe(0);
  });
});
