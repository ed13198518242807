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
import { beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { isoTime } from '../../shared/clock.js';
import { deadlineItem } from '../../shared/deadlines/deadline.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { banSubscriber } from '../../shared/domain/subscribers/moderation.js';
import { subscriberAccessAttribute } from '../../shared/domain/subscribers/record.js';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { checkProjectAccess } from '../../shared/domain/subscriptions/access.js';
import { suspendSubscriptionsOfSubscriber } from '../../shared/domain/subscriptions/transitions.js';
import { SUBSCRIPTION_DEADLINE_KIND } from '../../shared/domain/subscriptions/writes.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { keys } from '../../shared/store/keys.js';
import { expectRestProblem, expectToolProblem, scanTable } from '../support/guarantees.js';
import { rest, tool } from '../support/calls.js';
import { TeamEventCursor } from '../support/events.js';
import { attachRequestCounter, isAuthentication } from '../../bench/support.js';
import {
  countingStore as countingStoreOf,
  createTestRuntime,
  seedTeam,
  testClock,
  type TestRuntime,
} from '../support/store.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;
let gold: { id: string; amount: number };
let silver: { id: string };
let free: { id: string };
let subscriberId: string;
/** Events of the team already returned by {@link newEvents}. */
let eventCursor: TeamEventCursor;

/** The team's outbox events not returned before, oldest first, each checked against its published schema. */
function newEvents(): Promise<EventEnvelope[]> {
  return eventCursor.next();
}

const types = (events: EventEnvelope[]) => events.map((event) => event.type);
const call = (
  method: string,
  path: string,
  body?: unknown,
  extra: { headers?: Record<string, string>; query?: Record<string, string> } = {},
) => rest(runtime, { method, path, token: team.token, body, ...extra });
const ok = async (method: string, path: string, body?: unknown, status = 200) => {
  const reply = await call(method, path, body);
  expect(reply.status, reply.text).toBe(status);
  return reply.json;
};
const subscribe = (body: Record<string, unknown>) =>
  ok(
    'POST',
    `/v1/projects/${projectId}/subscriptions`,
    { subscriber_id: subscriberId, plan_id: gold.id, ...body },
    201,
  );
const newSubscriber = async (name = 'Ada') =>
  (await createSubscriber(runtime, team.principal, projectId, { display_name: name, consent: false })).id;
const liveCount = async (key: { pk: string; sk: string }) =>
  Number((await runtime.store.get(key))?.live_subscription_count ?? 0);
const deadlines = async () =>
  (await scanTable(runtime.store)).filter(
    (item) => item.entity === 'deadline' && item.kind === SUBSCRIPTION_DEADLINE_KIND,
  );
/** Runs the deadline worker at the clock's now. */
const tick = () => applyDueDeadlines(runtime, clock.nowMs());

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  team = await seedTeam(runtime.store, clock);
  projectId = (await ok('POST', '/v1/projects', { name: 'Book club', platform_type: 'telegram' }, 201)).id;
  gold = await ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    { name: 'Gold', amount: 900, currency: 'EUR', interval: 'month', trial_days: 7 },
    201,
  );
  silver = await ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    { name: 'Silver', amount: 300, currency: 'EUR', interval: 'month' },
    201,
  );
  free = await ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    { name: 'Free', amount: 0, currency: 'EUR', interval: 'month' },
    201,
  );
  subscriberId = await newSubscriber();
  eventCursor = new TeamEventCursor(runtime.store, team.team.id);
  await newEvents();
});

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
      cancel_at_period_end: false,
      canceled_at: null,
      cancellation_reason: null,
      invite_links: [],
      status_changed_at: now,
      created_at: now,
      updated_at: now,
    });
    expect(Date.parse(subscription.current_period_end)).toBeGreaterThan(clock.nowMs() + 27 * DAY);
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
      trial_ends_at: isoTime(clock.nowMs() + 7 * DAY),
      current_period_end: isoTime(clock.nowMs() + 7 * DAY),
    });
    const startsAt = isoTime(clock.nowMs() + 2 * DAY);
    const scheduled = await subscribe({ starts_at: startsAt, subscriber_id: await newSubscriber('Cy') });
    expect(scheduled).toMatchObject({
      status: 'scheduled',
      has_access: false,
      starts_at: startsAt,
      current_period_start: null,
      current_period_end: null,
    });
    const endsAt = isoTime(clock.nowMs() + 10 * DAY);
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
        ends_at: isoTime(clock.nowMs() - DAY),
      }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscriptions`, {
        subscriber_id: subscriberId,
        plan_id: gold.id,
        starts_at: isoTime(clock.nowMs() - DAY),
      }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscriptions`, {
        subscriber_id: subscriberId,
        plan_id: gold.id,
        trial: true,
        ends_at: isoTime(clock.nowMs() + DAY),
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

    clock.advance(HOUR);
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
    /** The requests of one REST transition beyond authentication, by what they touch (transactions by their kind only). */
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
    // Access stays: the Idempotency-Key's completed record rides in the effect's transaction (no claim before, no UpdateItem after).
    expect(await requestsOf('cancel', { at_period_end: true }, { 'Idempotency-Key': randomUUID() })).toEqual([
      ...reads,
      'TransactWrite',
    ]);
    expect(await requestsOf('resume', {})).toEqual([...reads, 'TransactWrite']);
    // Paid access ends: member.churned depends on the subscriber's other subscriptions, which its access summary (in the batch) names.
    expect(await requestsOf('pause', {})).toEqual([...reads, 'TransactWrite']);
    // Access starts again for a converted subscriber of a project without resources: no member event can depend on anything else.
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
    const scheduled = await subscribe({ plan_id: silver.id, starts_at: isoTime(clock.nowMs() + DAY) });
    expect(await summary()).toMatchObject({ granting: [paid.id, gratis.id].sort(), paid: [paid.id] });
    await ok('POST', `/v1/subscriptions/${paid.id}/pause`, {});
    expect(await summary()).toMatchObject({
      granting: [gratis.id],
      paid: [],
      emptied: [subscriberAccessAttribute.paid],
    });
    clock.advance(DAY);
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
    const scheduled = await subscribe({ plan_id: silver.id, starts_at: isoTime(clock.nowMs() + DAY) });
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

describe('clock-driven transitions (deadline worker)', () => {
  it('ends a trial, renews the period, and applies each deadline once', async () => {
    const subscription = await subscribe({ trial: true });
    await newEvents();
    expect(await tick()).toEqual({ applied: 0, failed: 0 });
    clock.advance(7 * DAY);
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
    clock.advance(Date.parse(renewed.current_period_end) - clock.nowMs() + 40 * DAY);
    await tick();
    expect(types(await newEvents())).toEqual(['subscription.renewed', 'subscription.renewed']);
    expect((await deadlines()).length).toBe(1);
  });

  it('starts a scheduled subscription, expires a fixed term and cancels at the period end', async () => {
    const scheduled = await subscribe({ starts_at: isoTime(clock.nowMs() + DAY), trial: true });
    const fixed = await subscribe({
      ends_at: isoTime(clock.nowMs() + 3 * DAY),
      plan_id: free.id,
      subscriber_id: await newSubscriber('Gus'),
    });
    const leaving = await subscribe({ plan_id: silver.id, subscriber_id: await newSubscriber('Hal') });
    await ok('POST', `/v1/subscriptions/${leaving.id}/cancel`, {});
    await newEvents();

    clock.advance(DAY);
    await tick();
    expect(await ok('GET', `/v1/subscriptions/${scheduled.id}`)).toMatchObject({
      status: 'trialing',
      previous_status: 'scheduled',
      has_access: true,
    });
    expect(types(await newEvents())).toEqual(['subscription.activated', 'member.converted']);

    clock.advance(2 * DAY);
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

  it('applies the 23-hour incomplete expiry and the 14-day past-due and 30-day unpaid limits', async () => {
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
      [isoTime(Date.parse(incomplete.created_at) + 23 * HOUR), isoTime(clock.nowMs() + 14 * DAY)].sort(),
    );

    clock.advance(23 * HOUR);
    await tick();
    expect(await ok('GET', `/v1/subscriptions/${incomplete.id}`)).toMatchObject({
      status: 'incomplete_expired',
      previous_status: 'incomplete',
    });
    expect(types(await newEvents())).toEqual(['subscription.incomplete_expired']);

    clock.advance(14 * DAY);
    await tick();
    expect(await ok('GET', `/v1/subscriptions/${overdue.id}`)).toMatchObject({
      status: 'unpaid',
      previous_status: 'past_due',
      has_access: false,
    });
    expect(types(await newEvents())).toEqual(['subscription.unpaid', 'member.churned']);
    clock.advance(30 * DAY);
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
    clock.advance(HOUR);
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
    const fixed = await subscribe({ plan_id: free.id, ends_at: isoTime(clock.nowMs() + 3 * DAY) });
    const open = await subscribe({ plan_id: silver.id });
    expect(await checkOnce(counting)).toEqual(await expected(open.id)); // a month's period outlasts three days
    await ok('POST', `/v1/subscriptions/${open.id}/cancel`, { at_period_end: false });
    expect(await checkOnce(counting)).toEqual(await expected(fixed.id));
    clock.advance(HOUR);
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
