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
import { describe, expect, it } from 'vitest';
import { DAY_MS, isoTime } from '../../shared/clock.js';
import { redactPayload } from '../../shared/domain/webhook-deliveries/fan-out.js';
import { expectRestProblem, expectToolProblem, scanTable } from '../support/guarantees.js';
import { tool } from '../support/calls.js';
import { seedToken } from '../support/store.js';
import {
  call,
  clock,
  free,
  gold,
  grant,
  newEvents,
  newSubscriber,
  ok,
  projectId,
  record,
  runtime,
  settle,
  subscriberId,
  team,
  types,
  usePaymentsFixture,
} from '../support/fixtures/payments.js';

usePaymentsFixture();

const paymentItems = async () =>
  (await scanTable(runtime.store)).filter((item) => item.entity === 'payment' || item.entity === 'subscriber_payment');

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
      clock.advance(DAY_MS);
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
