/**
 * Subscriptions (DESIGN D6, D14, D15): creation (creator grant, free plan, trial,
 * scheduled start, fixed term), read by id alone, lists per project and per subscriber with filters and
 * paging, every operation-driven transition over REST and the five subscription tools (CONFLICT naming
 * the allowed actions otherwise), idempotent replay, the live subscription counters of project and plan,
 * member access events, the ban's `suspendSubscriptionsOfSubscriber`, and every clock-driven transition
 * through the deadline worker with an injected clock (applying twice does nothing). Every event emitted
 * is read from the outbox and checked against its published JSON Schema. Against DynamoDB Local.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DAY_MS, HOUR_MS, isoTime } from '../../shared/clock.js';
import { banSubscriber } from '../../shared/domain/subscribers/moderation.js';
import { checkProjectAccess } from '../../shared/domain/subscriptions/access.js';
import { keys } from '../../shared/store/keys.js';
import { expectRestProblem, scanTable } from '../support/guarantees.js';
import { tool } from '../support/calls.js';
import { countingStore as countingStoreOf } from '../support/store.js';
import {
  call,
  clock,
  deadlines,
  free,
  gold,
  liveCount,
  newEvents,
  newSubscriber,
  ok,
  projectId,
  runtime,
  silver,
  subscribe,
  subscriberId,
  team,
  tick,
  types,
  useSubscriptionsFixture,
} from '../support/fixtures/subscriptions.js';

useSubscriptionsFixture();

describe('create, read and list', () => {
  it('grants an active subscription over REST with its event, counters and first deadline, and reads it by id alone', async () => {
    const subscription = await subscribe({});
    const now = isoTime(clock.nowMs());
    expect(subscription).toEqual({
      id: expect.any(String),
      project_id: projectId,
      subscriber_id: subscriberId,
      plan_id: gold.id,
      status: 'active',
      previous_status: null,
      has_access: true,
      source: 'creator_grant',
      payment_provider: null,
      price_version: 1,
      starts_at: now,
      ends_at: null,
      trial_ends_at: null,
      current_period_start: now,
      current_period_end: expect.any(String),
      grace_period_end: null,
      discount: null,
      cancel_at_period_end: false,
      canceled_at: null,
      cancellation_reason: null,
      invite_links: [],
      status_changed_at: now,
      created_at: now,
      updated_at: now,
    });
    expect(Date.parse(subscription.current_period_end)).toBeGreaterThan(clock.nowMs() + 27 * DAY_MS);
    const events = await newEvents();
    expect(types(events)).toEqual(['subscription.created', 'member.converted']);
    expect(events[0]).toMatchObject({
      project_id: projectId,
      data: { subscription, subscriber: { id: subscriberId }, plan: { id: gold.id }, access_code: null },
    });
    expect(await liveCount(keys.project(team.team.id, projectId))).toBe(1);
    expect(await liveCount(keys.plan(team.team.id, gold.id))).toBe(1);
    expect((await deadlines()).map((item) => item.due_at)).toEqual([subscription.current_period_end]);

    expect(await ok('GET', `/v1/subscriptions/${subscription.id}`)).toEqual(subscription);
    expect(
      (await tool(runtime, team.principal, 'get_subscription', { id: subscription.id })).structuredContent,
    ).toEqual(subscription);
    expectRestProblem(await call('GET', `/v1/subscriptions/${randomUUID()}`), 'NOT_FOUND');
  });

  it('starts free-plan, trial, scheduled and fixed-term subscriptions as D15’s (new) row says', async () => {
    const onFree = await subscribe({ plan_id: free.id });
    expect(onFree).toMatchObject({ status: 'active', source: 'free_plan' });
    const trial = await subscribe({ trial: true, subscriber_id: await newSubscriber('Bo') });
    expect(trial).toMatchObject({
      status: 'trialing',
      trial_ends_at: isoTime(clock.nowMs() + 7 * DAY_MS),
      current_period_end: isoTime(clock.nowMs() + 7 * DAY_MS),
    });
    const startsAt = isoTime(clock.nowMs() + 2 * DAY_MS);
    const scheduled = await subscribe({ starts_at: startsAt, subscriber_id: await newSubscriber('Cy') });
    expect(scheduled).toMatchObject({
      status: 'scheduled',
      has_access: false,
      starts_at: startsAt,
      current_period_start: null,
      current_period_end: null,
    });
    const endsAt = isoTime(clock.nowMs() + 10 * DAY_MS);
    const fixed = await subscribe({ ends_at: endsAt, subscriber_id: await newSubscriber('Di') });
    expect(fixed).toMatchObject({ status: 'active', ends_at: endsAt, current_period_end: endsAt });
    const events = await newEvents();
    expect(types(events).filter((type) => type === 'subscription.created')).toHaveLength(4);
    expect(await liveCount(keys.project(team.team.id, projectId))).toBe(4);
  });

  it('refuses bad input without writing anything: unknown fields, dates, trials, unknown or closed plans, unknown or other projects’ subscribers', async () => {
    const subscriptionItems = async () =>
      (await scanTable(runtime.store)).filter(
        (item) => item.entity === 'subscription' || item.entity === 'subscriber_subscription',
      );
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscriptions`, {
        subscriber_id: subscriberId,
        plan_id: gold.id,
        extra: 1,
      }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscriptions`, {
        subscriber_id: subscriberId,
        plan_id: silver.id,
        trial: true,
      }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscriptions`, {
        subscriber_id: subscriberId,
        plan_id: gold.id,
        ends_at: isoTime(clock.nowMs() - DAY_MS),
      }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscriptions`, {
        subscriber_id: subscriberId,
        plan_id: gold.id,
        starts_at: isoTime(clock.nowMs() - DAY_MS),
      }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscriptions`, {
        subscriber_id: subscriberId,
        plan_id: gold.id,
        trial: true,
        ends_at: isoTime(clock.nowMs() + DAY_MS),
      }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: randomUUID(), plan_id: gold.id }),
      'NOT_FOUND',
    );
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscriptions`, {
        subscriber_id: subscriberId,
        plan_id: randomUUID(),
      }),
      'NOT_FOUND',
    );
    const other = (await ok('POST', '/v1/projects', { name: 'Other', platform_type: 'telegram' }, 201)).id;
    expectRestProblem(
      await call('POST', `/v1/projects/${other}/subscriptions`, { subscriber_id: subscriberId, plan_id: gold.id }),
      'NOT_FOUND',
    );
    await ok('POST', `/v1/plans/${silver.id}/deactivate`);
    const conflict = expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscriptions`, {
        subscriber_id: subscriberId,
        plan_id: silver.id,
      }),
      'CONFLICT',
    );
    expect(conflict.detail).toContain('inactive');
    expect(await subscriptionItems()).toEqual([]);
    expect(await deadlines()).toEqual([]);
    expect(await liveCount(keys.project(team.team.id, projectId))).toBe(0);
  });

  it('lists a project’s subscriptions and a subscriber’s, by status and plan, with paging; a cursor of another list is refused', async () => {
    const first = await subscribe({});
    clock.advance(1_000);
    const second = await subscribe({ plan_id: silver.id });
    clock.advance(1_000);
    const otherSubscriber = await newSubscriber('Eve');
    const third = await subscribe({ subscriber_id: otherSubscriber, plan_id: free.id });
    await ok('POST', `/v1/subscriptions/${second.id}/pause`, {});

    const ids = (body: { data: { id: string }[] }) => body.data.map((item) => item.id);
    expect(ids(await ok('GET', `/v1/projects/${projectId}/subscriptions`))).toEqual([first.id, second.id, third.id]);
    const paused = await tool(runtime, team.principal, 'list_subscriptions', {
      project_id: projectId,
      status: 'paused',
    });
    expect(ids(paused.structuredContent as { data: { id: string }[] })).toEqual([second.id]);
    expect(
      ids(
        (await call('GET', `/v1/projects/${projectId}/subscriptions`, undefined, { query: { plan_id: free.id } })).json,
      ),
    ).toEqual([third.id]);
    expect(
      ids(
        (
          await call('GET', `/v1/projects/${projectId}/subscriptions`, undefined, {
            query: { subscriber_id: subscriberId },
          })
        ).json,
      ),
    ).toEqual([first.id, second.id]);
    expect(
      ids(
        (
          await call('GET', `/v1/projects/${projectId}/subscriptions`, undefined, {
            query: { subscriber_id: subscriberId, status: 'active' },
          })
        ).json,
      ),
    ).toEqual([first.id]);

    const page1 = (await call('GET', `/v1/projects/${projectId}/subscriptions`, undefined, { query: { limit: '2' } }))
      .json;
    expect(ids(page1)).toEqual([first.id, second.id]);
    const page2 = (
      await call('GET', `/v1/projects/${projectId}/subscriptions`, undefined, {
        query: { limit: '2', cursor: page1.next_cursor },
      })
    ).json;
    expect(ids(page2)).toEqual([third.id]);
    const byOwner1 = (
      await call('GET', `/v1/projects/${projectId}/subscriptions`, undefined, {
        query: { limit: '1', subscriber_id: subscriberId },
      })
    ).json;
    const byOwner2 = (
      await call('GET', `/v1/projects/${projectId}/subscriptions`, undefined, {
        query: { limit: '1', subscriber_id: subscriberId, cursor: byOwner1.next_cursor },
      })
    ).json;
    expect([...ids(byOwner1), ...ids(byOwner2)]).toEqual([first.id, second.id]);
    expectRestProblem(
      await call('GET', `/v1/projects/${projectId}/subscriptions`, undefined, {
        query: { cursor: byOwner1.next_cursor },
      }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(await call('GET', `/v1/projects/${randomUUID()}/subscriptions`), 'NOT_FOUND');
  });
});

describe('the web access check: one DynamoDB read', () => {
  /** The check through a store counting its requests: its answer and the requests it made. */
  function countingStore() {
    const counting = countingStoreOf(runtime.store);
    return {
      async check(query: { subscriber_id?: string; member_id?: string }) {
        counting.reset();
        const answer = await checkProjectAccess(counting.store, team.principal, projectId, query);
        return { answer, requests: counting.requests() };
      },
    };
  }

  /** The check by subscriber id: one request, and the same answer over REST. */
  async function checkOnce(counting: ReturnType<typeof countingStore>, id = subscriberId) {
    const { answer, requests } = await counting.check({ subscriber_id: id });
    expect(requests).toBe(1);
    expect(
      (await call('GET', `/v1/projects/${projectId}/access`, undefined, { query: { subscriber_id: id } })).json,
    ).toEqual(answer);
    return answer;
  }

  /** What the check must answer when `subscriptionId` decides it, from GET /v1/subscriptions/{id}. */
  async function expected(subscriptionId: string, banned = false) {
    const subscription = await ok('GET', `/v1/subscriptions/${subscriptionId}`);
    return {
      granted: subscription.has_access && !banned,
      status: subscription.status,
      ends_at: subscription.ends_at ?? subscription.current_period_end,
      plan_id: subscription.plan_id,
      subscription_id: subscription.id,
      subscriber_id: subscriberId,
      member_id: null,
    };
  }

  it('answers by subscriber id with one Query across pause, cancel, ban and unban, plan change and a renewal by the deadline worker', async () => {
    const counting = countingStore();
    expect(await checkOnce(counting)).toEqual({
      granted: false,
      status: null,
      ends_at: null,
      plan_id: null,
      subscription_id: null,
      subscriber_id: subscriberId,
      member_id: null,
    });

    const subscription = await subscribe({});
    expect(await checkOnce(counting)).toEqual(await expected(subscription.id));
    await ok('POST', `/v1/subscriptions/${subscription.id}/pause`, {});
    expect(await checkOnce(counting)).toEqual(await expected(subscription.id));
    expect((await checkOnce(counting)).granted).toBe(false);
    clock.advance(HOUR_MS);
    await ok('POST', `/v1/subscriptions/${subscription.id}/resume`, {});
    expect(await checkOnce(counting)).toEqual(await expected(subscription.id));

    await ok('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { plan_id: silver.id });
    const onSilver = await checkOnce(counting);
    expect(onSilver).toEqual(await expected(subscription.id));
    expect(onSilver.plan_id).toBe(silver.id);

    // The deadline worker renews the period: the new end is answered at once.
    const before = await ok('GET', `/v1/subscriptions/${subscription.id}`);
    clock.advance(Date.parse(before.current_period_end) - clock.nowMs());
    expect((await tick()).applied).toBe(1);
    const renewed = await checkOnce(counting);
    expect(renewed).toEqual(await expected(subscription.id));
    expect(Date.parse(renewed.ends_at!)).toBeGreaterThan(Date.parse(before.current_period_end));

    // The ban suspends the subscription and denies access; the unban alone leaves it suspended.
    await banSubscriber(runtime, team.principal, subscriberId, 'spam');
    const banned = await checkOnce(counting);
    expect(banned).toEqual(await expected(subscription.id, true));
    expect(banned).toMatchObject({ granted: false, status: 'suspended' });
    await ok('POST', `/v1/subscriptions/${subscription.id}/unsuspend`, {});
    expect(await checkOnce(counting)).toEqual(await expected(subscription.id, true)); // active, yet banned
    expect((await checkOnce(counting)).granted).toBe(false);
    await ok('POST', `/v1/subscribers/${subscriberId}/unban`, {});
    expect(await checkOnce(counting)).toEqual(await expected(subscription.id));
    expect((await checkOnce(counting)).granted).toBe(true);

    await ok('POST', `/v1/subscriptions/${subscription.id}/cancel`, {});
    expect(await checkOnce(counting)).toMatchObject({
      ...(await expected(subscription.id)),
      granted: true,
      status: 'pending_cancellation',
    });
    await ok('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: false });
    expect(await checkOnce(counting)).toMatchObject({
      ...(await expected(subscription.id)),
      granted: false,
      status: 'canceled',
    });
  });

  it('keeps the deciding rule: the granting subscription lasting longest, else the most recently changed', async () => {
    const counting = countingStore();
    const fixed = await subscribe({ plan_id: free.id, ends_at: isoTime(clock.nowMs() + 3 * DAY_MS) });
    const open = await subscribe({ plan_id: silver.id });
    expect(await checkOnce(counting)).toEqual(await expected(open.id)); // a month's period outlasts three days
    await ok('POST', `/v1/subscriptions/${open.id}/cancel`, { at_period_end: false });
    expect(await checkOnce(counting)).toEqual(await expected(fixed.id));
    clock.advance(HOUR_MS);
    await ok('POST', `/v1/subscriptions/${fixed.id}/cancel`, { at_period_end: false });
    expect(await checkOnce(counting)).toEqual(await expected(fixed.id)); // none grants: the latest changed
  });

  it('answers NOT_FOUND for an unknown subscriber after its one Query', async () => {
    const counting = countingStoreOf(runtime.store);
    await expect(
      checkProjectAccess(counting.store, team.principal, projectId, { subscriber_id: randomUUID() }),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(counting.requests()).toBe(1);
  });
});
