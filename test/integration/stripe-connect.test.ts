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
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import type { IntegrationSettings } from '../../shared/integrations.js';
import { stripeProductId } from '../../shared/providers/stripe.js';
import { keys } from '../../shared/store/keys.js';
import { domainSnapshot, expectRestProblem, scanTable } from '../support/guarantees.js';
import { rest } from '../support/calls.js';
import { TeamEventCursor } from '../support/events.js';
import { startFakeStripeApi, type FakeStripeApi } from '../support/stripe-api.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';

let stripe: FakeStripeApi;
let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;
let secretKey: string;
let webhookSecret: string;
let eventCursor: TeamEventCursor;

beforeAll(async () => {
  stripe = await startFakeStripeApi();
});
afterAll(async () => {
  await stripe.stop();
});

/** The team's outbox events not returned before, oldest first, each checked against its published schema. */
function newEvents(): Promise<EventEnvelope[]> {
  return eventCursor.next();
}
const types = (events: EventEnvelope[]) => events.map((event) => event.type);
const call = (method: string, path: string, body?: unknown) => rest(runtime, { method, path, token: team.token, body });
const ok = async (method: string, path: string, body?: unknown, status = 200) => {
  const reply = await call(method, path, body);
  expect(reply.status, reply.text).toBe(status);
  return reply.json;
};
const connect = (body: Record<string, unknown> = {}) =>
  call('PUT', `/v1/projects/${projectId}/payment-provider`, {
    provider: 'stripe',
    secret_key: secretKey,
    webhook_secret: webhookSecret,
    ...body,
  });

/** Test settings: the fake Stripe API, a fresh local key, two retries without waiting. */
function settings(): IntegrationSettings {
  return {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: 'http://127.0.0.1:9',
    stripeApiBaseUrl: stripe.url,
    publicBaseUrl: 'https://members.example',
    retry: { retries: 2, minTimeoutMs: 0 },
  };
}

/** Collects what the process writes to stdout and stderr (the logger's lines) until `stop()`. */
function captureOutput(): { text: () => string; stop: () => void } {
  const lines: string[] = [];
  const spies = [process.stdout, process.stderr].map((stream) =>
    vi.spyOn(stream, 'write').mockImplementation((chunk: unknown) => {
      lines.push(String(chunk));
      return true;
    }),
  );
  return { text: () => lines.join(''), stop: () => spies.forEach((spy) => spy.mockRestore()) };
}

/** Everything a secret must never appear in: the whole table (items, activity, outbox), and the project as read. */
async function everythingStored(): Promise<string> {
  return JSON.stringify(await scanTable(runtime.store)) + (await call('GET', `/v1/projects/${projectId}`)).text;
}

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  runtime.integrations = settings();
  team = await seedTeam(runtime.store, clock);
  projectId = (await ok('POST', '/v1/projects', { name: 'Readers', platform_type: 'telegram' }, 201)).id;
  // Distinctive tails, so a leak of even the masked key Stripe echoes would show.
  secretKey = `rk_test_${randomBytes(18).toString('hex')}Zq9X`;
  webhookSecret = `whsec_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'a')}`;
  stripe.addKey(secretKey, `acct_${projectId.slice(0, 8)}`);
  eventCursor = new TeamEventCursor(runtime.store, team.team.id);
  await newEvents();
});

const requestsOfThisKey = () =>
  stripe.requests.filter((request) => request.account === `acct_${projectId.slice(0, 8)}`);

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
    expect(requestsOfThisKey().length).toBeGreaterThanOrEqual(3); // 1 + 2 retries (the SDK re-sends once on a dropped connection, too)
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

describe('plan sync', () => {
  const createGold = () =>
    ok(
      'POST',
      `/v1/projects/${projectId}/plans`,
      {
        name: 'Gold',
        description: 'All the books',
        amount: 900,
        currency: 'EUR',
        interval: 'month',
        interval_count: 1,
      },
      201,
    );
  const setLiveSubscriptions = (planId: string, count: number) =>
    runtime.store.update({
      Key: keys.plan(team.team.id, planId),
      UpdateExpression: 'SET live_subscription_count = :count',
      ExpressionAttributeValues: { ':count': count },
    });

  it('creates the Product and a Price, updates the Product on a rename, and makes a new Price (deactivating the old) for a new price version', async () => {
    expect((await connect()).status).toBe(200);
    await newEvents();
    const plan = await createGold();
    expect(plan).toMatchObject({
      sync_status: 'synced',
      payment_provider: 'stripe',
      provider_product_id: stripeProductId(plan.id),
      provider_price_id: expect.stringMatching(/^price_/),
      sync_error: null,
    });
    expect(stripe.products.get(plan.provider_product_id)).toMatchObject({
      name: 'Gold',
      description: 'All the books',
      active: true,
      metadata: { plan_id: plan.id, project_id: projectId },
    });
    const firstPrice = stripe.prices.get(plan.provider_price_id)!;
    expect(firstPrice).toMatchObject({
      product: plan.provider_product_id,
      currency: 'eur',
      unit_amount: 900,
      recurring: { interval: 'month', interval_count: 1 },
      active: true,
      lookup_key: `svc_plan_${plan.id}_v1`,
      metadata: { plan_id: plan.id, price_version: '1' },
    });
    let events = await newEvents();
    expect(types(events)).toEqual(['plan.created', 'plan.synced']);
    expect(events[1].data).toMatchObject({
      payment_provider: 'stripe',
      provider_product_id: plan.provider_product_id,
      provider_price_id: plan.provider_price_id,
    });

    // A rename: the Product changes, the Price stays.
    const renamed = await ok('POST', `/v1/plans/${plan.id}`, { name: 'Gold readers' });
    expect(renamed).toMatchObject({ sync_status: 'synced', provider_price_id: plan.provider_price_id });
    expect(stripe.products.get(plan.provider_product_id)!.name).toBe('Gold readers');
    expect(types(await newEvents())).toEqual(['plan.updated', 'plan.synced']);

    // A new price version (live subscriptions keep the old one): a new Price, the old one deactivated, never edited.
    await setLiveSubscriptions(plan.id, 1);
    const repriced = await ok('POST', `/v1/plans/${plan.id}`, { amount: 1_500 });
    expect(repriced).toMatchObject({ price_version: 2, sync_status: 'synced' });
    expect(repriced.provider_price_id).not.toBe(plan.provider_price_id);
    expect(stripe.prices.get(repriced.provider_price_id)).toMatchObject({
      unit_amount: 1_500,
      currency: 'eur',
      active: true,
      lookup_key: `svc_plan_${plan.id}_v2`,
      metadata: { price_version: '2' },
    });
    expect(stripe.prices.get(plan.provider_price_id)).toMatchObject({ unit_amount: 900, active: false });
    const priceWrites = requestsOfThisKey().filter(
      (request) => request.method === 'POST' && request.path.startsWith('/v1/prices/'),
    );
    expect(priceWrites.map((request) => request.params)).toEqual([{ active: 'false' }]);
    events = await newEvents();
    expect(types(events)).toEqual(['plan.updated', 'plan.synced']);
    expect(events[1].data).toMatchObject({ provider_price_id: repriced.provider_price_id });
  });

  it('records Stripe\u2019s refusal with its code, retries 5xx, records an outage, and syncs again on demand', async () => {
    expect((await connect()).status).toBe(200);
    const plan = await createGold();
    await newEvents();

    // A refusal (4xx) is not retried: recorded at once with Stripe's code and message.
    stripe.failNext(
      {
        status: 400,
        error: { type: 'invalid_request_error', code: 'parameter_invalid_integer', message: 'Invalid integer: 1e99' },
      },
      { method: 'POST', pathPrefix: '/v1/prices' },
    );
    const calls = requestsOfThisKey().length;
    const output = captureOutput();
    let failed;
    try {
      failed = await ok('POST', `/v1/plans/${plan.id}`, { amount: 1_200 });
    } finally {
      output.stop();
    }
    expect(failed).toMatchObject({
      sync_status: 'failed',
      sync_error: expect.stringContaining('Invalid integer: 1e99'),
    });
    expect(failed.sync_error).toContain('parameter_invalid_integer');
    let events = await newEvents();
    expect(types(events)).toEqual(['plan.updated', 'plan.sync_failed']);
    expect(events[1].data).toMatchObject({
      payment_provider: 'stripe',
      code: 'parameter_invalid_integer',
      reason: expect.stringContaining('Invalid integer'),
    });
    expect(
      requestsOfThisKey()
        .slice(calls)
        .filter((request) => request.method === 'POST' && request.path === '/v1/prices'),
    ).toHaveLength(1);
    expect(JSON.stringify(events) + output.text() + (await everythingStored())).not.toContain(secretKey);

    // 5xx twice, then Stripe answers: retried within the sync (three attempts).
    stripe.failNext(
      { status: 503, error: { type: 'api_error', message: 'Service unavailable.' } },
      { times: 2, pathPrefix: '/v1/products/' },
    );
    const synced = await ok('POST', `/v1/plans/${plan.id}/sync`);
    expect(synced).toMatchObject({ sync_status: 'synced', sync_error: null });
    expect(stripe.prices.get(synced.provider_price_id)).toMatchObject({ unit_amount: 1_200, active: true });
    expect(types(await newEvents())).toEqual(['plan.synced']);

    // Unreachable on every attempt: recorded (no code), nothing lost; a later sync succeeds.
    stripe.failNext({ refuse: true }, { times: 100 });
    const down = await ok('POST', `/v1/plans/${plan.id}`, { name: 'Gold II' });
    stripe.clearFailures();
    expect(down).toMatchObject({
      name: 'Gold II',
      sync_status: 'failed',
      sync_error: expect.stringContaining('Stripe could not be reached'),
    });
    events = await newEvents();
    expect(types(events)).toEqual(['plan.updated', 'plan.sync_failed']);
    expect(events[1].data).toMatchObject({ code: null });
    const again = await ok('POST', `/v1/plans/${plan.id}/sync`);
    expect(again).toMatchObject({
      name: 'Gold II',
      sync_status: 'synced',
      provider_product_id: plan.provider_product_id,
    });
    expect(stripe.products.get(plan.provider_product_id)!.name).toBe('Gold II');
  });
  it('logs an unexpected failure by its class only: a credential that no longer opens (another key-encryption key) is recorded, no secret logged', async () => {
    expect((await connect()).status).toBe(200);
    const plan = await createGold();
    await newEvents();
    runtime.integrations = { ...settings(), retry: { retries: 0, minTimeoutMs: 0 } }; // a new key-encryption key: the stored credential no longer opens
    const output = captureOutput();
    let failed;
    try {
      failed = await ok('POST', `/v1/plans/${plan.id}/sync`);
    } finally {
      output.stop();
    }
    expect(failed).toMatchObject({ sync_status: 'failed', sync_error: 'The stripe provider could not be reached.' });
    expect(types(await newEvents())).toEqual(['plan.sync_failed']);
    expect(output.text()).toContain('payment provider sync threw');
    expect(output.text()).toContain('CredentialDecryptionError');
    for (const secret of [secretKey, secretKey.slice(-12), webhookSecret]) expect(output.text()).not.toContain(secret);
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
