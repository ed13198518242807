/**
 * Hosted checkout over the API (DESIGN D26): `POST /v1/plans/{id}/checkout-sessions` with the real `stripe`
 * SDK pointed at the loopback fake of the Stripe API. A recurring plan opens a `subscription` checkout with
 * the synced Price, the trial and our metadata; a one_time plan a `payment` checkout; the default URLs are the
 * project's join pages. Free, unconnected and unsynced plans are CONFLICTs naming the fix; Stripe's refusal is
 * 422 with its message, an outage 502 and a retry with the same Idempotency-Key then works; a replay answers
 * the same session; another team's plan is 404. Nothing is stored. Against DynamoDB Local.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import type { IntegrationSettings } from '../../shared/integrations.js';
import { domainSnapshot, expectRestProblem } from '../support/guarantees.js';
import { caller, rest } from '../support/calls.js';
import { startFakeStripeApi, type FakeStripeApi } from '../support/stripe-api.js';
import { connectStripe } from '../support/stripe.js';
import { createTestRuntime, seedTeam, testClock, traceRoundTrips, type TestRuntime } from '../support/store.js';

let stripe: FakeStripeApi;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;

beforeAll(async () => {
  stripe = await startFakeStripeApi();
});
afterAll(async () => {
  await stripe.stop();
});
afterEach(() => stripe.clearFailures());

/** Test settings: the fake Stripe API, a fresh local key, two retries without waiting. */
function settings(publicBaseUrl: string | undefined = 'https://members.example'): IntegrationSettings {
  return {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: 'http://127.0.0.1:9',
    stripeApiBaseUrl: stripe.url,
    publicBaseUrl,
    retry: { retries: 2, minTimeoutMs: 0 },
  };
}

const { call, ok } = caller(() => ({ runtime, token: team.token }));
const createPlan = (body: Record<string, unknown> = {}) =>
  ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    { name: 'Monthly', amount: 900, currency: 'EUR', interval: 'month', ...body },
    201,
  );
const checkout = (planId: string, body: Record<string, unknown> = {}, key: string = randomUUID()) =>
  call('POST', `/v1/plans/${planId}/checkout-sessions`, body, { headers: { 'Idempotency-Key': key } });
const connect = () => connectStripe(stripe, (path, body) => ok('PUT', path, body), projectId);
/** The checkout sessions the fake created for this project, oldest first. */
const sessionsOfProject = () =>
  [...stripe.checkoutSessions.values()].filter((session) => session.metadata?.project_id === projectId);

beforeEach(async () => {
  const clock = testClock();
  runtime = await createTestRuntime({ clock });
  runtime.integrations = settings();
  team = await seedTeam(runtime.store, clock);
  projectId = (await ok('POST', '/v1/projects', { name: 'Readers', platform_type: 'telegram' }, 201)).id;
});

describe('checkout sessions', () => {
  it('opens a subscription checkout of a recurring plan with the synced price, its trial, our metadata and the join pages, storing nothing', async () => {
    await connect();
    const plan = await createPlan({ trial_days: 7 });
    expect(plan.sync_status).toBe('synced');
    const before = await domainSnapshot(runtime.store);

    const reply = await checkout(plan.id, { customer_email: 'reader@example.com' });
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json).toEqual({
      id: expect.stringMatching(/^cs_test_/),
      url: expect.stringContaining('/checkout/'),
      expires_at: expect.any(String),
      plan_id: plan.id,
      project_id: projectId,
    });
    const seen = stripe.checkoutSessions.get(reply.json.id)!;
    expect(seen).toMatchObject({
      mode: 'subscription',
      line_items: [{ price: plan.provider_price_id, quantity: '1' }],
      metadata: { project_id: projectId, plan_id: plan.id },
      subscription_data: { metadata: { project_id: projectId, plan_id: plan.id }, trial_period_days: '7' },
      customer_email: 'reader@example.com',
      success_url: `https://members.example/join/${projectId}/welcome?session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `https://members.example/join/${projectId}`,
    });
    expect(new Date(reply.json.expires_at).getTime()).toBe(seen.expires_at * 1000);
    expect(stripe.requestsTo('POST', '/v1/checkout/sessions').at(-1)!.idempotency_key).toMatch(/^checkout-/);
    // Only the request's idempotency record is new: the subscription comes with checkout.session.completed.
    const added = (await domainSnapshot(runtime.store)).filter((line) => !before.includes(line));
    expect(added.map((line) => (JSON.parse(line) as { entity: string }).entity)).toEqual(['idempotency']);
  });

  it('opens a payment checkout of a one_time plan, with the caller\u2019s URLs', async () => {
    await connect();
    const plan = await createPlan({ name: 'Pass', interval: 'one_time', access_days: 30 });
    const reply = await checkout(plan.id, {
      success_url: 'https://creator.example/thanks',
      cancel_url: 'http://creator.example/back',
    });
    expect(reply.status, reply.text).toBe(201);
    const seen = stripe.checkoutSessions.get(reply.json.id)!;
    expect(seen).toMatchObject({
      mode: 'payment',
      payment_intent_data: { metadata: { project_id: projectId, plan_id: plan.id } },
      success_url: 'https://creator.example/thanks',
      cancel_url: 'http://creator.example/back',
    });
    expect(seen.subscription_data).toBeUndefined();
  });

  it('refuses a free plan, a project without Stripe and a plan not synced, naming the fix', async () => {
    const unsynced = await createPlan();
    const free = await createPlan({ name: 'Free', amount: 0 });
    expect(expectRestProblem(await checkout(unsynced.id), 'CONFLICT').detail).toContain(
      `PUT /v1/projects/${projectId}/payment-provider`,
    );
    expect(expectRestProblem(await checkout(free.id), 'CONFLICT').detail).toContain(`Plan ${free.id} is free`);
    await connect();
    expect(expectRestProblem(await checkout(unsynced.id), 'CONFLICT').detail).toContain(
      `POST /v1/plans/${unsynced.id}/sync`,
    );
    await ok('POST', `/v1/plans/${unsynced.id}/sync`);
    expect((await checkout(unsynced.id)).status).toBe(201);
    expect(sessionsOfProject()).toHaveLength(1);
  });

  it('answers Stripe\u2019s refusal as 422 with its message, an outage as 502, and a retry with the same key works', async () => {
    await connect();
    const plan = await createPlan();
    stripe.failNext(
      {
        status: 400,
        error: { type: 'invalid_request_error', code: 'email_invalid', message: 'Invalid email address: nobody' },
      },
      { method: 'POST', pathPrefix: '/v1/checkout/sessions' },
    );
    const refused = expectRestProblem(await checkout(plan.id), 'VALIDATION_FAILED');
    expect(refused.status).toBe(422);
    expect(refused.detail).toContain('Invalid email address');

    const key = randomUUID();
    stripe.failNext({ refuse: true }, { times: 100, method: 'POST', pathPrefix: '/v1/checkout/sessions' });
    expect(expectRestProblem(await checkout(plan.id, {}, key), 'PROVIDER_UNAVAILABLE').status).toBe(502);
    stripe.clearFailures();
    const retried = await checkout(plan.id, {}, key);
    expect(retried.status, retried.text).toBe(201);
    expect(sessionsOfProject()).toHaveLength(1);
  });

  it('replays the same session for the same Idempotency-Key, and makes a new one for another key', async () => {
    await connect();
    const plan = await createPlan();
    const key = randomUUID();
    const first = await checkout(plan.id, { customer_email: 'a@example.com' }, key);
    const replay = await checkout(plan.id, { customer_email: 'a@example.com' }, key);
    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.json).toEqual(first.json);
    expect(sessionsOfProject()).toHaveLength(1);
    expect((await checkout(plan.id, { customer_email: 'a@example.com' })).json.id).not.toBe(first.json.id);
  });

  it('completes the key beside the activity entry (no transaction of its own), both written before the answer', async () => {
    await connect();
    const plan = await createPlan();
    const { runtime: traced, events } = traceRoundTrips(runtime);
    const key = randomUUID();
    const reply = await rest(traced, {
      method: 'POST',
      path: `/v1/plans/${plan.id}/checkout-sessions`,
      token: team.token,
      headers: { 'Idempotency-Key': key },
      body: {},
    });
    expect(reply.status, reply.text).toBe(201);
    const activitySent = events.findIndex((event) => event.startsWith('put act_') && event.endsWith(' sent'));
    expect(activitySent).toBeGreaterThan(-1);
    // One round trip for both writes: the entry is sent before the key's completion answers.
    expect(activitySent).toBeLessThan(events.indexOf('update TEAM answered'));
    expect(events.at(-1)).toMatch(/ answered$/);
    const entries = (await call('GET', '/v1/activity', undefined, { query: { operation: 'createCheckoutSession' } }))
      .json as { data: Array<{ request_id: string; outcome: string }> };
    expect(entries.data.map((entry) => [entry.request_id, entry.outcome])).toEqual([
      [reply.headers['x-request-id'], 'ok'],
    ]);
    expect((await checkout(plan.id, {}, key)).json).toEqual(reply.json);
  });

  it('answers 404 for another team\u2019s plan and checks the body strictly', async () => {
    await connect();
    const plan = await createPlan();
    const other = await seedTeam(runtime.store, testClock());
    expectRestProblem(
      await call(
        'POST',
        `/v1/plans/${plan.id}/checkout-sessions`,
        {},
        { headers: { 'Idempotency-Key': randomUUID() }, token: other.token },
      ),
      'NOT_FOUND',
    );
    expectRestProblem(await checkout(plan.id, { success_url: 'ftp://creator.example/x' }), 'VALIDATION_FAILED');
    expectRestProblem(await checkout(plan.id, { quantity: 2 }), 'VALIDATION_FAILED');
    expect(sessionsOfProject()).toHaveLength(0);
  });

  it('requires both URLs while the service has no public base URL', async () => {
    await connect();
    const plan = await createPlan();
    runtime.integrations = { ...runtime.integrations!, publicBaseUrl: undefined };
    const problem = expectRestProblem(
      await checkout(plan.id, { success_url: 'https://creator.example/thanks' }),
      'VALIDATION_FAILED',
    );
    expect(problem.errors).toEqual([{ path: 'cancel_url', message: expect.any(String) }]);
    expect(
      (
        await checkout(plan.id, {
          success_url: 'https://creator.example/thanks',
          cancel_url: 'https://creator.example/back',
        })
      ).status,
    ).toBe(201);
  });
});
