/**
 * Trials with or without a card (DESIGN D33) over the REST API, with the real `stripe` SDK pointed at the loopback fake
 * of the Stripe API and the fake delivering Stripe's signed events to the hook in-process: a card-less plan's Checkout
 * Session carries the trial, `payment_method_collection: if_required` and `missing_payment_method: cancel` (a
 * card-required one only the trial); a card-less trial that ends without a payment method is canceled and its access
 * removed, one with a card renews to active with its payment; an e-mail's second trial in the project is CONFLICT
 * naming `trial: false`, which sells the plan without its trial; a second trial Stripe completed anyway is recorded and
 * logged. Against DynamoDB Local, on the injected clock.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { logger } from '../../shared/logger.js';
import { caller } from '../support/calls.js';
import { TeamEventCursor } from '../support/events.js';
import { serveStripeHook } from '../support/fixtures/stripe-hooks.js';
import { expectRestProblem } from '../support/guarantees.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';
import { startFakeStripeApi, type FakeStripeApi } from '../support/stripe-api.js';
import { connectStripe } from '../support/stripe.js';
import { DAY_MS } from '../../shared/clock.js';

let clock: ManualClock;
let stripe: FakeStripeApi;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;

beforeAll(async () => {
  stripe = await startFakeStripeApi({ nowMs: () => clock.nowMs() });
});
afterAll(async () => {
  await stripe.stop();
});

const { call, ok } = caller(() => ({ runtime, token: team.token }));

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  runtime.integrations = {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: 'http://127.0.0.1:9',
    stripeApiBaseUrl: stripe.url,
    publicBaseUrl: 'https://members.example',
    retry: { retries: 0, minTimeoutMs: 0 },
  };
  team = await seedTeam(runtime.store, clock);
  projectId = (await ok('POST', '/v1/projects', { name: 'Readers', platform_type: 'web' }, 201)).id;
  const { webhookSecret } = await connectStripe(stripe, (path, body) => ok('PUT', path, body), projectId);
  const hookRuntime = runtime;
  const hookProject = projectId;
  stripe.deliverEventsTo(
    async (body, signature) => (await serveStripeHook(hookRuntime, hookProject, body, signature)).status,
    webhookSecret,
  );
});

/** A synced monthly plan of 9.00 EUR with a 7-day trial; `card`: whether the trial needs one. */
const trialPlan = (card: boolean) =>
  ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    {
      name: 'Monthly',
      amount: 900,
      currency: 'EUR',
      interval: 'month',
      trial_days: 7,
      trial_payment_method_required: card,
    },
    201,
  );
const checkout = (planId: string, body: Record<string, unknown>) =>
  call('POST', `/v1/plans/${planId}/checkout-sessions`, body, { headers: { 'Idempotency-Key': randomUUID() } });
/** The project's subscriptions, oldest first. */
const subscriptions = async () =>
  (await ok('GET', `/v1/projects/${projectId}/subscriptions`, undefined, 200, { query: { limit: '100' } })).data as {
    id: string;
    status: string;
    has_access: boolean;
  }[];
/** Opens a trial checkout for `email` and pays it (`card`: with a card), returning the Stripe and our subscription. */
async function startTrial(planId: string, email: string, card: boolean) {
  const reply = await checkout(planId, { customer_email: email });
  expect(reply.status, reply.text).toBe(201);
  await stripe.payCheckout(reply.json.id, { card });
  const stripeSubscription = String(stripe.checkoutSessions.get(reply.json.id)!.subscription);
  const list = await subscriptions();
  expect(list).toHaveLength(1);
  return { stripeSubscription, subscription: list[0] };
}

describe('trial checkouts', () => {
  it('a plan\u2019s card choice is set on create and update, and a one_time plan refuses a card-less trial', async () => {
    const plan = await trialPlan(true);
    const changed = await ok('POST', `/v1/plans/${plan.id}`, { trial_payment_method_required: false });
    expect(changed).toMatchObject({ trial_days: 7, trial_payment_method_required: false, price_version: 1 });
    const pass = { name: 'Pass', amount: 500, currency: 'EUR', interval: 'one_time', access_days: 30 };
    const refused = await call('POST', `/v1/projects/${projectId}/plans`, {
      ...pass,
      trial_payment_method_required: false,
    });
    expect(expectRestProblem(refused, 'VALIDATION_FAILED').errors).toEqual([
      expect.objectContaining({ path: 'trial_payment_method_required' }),
    ]);
  });

  it('a card-less plan\u2019s session lets the buyer skip the card and cancels at the trial\u2019s end without one; a card-required plan\u2019s only has the trial', async () => {
    const cardless = await trialPlan(false);
    const card = await trialPlan(true);
    expect(cardless.trial_payment_method_required).toBe(false);
    expect(card.trial_payment_method_required).toBe(true);

    const open = await checkout(cardless.id, { customer_email: 'reader@example.com' });
    expect(open.status, open.text).toBe(201);
    expect(stripe.checkoutSessions.get(open.json.id)).toMatchObject({
      mode: 'subscription',
      payment_method_collection: 'if_required',
      subscription_data: {
        trial_period_days: '7',
        trial_settings: { end_behavior: { missing_payment_method: 'cancel' } },
      },
      metadata: { trial_days: '7' },
    });
    const required = stripe.checkoutSessions.get((await checkout(card.id, {})).json.id)!;
    expect(required.subscription_data).toMatchObject({ trial_period_days: '7' });
    expect(required.subscription_data.trial_settings).toBeUndefined();
    expect(required.payment_method_collection).toBeUndefined();
  });

  it('a card-less trial that ends without a payment method is canceled and its access removed', async () => {
    const plan = await trialPlan(false);
    const { stripeSubscription, subscription } = await startTrial(plan.id, 'reader@example.com', false);
    expect(subscription).toMatchObject({ status: 'trialing', has_access: true });
    const events = new TeamEventCursor(runtime.store, team.team.id);
    await events.next();

    clock.advance(7 * DAY_MS + 60_000);
    await stripe.endTrial(stripeSubscription);
    expect(stripe.deliveredEvents.at(-1)).toEqual({ type: 'customer.subscription.deleted', status: 200 });
    expect((await events.next()).map((event) => event.type)).toContain('subscription.canceled');
    const ended = await ok('GET', `/v1/subscriptions/${subscription.id}`);
    expect(ended).toMatchObject({ status: 'canceled', has_access: false });
    const payments = await ok('GET', `/v1/projects/${projectId}/payments`, undefined, 200, { query: { limit: '10' } });
    expect(payments.data).toEqual([]);
  });

  it('a trial with a card renews to active with the period\u2019s payment', async () => {
    const plan = await trialPlan(true);
    const { stripeSubscription, subscription } = await startTrial(plan.id, 'reader@example.com', true);
    expect(subscription).toMatchObject({ status: 'trialing', has_access: true });
    const events = new TeamEventCursor(runtime.store, team.team.id);
    await events.next();

    clock.advance(7 * DAY_MS + 60_000);
    await stripe.endTrial(stripeSubscription);
    expect(stripe.deliveredEvents.slice(-2)).toEqual([
      { type: 'customer.subscription.updated', status: 200 },
      { type: 'invoice.paid', status: 200 },
    ]);
    expect((await events.next()).map((event) => event.type)).toEqual(
      expect.arrayContaining(['payment.succeeded', 'subscription.activated']),
    );
    const renewed = await ok('GET', `/v1/subscriptions/${subscription.id}`);
    expect(renewed).toMatchObject({ status: 'active', has_access: true });
    const payments = await ok('GET', `/v1/projects/${projectId}/payments`, undefined, 200, { query: { limit: '10' } });
    expect(payments.data).toMatchObject([{ amount: 900, currency: 'EUR', status: 'succeeded' }]);
  });

  it('refuses an e-mail\u2019s second trial with CONFLICT naming trial: false, which sells the plan without its trial', async () => {
    const plan = await trialPlan(false);
    await startTrial(plan.id, 'reader@example.com', false);

    const again = expectRestProblem(await checkout(plan.id, { customer_email: 'Reader@Example.COM' }), 'CONFLICT');
    expect(again.detail).toContain('already had its free trial');
    expect(again.detail).toContain('trial: false');
    const sessions = stripe.requestsTo('POST', '/v1/checkout/sessions').length;

    const without = await checkout(plan.id, { customer_email: 'Reader@Example.COM', trial: false });
    expect(without.status, without.text).toBe(201);
    expect(stripe.requestsTo('POST', '/v1/checkout/sessions')).toHaveLength(sessions + 1);
    const session = stripe.checkoutSessions.get(without.json.id)!;
    expect(session.subscription_data.trial_period_days).toBeUndefined();
    expect(session.payment_method_collection).toBeUndefined();
    expect(session.metadata).toMatchObject({ trial_days: '0' });
    await stripe.payCheckout(without.json.id);
    expect((await subscriptions()).map((entry) => entry.status).sort()).toEqual(['active', 'trialing']);
    // Another address still has its trial.
    expect((await checkout(plan.id, { customer_email: 'friend@example.com' })).status).toBe(201);
  });

  it('counts a creator\u2019s trial grant (REST) as the address\u2019s trial too', async () => {
    const plan = await trialPlan(true);
    const subscriber = await ok('POST', `/v1/projects/${projectId}/subscribers`, { email: 'guest@example.com' }, 201);
    const granted = await ok(
      'POST',
      `/v1/projects/${projectId}/subscriptions`,
      { subscriber_id: subscriber.id, plan_id: plan.id, trial: true },
      201,
    );
    expect(granted.status).toBe('trialing');
    expectRestProblem(await checkout(plan.id, { customer_email: 'guest@example.com' }), 'CONFLICT');
  });

  it('records a second trial Stripe completed anyway (a checkout without an e-mail) and logs a warning', async () => {
    const plan = await trialPlan(true);
    await startTrial(plan.id, 'reader@example.com', true);
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    try {
      const open = await checkout(plan.id, {});
      expect(open.status, open.text).toBe(201);
      await stripe.payCheckout(open.json.id, { email: 'reader@example.com' });
      expect((await subscriptions()).map((entry) => entry.status)).toEqual(['trialing', 'trialing']);
      expect(warn).toHaveBeenCalledWith(
        expect.stringContaining('second trial'),
        expect.objectContaining({ project_id: projectId, plan_id: plan.id, checkout_session_id: open.json.id }),
      );
    } finally {
      warn.mockRestore();
    }
  });
});
