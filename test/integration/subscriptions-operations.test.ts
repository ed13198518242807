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
import { subscriberAccessAttribute } from '../../shared/domain/subscribers/record.js';
import { suspendSubscriptionsOfSubscriber } from '../../shared/domain/subscriptions/transitions.js';
import { keys } from '../../shared/store/keys.js';
import { expectRestProblem, expectToolProblem } from '../support/guarantees.js';
import { tool } from '../support/calls.js';
import { attachRequestCounter, isAuthentication } from '../../bench/support.js';
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

describe('operation-driven transitions', () => {
  it('pauses, resumes, schedules and withdraws a cancellation, suspends, unsuspends, changes plan and cancels, each with its one event', async () => {
    const subscription = await subscribe({});
    await newEvents();
    const paused = await tool(runtime, team.principal, 'pause_subscription', {
      id: subscription.id,
      reason: 'holiday',
    });
    expect(paused.structuredContent).toMatchObject({ status: 'paused', previous_status: 'active', has_access: false });
    expect(types(await newEvents())).toEqual(['subscription.paused', 'member.churned']);
    const again = expectToolProblem(
      await tool(runtime, team.principal, 'pause_subscription', { id: subscription.id }),
      'CONFLICT',
    );
    expect(again.detail).toBe('The subscription is paused: pause is not allowed; it allows cancel, resume, suspend.');

    clock.advance(HOUR_MS);
    const resumed = await tool(runtime, team.principal, 'resume_subscription', { id: subscription.id });
    expect(resumed.structuredContent).toMatchObject({
      status: 'active',
      previous_status: 'paused',
      current_period_start: isoTime(clock.nowMs()),
    });
    expect(types(await newEvents())).toEqual(['subscription.resumed']); // converted once only

    const scheduled = await tool(runtime, team.principal, 'cancel_subscription', {
      id: subscription.id,
      reason: 'too expensive',
    });
    expect(scheduled.structuredContent).toMatchObject({
      status: 'pending_cancellation',
      cancel_at_period_end: true,
      cancellation_reason: 'too expensive',
      has_access: true,
    });
    expect(types(await newEvents())).toEqual(['subscription.cancellation_scheduled']);
    expect(await ok('POST', `/v1/subscriptions/${subscription.id}/resume`)).toMatchObject({
      status: 'active',
      cancel_at_period_end: false,
      canceled_at: null,
    });

    expect(await ok('POST', `/v1/subscriptions/${subscription.id}/suspend`, { reason: 'abuse' })).toMatchObject({
      status: 'suspended',
    });
    expectRestProblem(await call('POST', `/v1/subscriptions/${subscription.id}/resume`), 'CONFLICT');
    expect(await ok('POST', `/v1/subscriptions/${subscription.id}/unsuspend`)).toMatchObject({
      status: 'active',
      previous_status: 'suspended',
    });
    expect(types(await newEvents())).toEqual([
      'subscription.resumed',
      'subscription.suspended',
      'member.churned',
      'subscription.resumed',
    ]);

    const down = await ok('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { plan_id: silver.id });
    expect(down).toMatchObject({ plan_id: silver.id, status: 'active', previous_status: 'active' });
    const downEvents = await newEvents();
    expect(types(downEvents)).toEqual(['subscription.downgraded']);
    expect(downEvents[0].data).toMatchObject({ plan: { id: silver.id }, previous_plan: { id: gold.id } });
    expect(await liveCount(keys.plan(team.team.id, gold.id))).toBe(0);
    expect(await liveCount(keys.plan(team.team.id, silver.id))).toBe(1);
    expect(await ok('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { plan_id: gold.id })).toMatchObject({
      plan_id: gold.id,
    });
    expect(types(await newEvents())).toEqual(['subscription.upgraded']);
    expectRestProblem(
      await call('POST', `/v1/subscriptions/${subscription.id}/change-plan`, { plan_id: gold.id }),
      'CONFLICT',
    );

    const canceled = await tool(runtime, team.principal, 'cancel_subscription', {
      id: subscription.id,
      at_period_end: false,
    });
    expect(canceled.structuredContent).toMatchObject({
      status: 'canceled',
      previous_status: 'active',
      has_access: false,
    });
    expect(types(await newEvents())).toEqual(['subscription.canceled', 'member.churned']);
    expect(await liveCount(keys.project(team.team.id, projectId))).toBe(0);
    expect(await liveCount(keys.plan(team.team.id, gold.id))).toBe(0);
    expect(await deadlines()).toEqual([]);
    const terminal = expectRestProblem(
      await call('POST', `/v1/subscriptions/${subscription.id}/unsuspend`),
      'CONFLICT',
    );
    expect(terminal.detail).toContain('is canceled');
    expect(terminal.detail).toContain('allows no action');
    // The plan can be deleted now that it has no live subscription.
    expect((await call('DELETE', `/v1/plans/${silver.id}`)).status).toBe(200);
  });

  it('replays a transition sent twice with the same Idempotency-Key, emitting one event', async () => {
    const subscription = await subscribe({});
    await newEvents();
    const key = randomUUID();
    const first = await call(
      'POST',
      `/v1/subscriptions/${subscription.id}/pause`,
      {},
      { headers: { 'Idempotency-Key': key } },
    );
    const second = await call(
      'POST',
      `/v1/subscriptions/${subscription.id}/pause`,
      {},
      { headers: { 'Idempotency-Key': key } },
    );
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers['idempotent-replay']).toBe('true');
    expect(second.json).toEqual(first.json);
    expect(types(await newEvents())).toEqual(['subscription.paused', 'member.churned']);
    expectRestProblem(
      await call('POST', `/v1/subscriptions/${subscription.id}/pause`, { unknown: true }),
      'VALIDATION_FAILED',
    );
  });

  it('costs 3 DynamoDB requests beyond authentication, with an Idempotency-Key too: the subscription, one batch read, one transaction carrying the completed idempotency record (no claim up front: transitions take keys in-transaction)', async () => {
    const subscription = await subscribe({}); // a paid grant: the subscriber is converted, the project has no resource
    const counter = attachRequestCounter(runtime.store.document.middlewareStack);
    /**
     * The requests of one REST transition beyond authentication, by what they touch (transactions by their kind only).
     */
    const requestsOf = async (action: string, body: unknown, headers: Record<string, string> = {}) => {
      counter.reset();
      const reply = await call('POST', `/v1/subscriptions/${subscription.id}/${action}`, body, { headers });
      expect(reply.status, reply.text).toBe(200);
      return Object.entries(counter.snapshot().described)
        .filter(([description]) => !isAuthentication(description))
        .flatMap(([description, count]) =>
          Array<string>(count).fill(description.startsWith('TransactWrite[') ? 'TransactWrite' : description),
        )
        .sort();
    };
    const reads = ['BatchGet[PLAN, SUBSCRIBER×2, PROJECT, CONVERTED]', 'Get SUBSCRIPTION'];
    // Access stays: the Idempotency-Key's completed record rides in the effect's transaction (no claim before, no
    // UpdateItem after).
    expect(await requestsOf('cancel', { at_period_end: true }, { 'Idempotency-Key': randomUUID() })).toEqual([
      ...reads,
      'TransactWrite',
    ]);
    expect(await requestsOf('resume', {})).toEqual([...reads, 'TransactWrite']);
    // Paid access ends: member.churned depends on the subscriber's other subscriptions, which its access summary (in
    // the batch) names.
    expect(await requestsOf('pause', {})).toEqual([...reads, 'TransactWrite']);
    // Access starts again for a converted subscriber of a project without resources: no member event can depend on
    // anything else.
    expect(await requestsOf('resume', {}, { 'Idempotency-Key': randomUUID() })).toEqual([...reads, 'TransactWrite']);
    expect(types(await newEvents())).toEqual([
      'subscription.created',
      'member.converted',
      'subscription.cancellation_scheduled',
      'subscription.resumed',
      'subscription.paused',
      'member.churned',
      'subscription.resumed',
    ]);
  });

  it("keeps the ids of the subscriptions granting (paid) access in the subscriber's access summary, in each creation's and transition's transaction", async () => {
    const summary = async () => {
      const item = await runtime.store.get(keys.subscriberAccess(team.team.id, projectId, subscriberId));
      const ids = (attribute: string) => [...((item?.[attribute] as Set<string> | undefined) ?? [])].sort();
      return {
        granting: ids(subscriberAccessAttribute.granting),
        paid: ids(subscriberAccessAttribute.paid),
        emptied: [subscriberAccessAttribute.granting, subscriberAccessAttribute.paid].filter(
          (attribute) => item !== undefined && !(attribute in item),
        ),
      };
    };
    expect(await summary()).toEqual({
      granting: [],
      paid: [],
      emptied: [subscriberAccessAttribute.granting, subscriberAccessAttribute.paid],
    });
    const paid = await subscribe({});
    const gratis = await subscribe({ plan_id: free.id });
    const scheduled = await subscribe({ plan_id: silver.id, starts_at: isoTime(clock.nowMs() + DAY_MS) });
    expect(await summary()).toMatchObject({ granting: [paid.id, gratis.id].sort(), paid: [paid.id] });
    await ok('POST', `/v1/subscriptions/${paid.id}/pause`, {});
    expect(await summary()).toMatchObject({
      granting: [gratis.id],
      paid: [],
      emptied: [subscriberAccessAttribute.paid],
    });
    clock.advance(DAY_MS);
    await tick(); // the scheduled one starts: access and paid access
    expect(await summary()).toMatchObject({ granting: [gratis.id, scheduled.id].sort(), paid: [scheduled.id] });
    await ok('POST', `/v1/subscriptions/${gratis.id}/cancel`, { at_period_end: false });
    await ok('POST', `/v1/subscriptions/${scheduled.id}/cancel`, { at_period_end: false });
    expect(await summary()).toEqual({
      granting: [],
      paid: [],
      emptied: [subscriberAccessAttribute.granting, subscriberAccessAttribute.paid],
    });
    expect(types(await newEvents())).toEqual([
      'subscription.created',
      'member.converted',
      'subscription.created',
      'subscription.created',
      'subscription.paused',
      'member.churned',
      'subscription.activated',
      'subscription.canceled',
      'subscription.canceled',
      'member.churned',
    ]);
  });

  it('emits member access events per linked resource when access starts and ends', async () => {
    const resource = await ok(
      'POST',
      `/v1/projects/${projectId}/resources`,
      { kind: 'channel', platform_resource_id: '-100123' },
      201,
    );
    await newEvents();
    const subscription = await subscribe({ plan_id: free.id });
    const granted = await newEvents();
    expect(types(granted)).toEqual(['subscription.created', 'member.access_granted']);
    expect(granted[1].data).toMatchObject({
      member: null,
      subscriber: { id: subscriberId },
      resource: { id: resource.id },
    });
    // A second subscription with access grants nothing more; ending one of two revokes nothing.
    const second = await subscribe({});
    expect(types(await newEvents())).toEqual(['subscription.created', 'member.converted']);
    await ok('POST', `/v1/subscriptions/${second.id}/cancel`, { at_period_end: false });
    expect(types(await newEvents())).toEqual(['subscription.canceled', 'member.churned']);
    await ok('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: false });
    expect(types(await newEvents())).toEqual(['subscription.canceled', 'member.access_revoked']);
  });

  it('suspends every suspendable subscription of a subscriber (the ban)', async () => {
    const active = await subscribe({});
    const scheduled = await subscribe({ plan_id: silver.id, starts_at: isoTime(clock.nowMs() + DAY_MS) });
    const other = await subscribe({ plan_id: free.id, subscriber_id: await newSubscriber('Fay') });
    await newEvents();
    const suspended = await suspendSubscriptionsOfSubscriber(runtime, team.principal, subscriberId);
    expect(suspended.map((item) => item.id)).toEqual([active.id]);
    expect(types(await newEvents())).toEqual(['subscription.suspended', 'member.churned']);
    expect((await ok('GET', `/v1/subscriptions/${scheduled.id}`)).status).toBe('scheduled');
    expect((await ok('GET', `/v1/subscriptions/${other.id}`)).status).toBe('active');

    // Banning suspends through the same function; a banned subscriber gets no new subscription.
    const banned = await newSubscriber('Gil');
    const live = await subscribe({ subscriber_id: banned, plan_id: free.id });
    await banSubscriber(runtime, team.principal, banned, 'spam');
    expect((await ok('GET', `/v1/subscriptions/${live.id}`)).status).toBe('suspended');
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: banned, plan_id: free.id }),
      'CONFLICT',
    );
    expect(await ok('POST', `/v1/subscriptions/${live.id}/unsuspend`)).toMatchObject({
      status: 'active',
      previous_status: 'suspended',
    });
    await newEvents();
  });
});
