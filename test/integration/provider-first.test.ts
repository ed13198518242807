/**
 * Provider-first subscription changes (DESIGN D27): a subscription Stripe bills is cancelled (now or at
 * period end), resumed, paused and moved to another plan AT STRIPE first — through the official SDK against
 * the loopback fake, with an idempotency key — and our state commits only once Stripe agreed. Stripe
 * refusing (422 with its message) or unreachable (502 PROVIDER_UNAVAILABLE) leaves the subscription and the
 * outbox unchanged, and a retry with the same `Idempotency-Key` succeeds once Stripe answers. The
 * `customer.subscription.*` event Stripe then sends is recognised as the echo (no second event), and an
 * older snapshot arriving after our change cannot undo it. Subscriptions nothing bills never call Stripe.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { serveHookRequest } from '../../shared/hooks/dispatcher.js';
import { keys } from '../../shared/store/keys.js';
import { TeamEventCursor } from '../support/events.js';
import { caller } from '../support/calls.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';
import { startFakeStripeApi, type FakeStripeApi } from '../support/stripe-api.js';
import {
  checkoutSession,
  connectStripe,
  invoice,
  stripeEventBody,
  stripeId,
  stripeSignature,
} from '../support/stripe.js';

let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;
let gold: { id: string; provider_price_id: string };
let platinum: { id: string; provider_price_id: string };
let webhookSecret: string;
let events: TeamEventCursor;
let stripeApi: FakeStripeApi;

beforeAll(async () => {
  stripeApi = await startFakeStripeApi();
});
afterAll(async () => {
  await stripeApi.stop();
});

const types = (list: EventEnvelope[]) => list.map((event) => event.type);
const { call, ok } = caller(() => ({ runtime, token: team.token }));
const nowSeconds = () => Math.floor(clock.nowMs() / 1000);

/** Posts a Stripe event of `type` carrying `object`, created at `created` (unix seconds), signed as Stripe does. */
async function sendStripeEvent(type: string, object: unknown, created = nowSeconds()) {
  const { body } = stripeEventBody(type, object, { created });
  const path = `/hooks/stripe/${projectId}`;
  const result = await serveHookRequest(runtime, {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'stripe-signature': stripeSignature(body, webhookSecret, nowSeconds()),
    },
    requestContext: {
      requestId: randomUUID(),
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'Stripe/1.0' },
    },
    body,
    isBase64Encoded: false,
  } as never);
  expect(result.statusCode, result.body).toBe(200);
}

/**
 * A fan buys Gold through Stripe Checkout: the fake knows the Stripe subscription; ours is active. Returns both ids.
 */
async function activeStripeSubscription() {
  const customer = stripeId('cus');
  const stripeSubscriptionId = stripeId('sub');
  stripeApi.addSubscription(stripeSubscriptionId, { priceId: gold.provider_price_id, customer });
  await sendStripeEvent(
    'checkout.session.completed',
    checkoutSession({ customer, email: 'fan@example.com', planId: gold.id, subscription: stripeSubscriptionId }),
  );
  await sendStripeEvent(
    'invoice.paid',
    invoice({
      subscription: stripeSubscriptionId,
      paymentIntent: stripeId('pi'),
      amount: 900,
      billingReason: 'subscription_create',
    }),
  );
  const link = await runtime.store.get(
    keys.providerSubscription(team.team.id, projectId, 'stripe', stripeSubscriptionId),
  );
  const subscriptionId = link!.subscription_id as string;
  expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
    status: 'active',
    payment_provider: 'stripe',
  });
  await events.next();
  return { subscriptionId, stripeSubscriptionId };
}

/** The Stripe subscription as the fake holds it now (what its `customer.subscription.updated` carries). */
const stripeSnapshot = (id: string) => structuredClone(stripeApi.subscriptions.get(id)!);

/** Requests the fake answered for the Stripe subscription (updates and cancellations), in order. */
const stripeCalls = (id: string) =>
  stripeApi.requests.filter((request) => request.path === `/v1/subscriptions/${id}` && request.method !== 'GET');

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  runtime.integrations = {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: 'http://127.0.0.1:9',
    stripeApiBaseUrl: stripeApi.url,
    retry: { retries: 1, minTimeoutMs: 0 },
  };
  team = await seedTeam(runtime.store, clock);
  projectId = (await ok('POST', '/v1/projects', { name: 'Book club', platform_type: 'web' }, 201)).id as string;
  ({ webhookSecret } = await connectStripe(stripeApi, (path, body) => ok('PUT', path, body), projectId));
  gold = (await ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    { name: 'Gold', amount: 900, currency: 'EUR', interval: 'month' },
    201,
  )) as typeof gold;
  platinum = (await ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    { name: 'Platinum', amount: 1900, currency: 'EUR', interval: 'month' },
    201,
  )) as typeof platinum;
  expect(gold.provider_price_id).toMatch(/^price_/);
  events = new TeamEventCursor(runtime.store, team.team.id);
  await events.next();
});

describe('each change reaches Stripe first', () => {
  it('cancel at period end sets cancel_at_period_end at Stripe with an idempotency key, then commits once; the echo changes nothing', async () => {
    const { subscriptionId, stripeSubscriptionId } = await activeStripeSubscription();
    const cancelled = await ok('POST', `/v1/subscriptions/${subscriptionId}/cancel`, { reason: 'Too many books' });
    expect(cancelled).toMatchObject({ status: 'pending_cancellation', cancel_at_period_end: true });
    const [update] = stripeCalls(stripeSubscriptionId);
    expect(update).toMatchObject({
      method: 'POST',
      params: { cancel_at_period_end: 'true', metadata: { subscription_id: subscriptionId } },
    });
    expect(update.idempotency_key).toContain(subscriptionId);
    expect(types(await events.next())).toEqual(['subscription.cancellation_scheduled']);

    await sendStripeEvent('customer.subscription.updated', stripeSnapshot(stripeSubscriptionId));
    expect(await events.next()).toEqual([]);
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({ status: 'pending_cancellation' });

    // Resume withdraws the scheduled end at Stripe.
    expect(await ok('POST', `/v1/subscriptions/${subscriptionId}/resume`)).toMatchObject({
      status: 'active',
      cancel_at_period_end: false,
    });
    expect(stripeCalls(stripeSubscriptionId).at(-1)).toMatchObject({ params: { cancel_at_period_end: 'false' } });
    expect(types(await events.next())).toEqual(['subscription.resumed']);
  });

  it('pause and resume set and clear pause_collection at Stripe', async () => {
    const { subscriptionId, stripeSubscriptionId } = await activeStripeSubscription();
    expect(await ok('POST', `/v1/subscriptions/${subscriptionId}/pause`)).toMatchObject({ status: 'paused' });
    expect(stripeApi.subscriptions.get(stripeSubscriptionId)!.pause_collection).toEqual({
      behavior: 'void',
      resumes_at: null,
    });
    expect(types(await events.next())[0]).toBe('subscription.paused');
    await sendStripeEvent('customer.subscription.updated', stripeSnapshot(stripeSubscriptionId));
    expect(await events.next()).toEqual([]);

    expect(await ok('POST', `/v1/subscriptions/${subscriptionId}/resume`)).toMatchObject({ status: 'active' });
    expect(stripeApi.subscriptions.get(stripeSubscriptionId)!.pause_collection).toBeNull();
    expect(stripeCalls(stripeSubscriptionId).at(-1)).toMatchObject({ params: { pause_collection: '' } });
    expect(types(await events.next())[0]).toBe('subscription.resumed');
    await sendStripeEvent('customer.subscription.updated', stripeSnapshot(stripeSubscriptionId));
    expect(await events.next()).toEqual([]);
  });

  it('a plan change moves the Stripe item to the synced Price (upgrade invoices the difference, downgrade does not prorate)', async () => {
    const { subscriptionId, stripeSubscriptionId } = await activeStripeSubscription();
    const itemId = stripeApi.subscriptions.get(stripeSubscriptionId)!.items.data[0].id as string;
    expect(await ok('POST', `/v1/subscriptions/${subscriptionId}/change-plan`, { plan_id: platinum.id })).toMatchObject(
      { plan_id: platinum.id },
    );
    expect(stripeCalls(stripeSubscriptionId).at(-1)).toMatchObject({
      params: { items: [{ id: itemId, price: platinum.provider_price_id }], proration_behavior: 'always_invoice' },
    });
    expect(types(await events.next())).toEqual(['subscription.upgraded']);
    await sendStripeEvent('customer.subscription.updated', stripeSnapshot(stripeSubscriptionId));
    expect(await events.next()).toEqual([]);

    expect(await ok('POST', `/v1/subscriptions/${subscriptionId}/change-plan`, { plan_id: gold.id })).toMatchObject({
      plan_id: gold.id,
    });
    expect(stripeCalls(stripeSubscriptionId).at(-1)).toMatchObject({
      params: { items: [{ id: itemId, price: gold.provider_price_id }], proration_behavior: 'none' },
    });
    expect(types(await events.next())).toEqual(['subscription.downgraded']);
  });

  it('a plan change to a plan not synced to Stripe is refused before Stripe is called', async () => {
    const { subscriptionId, stripeSubscriptionId } = await activeStripeSubscription();
    await runtime.store.update({
      Key: keys.plan(team.team.id, platinum.id),
      UpdateExpression: 'SET provider_price_id = :none',
      ExpressionAttributeValues: { ':none': null },
    });
    const reply = await call('POST', `/v1/subscriptions/${subscriptionId}/change-plan`, { plan_id: platinum.id });
    expect(reply.status).toBe(409);
    expect(reply.json).toMatchObject({
      code: 'CONFLICT',
      detail: expect.stringContaining(`POST /v1/plans/${platinum.id}/sync`),
    });
    expect(stripeCalls(stripeSubscriptionId)).toEqual([]);
  });

  it('cancel now cancels the Stripe subscription; the subscription.deleted echo adds nothing', async () => {
    const { subscriptionId, stripeSubscriptionId } = await activeStripeSubscription();
    expect(await ok('POST', `/v1/subscriptions/${subscriptionId}/cancel`, { at_period_end: false })).toMatchObject({
      status: 'canceled',
    });
    expect(stripeCalls(stripeSubscriptionId)).toMatchObject([{ method: 'DELETE' }]);
    expect(types(await events.next())[0]).toBe('subscription.canceled');
    await sendStripeEvent('customer.subscription.deleted', stripeSnapshot(stripeSubscriptionId));
    expect(await events.next()).toEqual([]);
  });
});

describe('when Stripe says no or cannot be reached', () => {
  it('Stripe refusing: 422 with Stripe’s message, the subscription and the outbox unchanged', async () => {
    const { subscriptionId, stripeSubscriptionId } = await activeStripeSubscription();
    stripeApi.failNext(
      {
        status: 400,
        error: {
          type: 'invalid_request_error',
          message: 'This subscription cannot be paused while a schedule is attached.',
        },
      },
      { pathPrefix: '/v1/subscriptions/' },
    );
    const key = randomUUID();
    const refused = await call('POST', `/v1/subscriptions/${subscriptionId}/pause`, undefined, { idempotencyKey: key });
    expect(refused.status).toBe(422);
    expect(refused.json).toMatchObject({
      code: 'VALIDATION_FAILED',
      detail: expect.stringContaining('cannot be paused while a schedule is attached'),
    });
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({ status: 'active' });
    expect(await events.next()).toEqual([]);
    expect(stripeApi.subscriptions.get(stripeSubscriptionId)!.pause_collection).toBeNull();

    // The same request again, once Stripe accepts it.
    const retried = await call('POST', `/v1/subscriptions/${subscriptionId}/pause`, undefined, { idempotencyKey: key });
    expect(retried.status, retried.text).toBe(200);
    expect(types(await events.next())[0]).toBe('subscription.paused');
  });

  it('Stripe unreachable: 502 PROVIDER_UNAVAILABLE, nothing changed; the retry with the same key changes Stripe once and commits once', async () => {
    const { subscriptionId, stripeSubscriptionId } = await activeStripeSubscription();
    stripeApi.failNext({ refuse: true }, { times: 100, pathPrefix: '/v1/subscriptions/' });
    const key = randomUUID();
    const down = await call('POST', `/v1/subscriptions/${subscriptionId}/cancel`, {}, { idempotencyKey: key });
    expect(down.status).toBe(502);
    expect(down.json).toMatchObject({ code: 'PROVIDER_UNAVAILABLE', detail: expect.stringContaining('unchanged') });
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({ status: 'active' });
    expect(await events.next()).toEqual([]);
    const attemptKeys = new Set(stripeCalls(stripeSubscriptionId).map((request) => request.idempotency_key));
    expect(attemptKeys.size).toBe(1);

    stripeApi.clearFailures();
    const first = await call('POST', `/v1/subscriptions/${subscriptionId}/cancel`, {}, { idempotencyKey: key });
    expect(first.status, first.text).toBe(200);
    expect(first.json).toMatchObject({ status: 'pending_cancellation' });
    expect(new Set(stripeCalls(stripeSubscriptionId).map((request) => request.idempotency_key))).toEqual(attemptKeys);
    const replay = await call('POST', `/v1/subscriptions/${subscriptionId}/cancel`, {}, { idempotencyKey: key });
    expect(replay.json).toEqual(first.json);
    expect(types(await events.next())).toEqual(['subscription.cancellation_scheduled']);
    expect(stripeApi.subscriptions.get(stripeSubscriptionId)!.cancel_at_period_end).toBe(true);
  });
});

describe('echoes and late snapshots', () => {
  it('an older Stripe snapshot arriving after our change does not undo it', async () => {
    const { subscriptionId, stripeSubscriptionId } = await activeStripeSubscription();
    await ok('POST', `/v1/subscriptions/${subscriptionId}/cancel`, {});
    const scheduledSnapshot = stripeSnapshot(stripeSubscriptionId);
    const scheduledAt = nowSeconds();
    clock.advance(5_000);
    await ok('POST', `/v1/subscriptions/${subscriptionId}/resume`);
    await events.next();
    // Stripe's event of the first change (created before the resume) arrives last.
    await sendStripeEvent('customer.subscription.updated', scheduledSnapshot, scheduledAt);
    expect(await events.next()).toEqual([]);
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({ status: 'active' });
  });

  it('a change made at Stripe (the customer portal) still applies', async () => {
    const { subscriptionId, stripeSubscriptionId } = await activeStripeSubscription();
    clock.advance(1_000);
    await sendStripeEvent('customer.subscription.updated', {
      ...stripeSnapshot(stripeSubscriptionId),
      cancel_at_period_end: true,
    });
    expect(types(await events.next())).toEqual(['subscription.cancellation_scheduled']);
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({ status: 'pending_cancellation' });
    expect(stripeCalls(stripeSubscriptionId)).toEqual([]);
  });
});

it('a subscription nothing bills (a creator grant) changes without calling Stripe', async () => {
  const subscriber = await ok('POST', `/v1/projects/${projectId}/subscribers`, { email: 'friend@example.com' }, 201);
  const granted = await ok(
    'POST',
    `/v1/projects/${projectId}/subscriptions`,
    { subscriber_id: subscriber.id, plan_id: gold.id },
    201,
  );
  const before = stripeApi.requests.length;
  expect(await ok('POST', `/v1/subscriptions/${granted.id}/pause`)).toMatchObject({ status: 'paused' });
  expect(await ok('POST', `/v1/subscriptions/${granted.id}/cancel`, { at_period_end: false })).toMatchObject({
    status: 'canceled',
  });
  expect(stripeApi.requests.length).toBe(before);
});
