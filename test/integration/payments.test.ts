/**
 * Payments (DESIGN D10, D15, D16), `manual` provider, against DynamoDB Local: recording
 * a payment (for a subscription, or the first payment of a new subscription created pending, incomplete
 * or active), settling a pending one, reading it by id alone (REST and `get_payment`), listing (filters:
 * subscriber, status, provider, date range; cursor paging; `list_payments`), refunds (partial, full,
 * accumulated, `cancel: true`; REST and `refund_payment`), validation errors and CONFLICTs naming the
 * status, and every D15 effect of a payment outcome — each in the payment's own transaction, with its
 * `payment.*` event first and the subscription's event after; where the transition table has no row the
 * payment is recorded and the subscription left unchanged. Every event is read from the outbox and
 * checked against its published JSON Schema.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { isoTime } from '../../shared/clock.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { redactPayload } from '../../shared/domain/webhook-deliveries/fan-out.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { expectRestProblem, expectToolProblem, scanTable } from '../support/guarantees.js';
import { rest, tool } from '../support/calls.js';
import { TeamEventCursor } from '../support/events.js';
import { createTestRuntime, seedTeam, seedToken, testClock, type TestRuntime } from '../support/store.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;

let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;
let gold: { id: string; amount: number };
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
  extra: { headers?: Record<string, string>; query?: Record<string, string>; token?: string } = {},
) => rest(runtime, { method, path, token: team.token, body, ...extra });
const ok = async (
  method: string,
  path: string,
  body?: unknown,
  status = 200,
  extra: { query?: Record<string, string>; headers?: Record<string, string> } = {},
) => {
  const reply = await call(method, path, body, extra);
  expect(reply.status, reply.text).toBe(status);
  return reply.json;
};
const record = (body: Record<string, unknown>) => ok('POST', `/v1/projects/${projectId}/payments`, body, 201);
const settle = (paymentId: string, status: 'succeeded' | 'failed') =>
  ok('POST', `/v1/payments/${paymentId}`, { status });
const refund = (paymentId: string, body: Record<string, unknown> = {}) =>
  ok('POST', `/v1/payments/${paymentId}/refund`, body);
const subscription = (id: string) => ok('GET', `/v1/subscriptions/${id}`);
const grant = (body: Record<string, unknown> = {}) =>
  ok(
    'POST',
    `/v1/projects/${projectId}/subscriptions`,
    { subscriber_id: subscriberId, plan_id: gold.id, ...body },
    201,
  );
const newSubscriber = async (name: string, contact: { email?: string; consent?: boolean } = {}) =>
  (
    await createSubscriber(runtime, team.principal, projectId, {
      display_name: name,
      consent: contact.consent ?? false,
      ...(contact.email ? { email: contact.email } : {}),
    })
  ).id;
const paymentItems = async () =>
  (await scanTable(runtime.store)).filter((item) => item.entity === 'payment' || item.entity === 'subscriber_payment');
/** Runs the deadline worker at the clock's now. */
const tick = () => applyDueDeadlines(runtime, clock.nowMs());

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  team = await seedTeam(runtime.store, clock);
  projectId = (await ok('POST', '/v1/projects', { name: 'Book club', platform_type: 'telegram' }, 201)).id;
  await ok('PUT', `/v1/projects/${projectId}/payment-provider`, { provider: 'manual' });
  gold = await ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    { name: 'Gold', amount: 900, currency: 'EUR', interval: 'month', trial_days: 7 },
    201,
  );
  free = await ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    { name: 'Free', amount: 0, currency: 'EUR', interval: 'month' },
    201,
  );
  subscriberId = await newSubscriber('Ada', { email: 'ada@example.com', consent: true });
  eventCursor = new TeamEventCursor(runtime.store, team.team.id);
  await newEvents();
});

describe('the first payment of a new subscription (D15 "(new)" row)', () => {
  it('a pending payment creates a pending subscription billed through the provider; settling it succeeded activates it', async () => {
    const payment = await record({
      subscriber_id: subscriberId,
      plan_id: gold.id,
      status: 'pending',
      provider_payment_id: 'SEPA-2026-001',
    });
    const now = isoTime(clock.nowMs());
    expect(payment).toEqual({
      id: expect.any(String),
      project_id: projectId,
      subscriber_id: subscriberId,
      subscription_id: expect.any(String),
      amount: 900,
      amount_refunded: 0,
      currency: 'EUR',
      status: 'pending',
      provider: 'manual',
      provider_payment_id: 'SEPA-2026-001',
      billing_reason: 'subscription_create',
      created_at: now,
      updated_at: now,
    });
    const pending = await subscription(payment.subscription_id);
    expect(pending).toMatchObject({
      status: 'pending',
      has_access: false,
      source: 'provider',
      payment_provider: 'manual',
      plan_id: gold.id,
      current_period_start: null,
      current_period_end: null,
    });
    const created = await newEvents();
    expect(types(created)).toEqual(['payment.pending', 'subscription.created']);
    expect(created[0]).toMatchObject({
      project_id: projectId,
      data: { payment, subscription: pending, subscriber: { id: subscriberId, email: 'ada@example.com' } },
    });
    expect(created[1].data).toMatchObject({ subscription: pending });

    clock.advance(HOUR);
    const settled = await settle(payment.id, 'succeeded');
    expect(settled).toEqual({ ...payment, status: 'succeeded', updated_at: isoTime(clock.nowMs()) });
    const active = await subscription(payment.subscription_id);
    expect(active).toMatchObject({
      status: 'active',
      previous_status: 'pending',
      has_access: true,
      current_period_start: isoTime(clock.nowMs()),
    });
    const events = await newEvents();
    expect(types(events)).toEqual(['payment.succeeded', 'subscription.activated', 'member.converted']);
    expect(events[0].data).toMatchObject({ payment: settled, subscription: active });
    expect(events[1].data).toMatchObject({ subscription: active });
    expect(await ok('GET', `/v1/payments/${payment.id}`)).toEqual(settled);
  });

  it('a failed payment creates an incomplete subscription; another failure leaves it incomplete (no row); a succeeded one activates it', async () => {
    const failed = await record({ subscriber_id: subscriberId, plan_id: gold.id, status: 'failed', amount: 1200 });
    expect(failed).toMatchObject({ status: 'failed', amount: 1200, billing_reason: 'subscription_create' });
    expect(await subscription(failed.subscription_id)).toMatchObject({
      status: 'incomplete',
      has_access: false,
      source: 'provider',
    });
    expect(types(await newEvents())).toEqual(['payment.failed', 'subscription.created']);

    const again = await record({ subscription_id: failed.subscription_id, status: 'failed' });
    expect(again).toMatchObject({
      status: 'failed',
      billing_reason: 'subscription_create',
      subscription_id: failed.subscription_id,
    });
    const unchanged = await subscription(failed.subscription_id);
    expect(unchanged).toMatchObject({ status: 'incomplete', previous_status: null });
    const events = await newEvents();
    expect(types(events)).toEqual(['payment.failed']);
    expect(events[0].data).toMatchObject({ payment: again, subscription: unchanged });

    const paid = await record({ subscription_id: failed.subscription_id, status: 'succeeded' });
    expect(paid).toMatchObject({ status: 'succeeded', billing_reason: 'subscription_create', amount: 900 });
    expect(await subscription(failed.subscription_id)).toMatchObject({
      status: 'active',
      previous_status: 'incomplete',
    });
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.activated', 'member.converted']);
  });

  it('a succeeded payment creates an active subscription with its first period', async () => {
    const payment = await record({
      subscriber_id: subscriberId,
      plan_id: gold.id,
      status: 'succeeded',
      currency: 'EUR',
    });
    const active = await subscription(payment.subscription_id);
    expect(active).toMatchObject({
      status: 'active',
      has_access: true,
      source: 'provider',
      payment_provider: 'manual',
      current_period_start: isoTime(clock.nowMs()),
    });
    expect(Date.parse(active.current_period_end)).toBeGreaterThan(clock.nowMs() + 27 * DAY);
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.created', 'member.converted']);
  });

  it('a pending first payment that never completes: the clock expires the subscription after 23 hours; settling it later records the payment and leaves the subscription', async () => {
    const payment = await record({ subscriber_id: subscriberId, plan_id: gold.id, status: 'pending' });
    await newEvents();
    clock.advance(24 * HOUR);
    await tick();
    expect(await subscription(payment.subscription_id)).toMatchObject({ status: 'incomplete_expired' });
    expect(types(await newEvents())).toEqual(['subscription.incomplete_expired']);
    const settled = await settle(payment.id, 'succeeded');
    expect(settled.status).toBe('succeeded');
    expect(await subscription(payment.subscription_id)).toMatchObject({ status: 'incomplete_expired' });
    expect(types(await newEvents())).toEqual(['payment.succeeded']);
  });
});

describe('payments for an existing subscription drive D15', () => {
  it('renewal succeeded on active → renewed (the period advances); failed on active → past_due; succeeded on past_due → activated', async () => {
    const granted = await grant();
    await newEvents();
    const renewal = await record({ subscription_id: granted.id, status: 'succeeded' });
    expect(renewal).toMatchObject({ billing_reason: 'renewal', amount: 900, subscriber_id: subscriberId });
    const renewed = await subscription(granted.id);
    expect(renewed).toMatchObject({
      status: 'active',
      previous_status: 'active',
      current_period_start: granted.current_period_end,
    });
    expect(Date.parse(renewed.current_period_end)).toBeGreaterThan(Date.parse(granted.current_period_end));
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.renewed']);

    const failed = await record({ subscription_id: granted.id, status: 'failed' });
    expect(failed.billing_reason).toBe('renewal');
    expect(await subscription(granted.id)).toMatchObject({
      status: 'past_due',
      previous_status: 'active',
      has_access: true,
    });
    expect(types(await newEvents())).toEqual(['payment.failed', 'subscription.past_due']);

    // Another failure while past_due has no row: recorded, the subscription stays past_due.
    await record({ subscription_id: granted.id, status: 'failed' });
    expect(await subscription(granted.id)).toMatchObject({ status: 'past_due', previous_status: 'active' });
    expect(types(await newEvents())).toEqual(['payment.failed']);

    clock.advance(HOUR);
    await record({ subscription_id: granted.id, status: 'succeeded' });
    expect(await subscription(granted.id)).toMatchObject({
      status: 'active',
      previous_status: 'past_due',
      current_period_start: isoTime(clock.nowMs()),
    });
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.activated']);
  });

  it('on trialing: a failed payment → past_due; a succeeded one → activated (trial ended, paid), its period starting when the trial ends', async () => {
    const trialing = await grant({ trial: true });
    await newEvents();
    await record({ subscription_id: trialing.id, status: 'succeeded' });
    const active = await subscription(trialing.id);
    expect(active).toMatchObject({
      status: 'active',
      previous_status: 'trialing',
      current_period_start: trialing.trial_ends_at,
    });
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.activated']);

    const other = await grant({ trial: true, subscriber_id: await newSubscriber('Bo') });
    await newEvents();
    const pending = await record({ subscription_id: other.id, status: 'pending' });
    expect(await subscription(other.id)).toMatchObject({ status: 'trialing' });
    expect(types(await newEvents())).toEqual(['payment.pending']);
    await settle(pending.id, 'failed');
    expect(await subscription(other.id)).toMatchObject({ status: 'past_due', previous_status: 'trialing' });
    expect(types(await newEvents())).toEqual(['payment.failed', 'subscription.past_due']);
  });

  it('succeeded on unpaid → activated', async () => {
    const granted = await grant();
    await record({ subscription_id: granted.id, status: 'failed' });
    clock.advance(15 * DAY);
    await tick();
    expect(await subscription(granted.id)).toMatchObject({ status: 'unpaid', has_access: false });
    await newEvents();
    await record({ subscription_id: granted.id, status: 'succeeded' });
    expect(await subscription(granted.id)).toMatchObject({
      status: 'active',
      previous_status: 'unpaid',
      has_access: true,
    });
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.activated']);
  });

  it('manual payments, pending payments and statuses without a row leave the subscription unchanged', async () => {
    const granted = await grant();
    await newEvents();
    const manual = await record({
      subscription_id: granted.id,
      status: 'succeeded',
      billing_reason: 'manual',
      amount: 150,
    });
    expect(manual).toMatchObject({ billing_reason: 'manual', amount: 150 });
    expect(await subscription(granted.id)).toEqual(granted);
    expect(types(await newEvents())).toEqual(['payment.succeeded']);

    await ok('POST', `/v1/subscriptions/${granted.id}/pause`, {});
    const paused = await subscription(granted.id);
    await newEvents();
    await record({ subscription_id: granted.id, status: 'succeeded' });
    await record({ subscription_id: granted.id, status: 'failed' });
    expect(await subscription(granted.id)).toEqual(paused);
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'payment.failed']);
  });
});

describe('refunds', () => {
  it('refunds in part, accumulates, becomes refunded when nothing is left, then refuses more (CONFLICT naming the status)', async () => {
    const granted = await grant();
    const payment = await record({ subscription_id: granted.id, status: 'succeeded' });
    await newEvents();
    clock.advance(HOUR);
    const partial = await refund(payment.id, { amount: 300, reason: 'Missed a week' });
    expect(partial).toEqual({
      ...payment,
      amount_refunded: 300,
      status: 'succeeded',
      updated_at: isoTime(clock.nowMs()),
    });
    let events = await newEvents();
    expect(types(events)).toEqual(['payment.refunded']);
    expect(events[0].data).toMatchObject({
      payment: partial,
      refund: { amount: 300, reason: 'Missed a week' },
      subscription: { id: granted.id, status: 'active' },
    });

    expectRestProblem(await call('POST', `/v1/payments/${payment.id}/refund`, { amount: 601 }), 'VALIDATION_FAILED');
    const fullRefund = (await tool(runtime, team.principal, 'refund_payment', { id: payment.id })).structuredContent;
    expect(fullRefund).toMatchObject({ amount_refunded: 900, status: 'refunded' });
    events = await newEvents();
    expect(types(events)).toEqual(['payment.refunded']);
    expect(events[0].data).toMatchObject({ refund: { amount: 600, reason: null } });
    expect(await subscription(granted.id)).toMatchObject({ status: 'active' });

    const problem = expectRestProblem(await call('POST', `/v1/payments/${payment.id}/refund`, {}), 'CONFLICT');
    expect(problem.detail).toContain('refunded');
    expect(await newEvents()).toEqual([]);
  });

  it('cancel: true also cancels the subscription at once, in the same transaction; a canceled subscription refuses it and nothing changes', async () => {
    const payment = await record({ subscriber_id: subscriberId, plan_id: gold.id, status: 'succeeded' });
    await newEvents();
    const refunded = await refund(payment.id, { cancel: true, reason: 'Asked for a refund' });
    expect(refunded).toMatchObject({ status: 'refunded', amount_refunded: 900 });
    expect(await subscription(payment.subscription_id)).toMatchObject({
      status: 'canceled',
      cancellation_reason: 'Asked for a refund',
      has_access: false,
    });
    const events = await newEvents();
    expect(types(events)).toEqual(['payment.refunded', 'subscription.canceled', 'member.churned']);
    expect(events[0].data).toMatchObject({ subscription: { status: 'canceled' } });

    const second = await record({
      subscription_id: payment.subscription_id,
      status: 'succeeded',
      billing_reason: 'manual',
    });
    await newEvents();
    const problem = expectRestProblem(
      await call('POST', `/v1/payments/${second.id}/refund`, { cancel: true }),
      'CONFLICT',
    );
    expect(problem.detail).toContain('canceled');
    expect(await ok('GET', `/v1/payments/${second.id}`)).toEqual(second);
    expect(await newEvents()).toEqual([]);
  });

  it('refuses to refund a pending or failed payment, naming its status', async () => {
    const granted = await grant();
    const pending = await record({ subscription_id: granted.id, status: 'pending' });
    const failed = await record({ subscription_id: granted.id, status: 'failed', billing_reason: 'manual' });
    expect(expectRestProblem(await call('POST', `/v1/payments/${pending.id}/refund`, {}), 'CONFLICT').detail).toContain(
      'is pending',
    );
    expect(
      expectToolProblem(await tool(runtime, team.principal, 'refund_payment', { id: failed.id }), 'CONFLICT').detail,
    ).toContain('is failed');
    expectRestProblem(await call('POST', `/v1/payments/${randomUUID()}/refund`, {}), 'NOT_FOUND');
  });
});

describe('read and list', () => {
  it('reads a payment by id alone over REST and get_payment; NOT_FOUND otherwise', async () => {
    const payment = await record({ subscriber_id: subscriberId, plan_id: gold.id, status: 'succeeded' });
    expect(await ok('GET', `/v1/payments/${payment.id}`)).toEqual(payment);
    expect((await tool(runtime, team.principal, 'get_payment', { id: payment.id })).structuredContent).toEqual(payment);
    expectRestProblem(await call('GET', `/v1/payments/${randomUUID()}`), 'NOT_FOUND');
    expectToolProblem(await tool(runtime, team.principal, 'get_payment', { id: randomUUID() }), 'NOT_FOUND');
  });

  it('lists newest first with cursor paging and filters: subscriber (through its index), status, provider, date range', async () => {
    const bo = await newSubscriber('Bo');
    const adaSubscription = await grant();
    const boSubscription = await grant({ subscriber_id: bo });
    const made: { id: string; subscriber_id: string; status: string; created_at: string }[] = [];
    for (let index = 0; index < 6; index++) {
      clock.advance(DAY);
      const forAda = index % 2 === 0;
      made.push(
        await record({
          subscription_id: forAda ? adaSubscription.id : boSubscription.id,
          status: index % 3 === 0 ? 'failed' : 'succeeded',
          billing_reason: 'manual',
        }),
      );
    }
    const newestFirst = [...made].reverse().map((payment) => payment.id);
    const list = (query: Record<string, string>) =>
      ok('GET', `/v1/projects/${projectId}/payments`, undefined, 200, { query });
    const all = async (query: Record<string, string>) => {
      const ids: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { data: { id: string }[]; next_cursor: string | null } = await list({
          ...query,
          limit: '2',
          ...(cursor ? { cursor } : {}),
        });
        expect(page.data.length).toBeLessThanOrEqual(2);
        ids.push(...page.data.map((payment) => payment.id));
        cursor = page.next_cursor;
      } while (cursor);
      return ids;
    };
    expect(await all({})).toEqual(newestFirst);
    expect((await list({})).data.map((payment: { id: string }) => payment.id)).toEqual(newestFirst);
    expect(await all({ subscriber_id: bo })).toEqual(
      newestFirst.filter((id) => made.find((payment) => payment.id === id)!.subscriber_id === bo),
    );
    expect(await all({ status: 'failed' })).toEqual(
      newestFirst.filter((id) => made.find((payment) => payment.id === id)!.status === 'failed'),
    );
    expect(await all({ subscriber_id: subscriberId, status: 'succeeded' })).toEqual(
      newestFirst.filter(
        (id) =>
          made.find((payment) => payment.id === id)!.subscriber_id === subscriberId &&
          made.find((payment) => payment.id === id)!.status === 'succeeded',
      ),
    );
    expect(await all({ provider: 'manual' })).toEqual(newestFirst);
    expect(await all({ provider: 'stripe' })).toEqual([]);
    // [created_after, created_before): payments 1..3 (0-based), on both lists.
    const range = { created_after: made[1].created_at, created_before: made[4].created_at };
    expect(await all(range)).toEqual([made[3].id, made[2].id, made[1].id]);
    expect(await all({ ...range, subscriber_id: subscriberId })).toEqual([made[2].id]);
    expect(await all({ created_after: made[5].created_at.replace('.000Z', 'Z') })).toEqual([made[5].id]);
    expect(await all({ created_before: made[1].created_at })).toEqual([made[0].id]);

    const viaTool = (
      await tool(runtime, team.principal, 'list_payments', { project_id: projectId, subscriber_id: bo, limit: 10 })
    ).structuredContent as {
      data: { id: string }[];
      next_cursor: string | null;
    };
    expect(viaTool.data.map((payment) => payment.id)).toEqual(await all({ subscriber_id: bo }));
    expect(viaTool.next_cursor).toBeNull();
  });

  it('refuses an empty date range, a cursor of another list, unknown filters and another team’s or unknown project', async () => {
    const granted = await grant();
    await record({ subscription_id: granted.id, status: 'succeeded' });
    await record({ subscription_id: granted.id, status: 'succeeded' });
    const path = `/v1/projects/${projectId}/payments`;
    const now = isoTime(clock.nowMs());
    expectRestProblem(
      await call('GET', path, undefined, { query: { created_after: now, created_before: now } }),
      'VALIDATION_FAILED',
    );
    const page = await ok('GET', path, undefined, 200, { query: { limit: '1' } });
    expect(page.next_cursor).toEqual(expect.any(String));
    expectRestProblem(
      await call('GET', path, undefined, { query: { cursor: page.next_cursor, subscriber_id: subscriberId } }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(await call('GET', path, undefined, { query: { amount: '5' } }), 'VALIDATION_FAILED');
    expectRestProblem(await call('GET', path, undefined, { query: { status: 'paid' } }), 'VALIDATION_FAILED');
    expectRestProblem(await call('GET', `/v1/projects/${randomUUID()}/payments`), 'NOT_FOUND');
  });
});

describe('validation and conflicts', () => {
  it('refuses bad records without writing anything', async () => {
    const granted = await grant();
    const path = `/v1/projects/${projectId}/payments`;
    const before = await paymentItems();
    const refused: [Record<string, unknown>, 'VALIDATION_FAILED' | 'NOT_FOUND' | 'CONFLICT', string?][] = [
      [{ subscription_id: granted.id, status: 'succeeded', extra: 1 }, 'VALIDATION_FAILED'],
      [{ subscription_id: granted.id, status: 'refunded' }, 'VALIDATION_FAILED'],
      [{ subscription_id: granted.id }, 'VALIDATION_FAILED'],
      [{ subscription_id: granted.id, status: 'succeeded', amount: 0 }, 'VALIDATION_FAILED'],
      [{ subscription_id: granted.id, status: 'succeeded', amount: 1.5 }, 'VALIDATION_FAILED'],
      [{ subscription_id: granted.id, status: 'succeeded', currency: 'USD' }, 'VALIDATION_FAILED', 'currency'],
      [{ subscription_id: granted.id, status: 'succeeded', currency: 'XYZ' }, 'VALIDATION_FAILED'],
      [{ status: 'succeeded' }, 'VALIDATION_FAILED', 'subscription_id'],
      [
        { subscription_id: granted.id, subscriber_id: subscriberId, plan_id: gold.id, status: 'succeeded' },
        'VALIDATION_FAILED',
        'subscription_id',
      ],
      [{ subscriber_id: subscriberId, status: 'succeeded' }, 'VALIDATION_FAILED', 'plan_id'],
      [
        { subscriber_id: subscriberId, plan_id: gold.id, status: 'succeeded', billing_reason: 'renewal' },
        'VALIDATION_FAILED',
        'billing_reason',
      ],
      [{ subscriber_id: subscriberId, plan_id: free.id, status: 'succeeded' }, 'VALIDATION_FAILED', 'plan_id'],
      [{ subscription_id: randomUUID(), status: 'succeeded' }, 'NOT_FOUND'],
      [{ subscriber_id: randomUUID(), plan_id: gold.id, status: 'succeeded' }, 'NOT_FOUND'],
      [
        { subscription_id: granted.id, status: 'succeeded', billing_reason: 'subscription_create' },
        'CONFLICT',
        'active',
      ],
    ];
    for (const [body, code, mentions] of refused) {
      const problem = expectRestProblem(await call('POST', path, body), code);
      if (mentions)
        expect(`${problem.detail} ${JSON.stringify(problem.errors ?? [])}`, JSON.stringify(body)).toContain(mentions);
    }
    const pending = await record({ subscriber_id: subscriberId, plan_id: gold.id, status: 'pending' });
    const conflict = expectRestProblem(
      await call('POST', path, {
        subscription_id: pending.subscription_id,
        status: 'succeeded',
        billing_reason: 'renewal',
      }),
      'CONFLICT',
    );
    expect(conflict.detail).toContain('pending');
    expect((await paymentItems()).length).toBe(before.length + 2);
  });

  it('refuses to settle a payment that is not pending (CONFLICT naming its status) and a bad outcome', async () => {
    const payment = await record({ subscriber_id: subscriberId, plan_id: gold.id, status: 'pending' });
    expectRestProblem(await call('POST', `/v1/payments/${payment.id}`, { status: 'refunded' }), 'VALIDATION_FAILED');
    expectRestProblem(await call('POST', `/v1/payments/${payment.id}`, {}), 'VALIDATION_FAILED');
    await settle(payment.id, 'failed');
    await newEvents();
    const problem = expectRestProblem(
      await call('POST', `/v1/payments/${payment.id}`, { status: 'succeeded' }),
      'CONFLICT',
    );
    expect(problem.detail).toContain('is failed');
    expect(await newEvents()).toEqual([]);
    expectRestProblem(await call('POST', `/v1/payments/${randomUUID()}`, { status: 'succeeded' }), 'NOT_FOUND');
  });

  it('records only with the manual provider connected, and a first payment needs project-subscription:create', async () => {
    const granted = await grant();
    const other = (await ok('POST', '/v1/projects', { name: 'No provider', platform_type: 'telegram' }, 201)).id;
    const problem = expectRestProblem(
      await call('POST', `/v1/projects/${other}/payments`, { subscription_id: granted.id, status: 'succeeded' }),
      'CONFLICT',
    );
    expect(problem.detail).toContain('no payment provider connected');
    // A subscription of another project of the team: NOT_FOUND under this one.
    await ok('PUT', `/v1/projects/${other}/payment-provider`, { provider: 'manual' });
    expectRestProblem(
      await call('POST', `/v1/projects/${other}/payments`, { subscription_id: granted.id, status: 'succeeded' }),
      'NOT_FOUND',
    );

    const recorder = await seedToken(runtime.store, clock, {
      teamId: team.team.id,
      abilities: ['project-subscription:update'],
    });
    const asRecorder = (body: Record<string, unknown>) =>
      call('POST', `/v1/projects/${projectId}/payments`, body, { token: recorder.token });
    expect(
      (await asRecorder({ subscription_id: granted.id, status: 'succeeded', billing_reason: 'manual' })).status,
    ).toBe(201);
    expectRestProblem(
      await asRecorder({ subscriber_id: subscriberId, plan_id: gold.id, status: 'succeeded' }),
      'TOKEN_MISSING_ABILITY',
    );
    const reader = await seedToken(runtime.store, clock, { teamId: team.team.id, abilities: ['project-payment:view'] });
    expectRestProblem(
      await call(
        'POST',
        `/v1/projects/${projectId}/payments`,
        { subscription_id: granted.id, status: 'succeeded' },
        { token: reader.token },
      ),
      'TOKEN_MISSING_ABILITY',
    );
  });

  it('replays a record with the same Idempotency-Key: one payment, one event', async () => {
    const granted = await grant();
    await newEvents();
    const headers = { 'Idempotency-Key': randomUUID() };
    const first = await call(
      'POST',
      `/v1/projects/${projectId}/payments`,
      { subscription_id: granted.id, status: 'succeeded' },
      { headers },
    );
    const again = await call(
      'POST',
      `/v1/projects/${projectId}/payments`,
      { subscription_id: granted.id, status: 'succeeded' },
      { headers },
    );
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replay']).toBe('true');
    expect(again.json).toEqual(first.json);
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.renewed']);
  });
});

describe('payload exposure (D10)', () => {
  it('payment events carry the subscriber’s contact data only when they consented, and the fan-out strips it for an owner without project-user:view', async () => {
    const shy = await newSubscriber('Shy', { email: 'shy@example.com', consent: false });
    await record({ subscriber_id: shy, plan_id: gold.id, status: 'pending' });
    await record({ subscriber_id: subscriberId, plan_id: gold.id, status: 'pending' });
    const [shyEvent, , adaEvent] = await newEvents();
    expect(shyEvent.type).toBe('payment.pending');
    expect(shyEvent.data).toMatchObject({ subscriber: { id: shy, consent: false } });
    expect((shyEvent.data as { subscriber: Record<string, unknown> }).subscriber).not.toHaveProperty('email');
    expect(adaEvent.type).toBe('payment.pending');
    expect(adaEvent.data).toMatchObject({ subscriber: { id: subscriberId, email: 'ada@example.com' } });
    expect(redactPayload(adaEvent.data, ['project-payment:view', 'project-user:view'])).toEqual(adaEvent.data);
    const redacted = redactPayload(adaEvent.data, ['project-payment:view']) as {
      subscriber: Record<string, unknown>;
      payment: unknown;
    };
    expect(redacted.subscriber).not.toHaveProperty('email');
    expect(redacted.payment).toEqual((adaEvent.data as { payment: unknown }).payment);
  });
});
