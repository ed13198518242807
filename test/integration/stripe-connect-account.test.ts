/**
 * Stripe, outbound half (DESIGN D16, D22) with the real `stripe` SDK pointed at a loopback fake
 * of the Stripe API (test/support/stripe-api.ts): connecting a project (the key checked with one Stripe
 * call, both secrets stored sealed in the project's transaction, never in an answer, event, stored item in
 * clear, activity entry or log line; a refused key, a malformed one, an outage with its retry; disconnect
 * deleting the credential), plan sync (Product and Price created; a rename updates the Product and keeps the
 * Price; a new price version creates a new Price and deactivates the old; Stripe's refusal recorded with its
 * code; 5xx retried; an outage recorded then retried), and refunds through the Refunds API (one
 * `payment.refunded`, the Stripe refund id stored; an outage leaves the payment unchanged and a retry
 * works; Stripe's refusal is a CONFLICT). Against DynamoDB Local; every event is checked against its
 * published schema.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { keys } from '../../shared/store/keys.js';
import { domainSnapshot, expectRestProblem } from '../support/guarantees.js';
import { rest } from '../support/calls.js';
import {
  call,
  captureOutput,
  connect,
  everythingStored,
  newEvents,
  ok,
  projectId,
  requestsOfThisKey,
  runtime,
  secretKey,
  stripe,
  team,
  types,
  webhookSecret,
  useStripeConnectFixture,
} from '../support/fixtures/stripe-connect.js';

useStripeConnectFixture();

describe('connecting stripe', () => {
  it('checks the key with one Stripe call, stores both secrets sealed in the same change, and never shows them', async () => {
    const output = captureOutput();
    let reply;
    try {
      reply = await connect();
    } finally {
      output.stop();
    }
    expect(reply.status, reply.text).toBe(200);
    expect(reply.json.payment_provider).toEqual({
      provider: 'stripe',
      connected_at: expect.any(String),
      livemode: false,
    });
    expect(requestsOfThisKey().map((request) => `${request.method} ${request.path}`)).toEqual(['GET /v1/products']);
    expect(requestsOfThisKey()[0]).toMatchObject({ params: { limit: '1' }, authorization: true });

    const events = await newEvents();
    expect(types(events)).toEqual(['project.payment_provider_connected']);
    expect(events[0].data).toMatchObject({
      payment_provider: 'stripe',
      project: { payment_provider: { provider: 'stripe', livemode: false } },
    });
    const stored = await runtime.store.get(keys.credential(projectId, 'stripe'));
    expect(stored).toMatchObject({
      team_id: team.team.id,
      project_id: projectId,
      kind: 'stripe',
      public: { livemode: 'false' },
      secret_names: ['secret_key', 'webhook_secret'],
      sealed: { v: 1, kek: 'local' },
    });

    const everything = (await everythingStored()) + JSON.stringify(events) + reply.text + output.text();
    for (const secret of [secretKey, secretKey.slice(-12), webhookSecret, webhookSecret.slice(-12)])
      expect(everything).not.toContain(secret);

    // The same provider again with a rotated key: the credential is replaced, no event.
    const rotated = `rk_test_${randomBytes(18).toString('hex')}`;
    stripe.addKey(rotated, `acct_${projectId.slice(0, 8)}`);
    expect((await connect({ secret_key: rotated })).status).toBe(200);
    expect(await newEvents()).toEqual([]);
    expect(await runtime.store.get(keys.credential(projectId, 'stripe'))).not.toEqual(stored);
  });

  it('refuses a key Stripe rejects with Stripe\u2019s message (the key redacted), changing nothing', async () => {
    const before = await domainSnapshot(runtime.store);
    const unknownKey = `rk_live_${randomBytes(18).toString('hex')}Wv7Y`;
    const output = captureOutput();
    let reply;
    try {
      reply = await connect({ secret_key: unknownKey });
    } finally {
      output.stop();
    }
    const problem = expectRestProblem(reply, 'VALIDATION_FAILED');
    expect(problem.detail).toContain('Invalid API Key provided');
    expect(problem.errors).toEqual([{ path: 'secret_key', message: expect.any(String) }]);
    expect(reply.text + output.text()).not.toContain('Wv7Y');
    expect(reply.text).not.toContain(unknownKey.slice(8, 20));
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    expect(await newEvents()).toEqual([]);
  });

  it('refuses malformed and missing secrets before calling Stripe, and keys for manual', async () => {
    const calls = stripe.requests.length;
    const malformed = expectRestProblem(await connect({ secret_key: 'pk_test_publishable0000' }), 'VALIDATION_FAILED');
    expect(malformed.errors!.map((error) => error.path)).toEqual(['body.secret_key']);
    expect(JSON.stringify(malformed)).not.toContain('pk_test_publishable0000');
    expect(expectRestProblem(await connect({ webhook_secret: undefined }), 'VALIDATION_FAILED').errors).toEqual([
      { path: 'webhook_secret', message: 'is required to connect stripe' },
    ]);
    expect(
      expectRestProblem(
        await call('PUT', `/v1/projects/${projectId}/payment-provider`, { provider: 'manual', secret_key: secretKey }),
        'VALIDATION_FAILED',
      ).errors![0].path,
    ).toBe('secret_key');
    expect(stripe.requests.length).toBe(calls);
  });

  it('answers PROVIDER_UNAVAILABLE when Stripe cannot be reached after the retries, changing nothing; a retry connects', async () => {
    const before = await domainSnapshot(runtime.store);
    stripe.failNext({ refuse: true }, { times: 100, pathPrefix: '/v1/products' });
    const down = await connect();
    stripe.clearFailures();
    expect(down.status).toBe(502);
    expect(expectRestProblem(down, 'PROVIDER_UNAVAILABLE').detail).toContain('Stripe could not be reached');
    // 1 + 2 retries (the SDK re-sends once on a dropped connection, too)
    expect(requestsOfThisKey().length).toBeGreaterThanOrEqual(3);
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    expect(await newEvents()).toEqual([]);

    // A 500 once is retried within the same request.
    const calls = requestsOfThisKey().length;
    stripe.failNext(
      { status: 500, error: { type: 'api_error', message: 'An unknown error occurred.' } },
      { pathPrefix: '/v1/products' },
    );
    expect((await connect()).status).toBe(200);
    expect(requestsOfThisKey()).toHaveLength(calls + 2);
    expect(types(await newEvents())).toEqual(['project.payment_provider_connected']);
  });

  it('disconnects, deleting the stored credential', async () => {
    expect((await connect()).status).toBe(200);
    await newEvents();
    const disconnected = await ok('DELETE', `/v1/projects/${projectId}/payment-provider`);
    expect(disconnected.payment_provider).toBeNull();
    expect(types(await newEvents())).toEqual(['project.payment_provider_disconnected']);
    expect(await runtime.store.get(keys.credential(projectId, 'stripe'))).toBeUndefined();
  });
});

describe('refunds', () => {
  /** A succeeded Stripe payment as the inbound hook records it: made with manual, then moved to stripe. */
  async function stripePayment(): Promise<{ id: string; amount: number; provider_payment_id: string }> {
    await ok('PUT', `/v1/projects/${projectId}/payment-provider`, { provider: 'manual' });
    const plan = await ok(
      'POST',
      `/v1/projects/${projectId}/plans`,
      { name: 'Gold', amount: 900, currency: 'EUR', interval: 'month' },
      201,
    );
    const subscriber = await createSubscriber(runtime, team.principal, projectId, {
      display_name: 'Ada',
      consent: false,
    });
    const paymentIntent = `pi_${randomBytes(12).toString('hex')}`;
    const payment = await ok(
      'POST',
      `/v1/projects/${projectId}/payments`,
      { subscriber_id: subscriber.id, plan_id: plan.id, status: 'succeeded', provider_payment_id: paymentIntent },
      201,
    );
    await runtime.store.update({
      Key: keys.project(team.team.id, projectId),
      UpdateExpression: 'SET live_subscription_count = :zero',
      ExpressionAttributeValues: { ':zero': 0 },
    });
    await ok('DELETE', `/v1/projects/${projectId}/payment-provider`);
    expect((await connect()).status).toBe(200);
    await runtime.store.update({
      Key: keys.payment(team.team.id, payment.id),
      UpdateExpression: 'SET provider = :stripe',
      ExpressionAttributeValues: { ':stripe': 'stripe' },
    });
    await newEvents();
    return payment;
  }

  it('refunds through the Refunds API, records Stripe\u2019s refund id and emits one payment.refunded', async () => {
    const payment = await stripePayment();
    const refunded = await ok('POST', `/v1/payments/${payment.id}/refund`, { amount: 300, reason: 'Missed a week' });
    expect(refunded).toMatchObject({ id: payment.id, provider: 'stripe', status: 'succeeded', amount_refunded: 300 });
    const [request] = requestsOfThisKey().filter((entry) => entry.path === '/v1/refunds');
    expect(request).toMatchObject({
      method: 'POST',
      params: {
        payment_intent: payment.provider_payment_id,
        amount: '300',
        metadata: { payment_id: payment.id, reason: 'Missed a week' },
      },
      idempotency_key: expect.stringMatching(new RegExp(`^refund-${payment.id}-[0-9a-f-]{36}$`)),
    });
    const refund = stripe.refunds.at(-1)!;
    expect(await runtime.store.get(keys.payment(team.team.id, payment.id))).toMatchObject({
      provider_refund_id: refund.id,
      amount_refunded: 300,
    });
    const events = await newEvents();
    expect(types(events)).toEqual(['payment.refunded']);
    expect(events[0].data).toMatchObject({ payment: refunded, refund: { amount: 300, reason: 'Missed a week' } });

    // The rest: the payment becomes refunded; one more event.
    expect(await ok('POST', `/v1/payments/${payment.id}/refund`, {})).toMatchObject({
      status: 'refunded',
      amount_refunded: 900,
    });
    expect(types(await newEvents())).toEqual(['payment.refunded']);
    expect(stripe.refunds.at(-1)).toMatchObject({ amount: 600, payment_intent: payment.provider_payment_id });
  });

  it('leaves the payment unchanged when Stripe cannot be reached (PROVIDER_UNAVAILABLE), and a retry with the same key refunds once', async () => {
    const payment = await stripePayment();
    const before = await ok('GET', `/v1/payments/${payment.id}`);
    const refundsBefore = stripe.refunds.length;
    const key = randomUUID();
    const refund = (idempotencyKey: string) =>
      rest(runtime, {
        method: 'POST',
        path: `/v1/payments/${payment.id}/refund`,
        token: team.token,
        body: {},
        headers: { 'idempotency-key': idempotencyKey },
      });
    stripe.failNext({ refuse: true }, { times: 100, pathPrefix: '/v1/refunds' });
    const down = await refund(key);
    stripe.clearFailures();
    expect(down.status).toBe(502);
    expect(expectRestProblem(down, 'PROVIDER_UNAVAILABLE').detail).toContain('unchanged');
    expect(await ok('GET', `/v1/payments/${payment.id}`)).toEqual(before);
    expect(await newEvents()).toEqual([]);
    // Stripe may have refunded before the connection dropped: the amount stays reserved for this request's retry.
    expect(expectRestProblem(await refund(randomUUID()), 'CONFLICT').detail).toContain(
      'being refunded by other requests',
    );

    const refunded = await refund(key);
    expect(refunded.status, refunded.text).toBe(200);
    expect(refunded.json).toMatchObject({ status: 'refunded', amount_refunded: 900 });
    expect(stripe.refunds.length).toBe(refundsBefore + 1);
    expect(
      new Set(
        requestsOfThisKey()
          .filter((entry) => entry.path === '/v1/refunds')
          .map((entry) => entry.idempotency_key),
      ),
    ).toEqual(new Set([`refund-${payment.id}-${key}`]));
    expect(types(await newEvents())).toEqual(['payment.refunded']);
  });

  it('answers CONFLICT with Stripe\u2019s reason when Stripe refuses the refund, changing nothing', async () => {
    const payment = await stripePayment();
    const before = await ok('GET', `/v1/payments/${payment.id}`);
    stripe.failNext(
      {
        status: 400,
        error: {
          type: 'invalid_request_error',
          code: 'charge_already_refunded',
          message: 'Charge ch_1 has already been refunded.',
        },
      },
      { pathPrefix: '/v1/refunds' },
    );
    const refused = expectRestProblem(await call('POST', `/v1/payments/${payment.id}/refund`, {}), 'CONFLICT');
    expect(refused.detail).toContain('has already been refunded');
    expect(refused.detail).toContain('charge_already_refunded');
    expect(await ok('GET', `/v1/payments/${payment.id}`)).toEqual(before);
    expect(await newEvents()).toEqual([]);
    // The refusal released the reservation: the whole amount can still be refunded.
    expect(await ok('POST', `/v1/payments/${payment.id}/refund`, {})).toMatchObject({
      status: 'refunded',
      amount_refunded: 900,
    });
  });

  it('20 concurrent refunds and their retries: what Stripe refunded equals what is recorded, never more than the payment', async () => {
    const payment = await stripePayment();
    const keysSent = Array.from({ length: 20 }, () => randomUUID());
    const amounts = keysSent.map((_key, index) => 100 + ((index * 37) % 5) * 100);
    const refund = (key: string, amount: number) =>
      rest(runtime, {
        method: 'POST',
        path: `/v1/payments/${payment.id}/refund`,
        token: team.token,
        body: { amount },
        headers: { 'idempotency-key': key },
      });
    const first = await Promise.all(keysSent.map((key, index) => refund(key, amounts[index])));
    const retried = await Promise.all(keysSent.map((key, index) => refund(key, amounts[index])));
    for (const reply of [...first, ...retried]) expect([200, 409, 422], reply.text).toContain(reply.status);
    const recorded = (await ok('GET', `/v1/payments/${payment.id}`)).amount_refunded as number;
    const atStripe = stripe.refunds
      .filter((entry) => entry.payment_intent === payment.provider_payment_id)
      .reduce((sum, entry) => sum + Number(entry.amount), 0);
    expect(atStripe).toBe(recorded);
    expect(recorded).toBeLessThanOrEqual(900);
    expect(recorded).toBeGreaterThan(0);
    // One refund per request that succeeded, at its first try or at its retry (the same key: the same refund).
    const succeeded = keysSent.filter(
      (_key, index) => first[index].status === 200 || retried[index].status === 200,
    ).length;
    expect(stripe.refunds.filter((entry) => entry.payment_intent === payment.provider_payment_id)).toHaveLength(
      succeeded,
    );
    expect(types(await newEvents()).filter((type) => type === 'payment.refunded')).toHaveLength(succeeded);
  });
});
