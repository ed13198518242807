/**
 * A project's Stripe events at `POST /hooks/stripe/{project_id}` (DESIGN D15, D16, D22),
 * against DynamoDB Local, every body signed with the SDK's `webhooks.generateTestHeaderString` and served
 * through the hooks dispatcher the local server uses: each mapped event (checkout in subscription and
 * payment mode, a delayed payment settled by `checkout.session.async_payment_*`, a plan's trial, a
 * zero-amount first invoice, invoice paid and failed, subscription updated and deleted, charge refunded), duplicates
 * (a re-sent event changes nothing and emits nothing), out-of-order delivery (an older update after a newer
 * one changes nothing), transitions D15 does not allow (acknowledged, ignored), the same 400 for a bad,
 * missing or stale signature, an unknown project and a project not connected to Stripe, an invoice before
 * its checkout (409, then applied when re-sent), a store failure (500, then applied when re-sent), and a
 * refund already recorded through the API (no second `payment.refunded`). Every event is checked against
 * its published schema. No network.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { serveHookRequest } from '../../shared/hooks/dispatcher.js';
import { keys } from '../../shared/store/keys.js';
import { domainSnapshot, scanTable } from '../support/guarantees.js';
import { rest } from '../support/calls.js';
import { TeamEventCursor } from '../support/events.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';
import { startFakeStripeApi, type FakeStripeApi } from '../support/stripe-api.js';
import {
  checkoutSession,
  connectStripe,
  invoice,
  refundedCharge,
  stripeEventBody,
  stripeId,
  stripeSignature,
  stripeSubscription,
} from '../support/stripe.js';

let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;
let gold: { id: string; amount: number };
let webhookSecret: string;
let eventCursor: TeamEventCursor;
let stripeApi: FakeStripeApi;

beforeAll(async () => {
  stripeApi = await startFakeStripeApi();
});
afterAll(async () => {
  await stripeApi.stop();
});

/** The team's outbox events not returned before, oldest first, each checked against its published schema. */
function newEvents(): Promise<EventEnvelope[]> {
  return eventCursor.next();
}
const types = (events: EventEnvelope[]) => events.map((event) => event.type);
const call = (method: string, path: string, body?: unknown, query?: Record<string, string>) =>
  rest(runtime, { method, path, token: team.token, body, query });
const ok = async (method: string, path: string, body?: unknown, status = 200, query?: Record<string, string>) => {
  const reply = await call(method, path, body, query);
  expect(reply.status, reply.text).toBe(status);
  return reply.json;
};
const nowSeconds = () => Math.floor(clock.nowMs() / 1000);

/** Posts a raw body to the project's Stripe hook with `signature` (or none) as Stripe would. */
async function post(body: string, signature: string | undefined, project = projectId) {
  const path = `/hooks/stripe/${project}`;
  const result = await serveHookRequest(runtime, {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: {
      'content-type': 'application/json; charset=utf-8',
      ...(signature === undefined ? {} : { 'stripe-signature': signature }),
    },
    requestContext: {
      requestId: randomUUID(),
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'Stripe/1.0' },
    },
    body,
    isBase64Encoded: false,
  } as never);
  return { status: result.statusCode, body: JSON.parse(result.body) as Record<string, unknown> };
}

/** A signed event: its id, body and a `send()` that posts it (again) signed now. */
function stripeEvent(type: string, object: unknown, created = nowSeconds()) {
  const event = stripeEventBody(type, object, { created });
  return {
    ...event,
    send: (project = projectId) => post(event.body, stripeSignature(event.body, webhookSecret, nowSeconds()), project),
  };
}

/** Completes a subscription-mode checkout for a new customer: returns the Stripe ids and our subscription. */
async function checkout(options: { customer?: string; email?: string } = {}) {
  const customer = options.customer ?? stripeId('cus');
  const subscription = stripeId('sub');
  const reply = await stripeEvent(
    'checkout.session.completed',
    checkoutSession({
      customer,
      email: options.email ?? 'ada@example.com',
      name: 'Ada',
      planId: gold.id,
      subscription,
    }),
  ).send();
  expect(reply).toEqual({ status: 200, body: { received: true } });
  const link = await runtime.store.get(keys.providerSubscription(team.team.id, projectId, 'stripe', subscription));
  return { customer, subscription, subscriptionId: link!.subscription_id as string };
}

const paidInvoice = (
  subscription: string,
  paymentIntent: string,
  billingReason: 'subscription_create' | 'subscription_cycle',
  amount = 900,
) => invoice({ subscription, paymentIntent, amount, billingReason });

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  runtime.integrations = {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: 'http://127.0.0.1:9',
    stripeApiBaseUrl: stripeApi.url,
    retry: { retries: 0, minTimeoutMs: 1 },
  };
  team = await seedTeam(runtime.store, clock);
  projectId = (await ok('POST', '/v1/projects', { name: 'Book club', platform_type: 'telegram' }, 201)).id;
  gold = await ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    { name: 'Gold', amount: 900, currency: 'EUR', interval: 'month' },
    201,
  );
  ({ webhookSecret } = await connectStripe(stripeApi, (path, body) => ok('PUT', path, body), projectId));
  eventCursor = new TeamEventCursor(runtime.store, team.team.id);
  await newEvents();
});

describe('mapped events', () => {
  it('checkout.session.completed creates the subscriber and a pending subscription; invoice.paid activates it; renewals and failures follow D15', async () => {
    const { customer, subscription, subscriptionId } = await checkout();
    const created = await newEvents();
    expect(types(created)).toEqual(['subscription.created']);
    const pending = await ok('GET', `/v1/subscriptions/${subscriptionId}`);
    expect(pending).toMatchObject({
      status: 'pending',
      source: 'provider',
      payment_provider: 'stripe',
      plan_id: gold.id,
      has_access: false,
    });
    const subscriber = await ok('GET', `/v1/subscribers/${pending.subscriber_id}`);
    expect(subscriber).toMatchObject({ provider_customer_id: customer, display_name: 'Ada' });
    expect(
      (await scanTable(runtime.store)).find((item) => item.entity === 'subscriber' && item.id === subscriber.id),
    ).toMatchObject({ email: 'ada@example.com' });

    // The first invoice: payment succeeded, subscription activated.
    const firstIntent = stripeId('pi');
    expect(
      await stripeEvent('invoice.paid', paidInvoice(subscription, firstIntent, 'subscription_create')).send(),
    ).toEqual({ status: 200, body: { received: true } });
    const activated = await newEvents();
    expect(types(activated).slice(0, 2)).toEqual(['payment.succeeded', 'subscription.activated']);
    expect(activated[0].data).toMatchObject({
      payment: {
        status: 'succeeded',
        provider: 'stripe',
        provider_payment_id: firstIntent,
        amount: 900,
        currency: 'EUR',
        billing_reason: 'subscription_create',
        subscription_id: subscriptionId,
      },
    });
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
      status: 'active',
      previous_status: 'pending',
      has_access: true,
    });

    // A renewal, then a failed renewal (past_due), then the retried invoice paid with the same PaymentIntent.
    clock.advance(31 * 86_400_000);
    expect(
      (await stripeEvent('invoice.paid', paidInvoice(subscription, stripeId('pi'), 'subscription_cycle')).send())
        .status,
    ).toBe(200);
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.renewed']);
    clock.advance(31 * 86_400_000);
    const failedIntent = stripeId('pi');
    expect(
      (
        await stripeEvent(
          'invoice.payment_failed',
          paidInvoice(subscription, failedIntent, 'subscription_cycle'),
        ).send()
      ).status,
    ).toBe(200);
    const failed = await newEvents();
    expect(types(failed)).toEqual(['payment.failed', 'subscription.past_due']);
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
      status: 'past_due',
      has_access: true,
    });
    clock.advance(86_400_000);
    expect(
      (await stripeEvent('invoice.paid', paidInvoice(subscription, failedIntent, 'subscription_cycle')).send()).status,
    ).toBe(200);
    const recovered = await newEvents();
    expect(types(recovered)).toEqual(['payment.succeeded', 'subscription.activated']);
    expect((recovered[0].data as { payment: { id: string } }).payment.id).toBe(
      (failed[0].data as { payment: { id: string } }).payment.id,
    );
    const payments = await ok('GET', `/v1/projects/${projectId}/payments`);
    expect(payments.data.map((payment: { status: string }) => payment.status).sort()).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);

    // A second checkout of the same customer finds the same subscriber.
    const again = await checkout({ customer });
    expect((await ok('GET', `/v1/subscriptions/${again.subscriptionId}`)).subscriber_id).toBe(subscriber.id);
  });

  it('checkout.session.completed in payment mode creates an active subscription with its succeeded payment, in one transaction', async () => {
    const paymentIntent = stripeId('pi');
    const reply = await stripeEvent(
      'checkout.session.completed',
      checkoutSession({
        customer: stripeId('cus'),
        email: 'bo@example.com',
        planId: gold.id,
        mode: 'payment',
        paymentIntent,
        amountTotal: 900,
      }),
    ).send();
    expect(reply.status).toBe(200);
    const events = await newEvents();
    expect(types(events).slice(0, 2)).toEqual(['payment.succeeded', 'subscription.created']);
    expect(events[0].data).toMatchObject({
      payment: { provider_payment_id: paymentIntent, status: 'succeeded', billing_reason: 'subscription_create' },
    });
    expect(events[1].data).toMatchObject({
      subscription: { status: 'active', source: 'provider', payment_provider: 'stripe' },
    });
  });

  it('a payment-mode checkout paid by a delayed method is pending with a pending payment until checkout.session.async_payment_succeeded activates it', async () => {
    const paymentIntent = stripeId('pi');
    const session = checkoutSession({
      customer: stripeId('cus'),
      planId: gold.id,
      mode: 'payment',
      paymentIntent,
      amountTotal: 900,
      paymentStatus: 'unpaid',
    });
    // Settled before its checkout was applied: sent again later (409, no receipt).
    const early = stripeEvent('checkout.session.async_payment_succeeded', { ...session, payment_status: 'paid' });
    expect((await early.send()).status).toBe(409);
    expect((await stripeEvent('checkout.session.completed', session).send()).status).toBe(200);
    const created = await newEvents();
    expect(types(created).slice(0, 2)).toEqual(['payment.pending', 'subscription.created']);
    expect(created[0].data).toMatchObject({
      payment: { provider_payment_id: paymentIntent, status: 'pending', amount: 900, currency: 'EUR' },
    });
    const subscriptionId = (created[1].data as { subscription: { id: string } }).subscription.id;
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
      status: 'pending',
      has_access: false,
    });

    expect(await early.send()).toEqual({ status: 200, body: { received: true } });
    const settled = await newEvents();
    expect(types(settled).slice(0, 2)).toEqual(['payment.succeeded', 'subscription.activated']);
    expect((settled[0].data as { payment: { id: string } }).payment.id).toBe(
      (created[0].data as { payment: { id: string } }).payment.id,
    );
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
      status: 'active',
      has_access: true,
    });
    // Reported again (a new event id) it changes nothing.
    expect(
      (await stripeEvent('checkout.session.async_payment_succeeded', { ...session, payment_status: 'paid' }).send())
        .body.ignored,
    ).toContain('succeeded already');
    expect(await newEvents()).toEqual([]);
  });

  it('checkout.session.async_payment_failed fails the pending payment and leaves the subscription pending until it expires', async () => {
    const session = checkoutSession({
      customer: stripeId('cus'),
      planId: gold.id,
      mode: 'payment',
      amountTotal: 900,
      paymentStatus: 'unpaid',
    });
    await stripeEvent('checkout.session.completed', session).send();
    const subscriptionId = (
      (await newEvents()).find((event) => event.type === 'subscription.created')!.data as {
        subscription: { id: string };
      }
    ).subscription.id;
    expect((await stripeEvent('checkout.session.async_payment_failed', session).send()).status).toBe(200);
    const failed = await newEvents();
    expect(types(failed)).toEqual(['payment.failed']);
    expect(failed[0].data).toMatchObject({
      payment: { status: 'failed' },
      subscription: { id: subscriptionId, status: 'pending' },
    });
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
      status: 'pending',
      has_access: false,
    });
  });

  it('a checkout for a plan with a trial starts trialing; the zero first invoice changes nothing, and the first charge after the trial activates it', async () => {
    const trial = await ok(
      'POST',
      `/v1/projects/${projectId}/plans`,
      { name: 'Trial gold', amount: 900, currency: 'EUR', interval: 'month', trial_days: 14 },
      201,
    );
    const subscription = stripeId('sub');
    await stripeEvent('checkout.session.completed', {
      ...checkoutSession({ customer: stripeId('cus'), planId: trial.id, subscription }),
      payment_status: 'no_payment_required',
    }).send();
    const link = await runtime.store.get(keys.providerSubscription(team.team.id, projectId, 'stripe', subscription));
    const subscriptionId = link!.subscription_id as string;
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
      status: 'trialing',
      has_access: true,
      trial_ends_at: new Date(clock.nowMs() + 14 * 86_400_000).toISOString(),
    });
    await newEvents();
    expect(
      (await stripeEvent('invoice.paid', paidInvoice(subscription, stripeId('pi'), 'subscription_create', 0)).send())
        .body.ignored,
    ).toContain('trialing');
    expect(await newEvents()).toEqual([]);
    clock.advance(14 * 86_400_000);
    expect(
      (await stripeEvent('invoice.paid', paidInvoice(subscription, stripeId('pi'), 'subscription_cycle')).send())
        .status,
    ).toBe(200);
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.activated']);
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
      status: 'active',
      previous_status: 'trialing',
    });
  });

  it('a zero-amount first invoice (a trial or coupon Stripe applied to a plan without one) activates a pending subscription without a payment', async () => {
    const { subscription, subscriptionId } = await checkout();
    await newEvents();
    expect(
      (await stripeEvent('invoice.paid', paidInvoice(subscription, stripeId('pi'), 'subscription_create', 0)).send())
        .body,
    ).toEqual({ received: true });
    // No payment.* event (nothing was paid); access starts (member.* events of the access grant follow).
    expect(types(await newEvents()).filter((type) => !type.startsWith('member.'))).toEqual(['subscription.activated']);
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
      status: 'active',
      has_access: true,
    });
    expect((await ok('GET', `/v1/projects/${projectId}/payments`)).data).toEqual([]);
  });

  it('customer.subscription.updated maps cancel at period end, resume, pause, resume and a price change; .deleted cancels', async () => {
    const { subscription, subscriptionId } = await checkout();
    await stripeEvent('invoice.paid', paidInvoice(subscription, stripeId('pi'), 'subscription_create')).send();
    const platinum = await ok(
      'POST',
      `/v1/projects/${projectId}/plans`,
      { name: 'Platinum', amount: 1900, currency: 'EUR', interval: 'month' },
      201,
    );
    // What plan sync stores (the outbound half): the plan's Stripe price.
    await runtime.store.update({
      Key: keys.plan(team.team.id, platinum.id),
      UpdateExpression: 'SET payment_provider = :stripe, provider_price_id = :price',
      ExpressionAttributeValues: { ':stripe': 'stripe', ':price': 'price_platinum' },
    });
    await newEvents();
    let second = nowSeconds();
    const update = async (state: Parameters<typeof stripeSubscription>[0], type = 'customer.subscription.updated') => {
      second += 1;
      const reply = await stripeEvent(type, stripeSubscription(state), second).send();
      expect(reply.status).toBe(200);
      return types(await newEvents());
    };
    expect(await update({ id: subscription, cancelAtPeriodEnd: true })).toEqual([
      'subscription.cancellation_scheduled',
    ]);
    expect(await update({ id: subscription })).toEqual(['subscription.resumed']);
    expect((await update({ id: subscription, paused: true }))[0]).toBe('subscription.paused');
    expect((await update({ id: subscription }))[0]).toBe('subscription.resumed');
    expect(await update({ id: subscription, priceId: 'price_platinum' })).toEqual(['subscription.upgraded']);
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
      status: 'active',
      plan_id: platinum.id,
    });
    expect(
      (
        await update(
          { id: subscription, status: 'canceled', priceId: 'price_platinum' },
          'customer.subscription.deleted',
        )
      )[0],
    ).toBe('subscription.canceled');
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({ status: 'canceled' });
  });

  it('charge.refunded records the refund with one payment.refunded; the same refund reported again changes nothing', async () => {
    const { subscription } = await checkout();
    const paymentIntent = stripeId('pi');
    await stripeEvent('invoice.paid', paidInvoice(subscription, paymentIntent, 'subscription_create')).send();
    await newEvents();
    expect(
      (await stripeEvent('charge.refunded', refundedCharge({ paymentIntent, amount: 900, amountRefunded: 300 })).send())
        .status,
    ).toBe(200);
    const partial = await newEvents();
    expect(types(partial)).toEqual(['payment.refunded']);
    expect(partial[0].data).toMatchObject({
      payment: { status: 'succeeded', amount_refunded: 300 },
      refund: { amount: 300, reason: 'requested_by_customer' },
    });
    expect(
      (await stripeEvent('charge.refunded', refundedCharge({ paymentIntent, amount: 900, amountRefunded: 900 })).send())
        .status,
    ).toBe(200);
    const full = await newEvents();
    expect(full[0].data).toMatchObject({
      payment: { status: 'refunded', amount_refunded: 900 },
      refund: { amount: 600 },
    });
    // Another event reporting the same cumulative refund (e.g. charge.refunded after charge.refund.updated): nothing.
    const reply = await stripeEvent(
      'charge.refunded',
      refundedCharge({ paymentIntent, amount: 900, amountRefunded: 900 }),
    ).send();
    expect(reply.status).toBe(200);
    expect(reply.body.ignored).toContain('refund recorded already');
    expect(await newEvents()).toEqual([]);
  });

  it('charge.refunded after a refund made through the API emits nothing (one payment.refunded, not two)', async () => {
    const { subscription } = await checkout();
    const paymentIntent = stripeId('pi');
    await stripeEvent('invoice.paid', paidInvoice(subscription, paymentIntent, 'subscription_create')).send();
    const paid = (await newEvents()).find((event) => event.type === 'payment.succeeded')!;
    const paymentId = (paid.data as { payment: { id: string } }).payment.id;
    await ok('POST', `/v1/payments/${paymentId}/refund`, {});
    expect(types(await newEvents())).toEqual(['payment.refunded']);
    const reply = await stripeEvent(
      'charge.refunded',
      refundedCharge({ paymentIntent, amount: 900, amountRefunded: 900 }),
    ).send();
    expect(reply.status).toBe(200);
    expect(await newEvents()).toEqual([]);
    expect(await ok('GET', `/v1/payments/${paymentId}`)).toMatchObject({ status: 'refunded', amount_refunded: 900 });
  });
});

describe('idempotency and order', () => {
  it('a re-sent event is acknowledged and changes nothing, emits nothing', async () => {
    const session = stripeEvent(
      'checkout.session.completed',
      checkoutSession({ customer: stripeId('cus'), planId: gold.id }),
    );
    expect((await session.send()).body).toEqual({ received: true });
    await newEvents();
    const before = await domainSnapshot(runtime.store);
    expect(await session.send()).toEqual({ status: 200, body: { received: true, duplicate: true } });
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    expect(await newEvents()).toEqual([]);
  });

  it('an older customer.subscription.updated after a newer one changes nothing; a transition D15 does not allow is acknowledged and ignored', async () => {
    const { subscription, subscriptionId } = await checkout();
    // Pending (first payment not in yet): D15 allows no pause.
    const notAllowed = await stripeEvent(
      'customer.subscription.updated',
      stripeSubscription({ id: subscription, paused: true }),
      nowSeconds() + 1,
    ).send();
    expect(notAllowed.status).toBe(200);
    expect(notAllowed.body.ignored).toBe('D15 allows no pause from pending');
    await stripeEvent(
      'invoice.paid',
      paidInvoice(subscription, stripeId('pi'), 'subscription_create'),
      nowSeconds() + 2,
    ).send();
    await newEvents();

    const newer = stripeEvent(
      'customer.subscription.updated',
      stripeSubscription({ id: subscription, cancelAtPeriodEnd: true }),
      nowSeconds() + 20,
    );
    const older = stripeEvent(
      'customer.subscription.updated',
      stripeSubscription({ id: subscription, cancelAtPeriodEnd: false }),
      nowSeconds() + 10,
    );
    expect((await newer.send()).status).toBe(200);
    expect(types(await newEvents())).toEqual(['subscription.cancellation_scheduled']);
    const before = await ok('GET', `/v1/subscriptions/${subscriptionId}`);
    const late = await older.send();
    expect(late.status).toBe(200);
    expect(late.body.ignored).toContain('older');
    expect(await newEvents()).toEqual([]);
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toEqual(before);
    // Its receipt is stored: sent again, it is a duplicate.
    expect((await older.send()).body).toEqual({ received: true, duplicate: true });
  });

  it('an older failed invoice after a newer paid one records the payment but moves nothing; a subscription event is ordered only against subscription events', async () => {
    const { subscription, subscriptionId } = await checkout();
    await stripeEvent(
      'invoice.paid',
      paidInvoice(subscription, stripeId('pi'), 'subscription_create'),
      nowSeconds(),
    ).send();
    clock.advance(31 * 86_400_000);
    const base = nowSeconds();
    const olderFailure = stripeEvent(
      'invoice.payment_failed',
      paidInvoice(subscription, stripeId('pi'), 'subscription_cycle'),
      base + 5,
    );
    expect(
      (
        await stripeEvent(
          'invoice.paid',
          paidInvoice(subscription, stripeId('pi'), 'subscription_cycle'),
          base + 10,
        ).send()
      ).status,
    ).toBe(200);
    await newEvents();
    expect((await olderFailure.send()).status).toBe(200);
    expect(types(await newEvents())).toEqual(['payment.failed']);
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({ status: 'active' });
    // The subscriber scheduled the cancellation a second before that invoice: it still applies.
    expect(
      (
        await stripeEvent(
          'customer.subscription.updated',
          stripeSubscription({ id: subscription, cancelAtPeriodEnd: true }),
          base + 9,
        ).send()
      ).status,
    ).toBe(200);
    expect(types(await newEvents())).toEqual(['subscription.cancellation_scheduled']);
  });

  it('an invoice before its checkout gets 409 and no receipt; sent again after the checkout it applies, though Stripe created it first', async () => {
    const customer = stripeId('cus');
    const subscription = stripeId('sub');
    // As Stripe does: the first invoice is paid (and its event created) before the session completes.
    const early = stripeEvent(
      'invoice.paid',
      paidInvoice(subscription, stripeId('pi'), 'subscription_create'),
      nowSeconds() - 5,
    );
    const refused = await early.send();
    expect(refused.status).toBe(409);
    expect(await runtime.store.get(keys.hookReceipt(team.team.id, 'stripe', projectId, early.id))).toBeUndefined();
    await stripeEvent(
      'checkout.session.completed',
      checkoutSession({ customer, planId: gold.id, subscription }),
    ).send();
    expect(await early.send()).toEqual({ status: 200, body: { received: true } });
    expect(types(await newEvents()).slice(0, 3)).toEqual([
      'subscription.created',
      'payment.succeeded',
      'subscription.activated',
    ]);
  });

  it('a store failure answers 500 with nothing stored; Stripe sending it again applies it once', async () => {
    const session = stripeEvent(
      'checkout.session.completed',
      checkoutSession({ customer: stripeId('cus'), planId: gold.id }),
    );
    const store = runtime.store;
    let failures = 1;
    runtime.store = {
      ...store,
      transactWrite: async (items) => {
        if (failures-- > 0) throw new Error('DynamoDB is unavailable');
        return store.transactWrite(items);
      },
    };
    const before = await domainSnapshot(store);
    expect(await session.send()).toEqual({ status: 500, body: { error: 'The event was not stored; send it again.' } });
    expect(await domainSnapshot(store)).toEqual(before);
    expect((await session.send()).body).toEqual({ received: true });
    runtime.store = store;
    expect(types(await newEvents())).toEqual(['subscription.created']);
  });

  it('acknowledges unmapped events and checkouts without a plan, storing only the receipt', async () => {
    const before = await domainSnapshot(runtime.store);
    const unmapped = stripeEvent('customer.created', { id: stripeId('cus'), object: 'customer' });
    expect(await unmapped.send()).toEqual({
      status: 200,
      body: { received: true, ignored: 'customer.created is not mapped' },
    });
    const planless = stripeEvent('checkout.session.completed', checkoutSession({ customer: stripeId('cus') }));
    expect((await planless.send()).body.ignored).toContain('no plan');
    const added = (await domainSnapshot(runtime.store))
      .filter((line) => !before.includes(line))
      .map((line) => JSON.parse(line).entity);
    expect(added).toEqual(['hook_receipt', 'hook_receipt']);
    expect(await newEvents()).toEqual([]);
  });
});

describe('refusals', () => {
  it('answers the same 400 for a bad, missing or stale signature, an unknown project, a project id that is not one, and a project not connected to Stripe', async () => {
    const other = (await ok('POST', '/v1/projects', { name: 'Unconnected', platform_type: 'telegram' }, 201)).id;
    const { body } = stripeEventBody(
      'checkout.session.completed',
      checkoutSession({ customer: stripeId('cus'), planId: gold.id }),
      { created: nowSeconds() },
    );
    const signed = stripeSignature(body, webhookSecret, nowSeconds());
    await newEvents();
    const before = await domainSnapshot(runtime.store);
    const answers = [
      await post(body, stripeSignature(body, 'whsec_wrong', nowSeconds())),
      await post(body, undefined),
      await post(body, 'not a signature'),
      await post(`${body} `, signed),
      await post(body, stripeSignature(body, webhookSecret, nowSeconds() - 301)),
      await post(body, signed, randomUUID()),
      await post(body, signed, 'not-a-project'),
      await post(body, signed, other),
    ];
    for (const answer of answers)
      expect(answer).toEqual({
        status: 400,
        body: { error: 'The Stripe-Signature header is missing or does not verify for this endpoint.' },
      });
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    // Within the tolerance it verifies.
    expect((await post(body, stripeSignature(body, webhookSecret, nowSeconds() - 299))).status).toBe(200);
  });

  it('opens one sealed credential for every refused request alike: a connected project, an unknown one and an unconnected one (no timing oracle)', async () => {
    const other = (await ok('POST', '/v1/projects', { name: 'Unconnected', platform_type: 'telegram' }, 201)).id;
    const key = runtime.integrations!.keyEncryptionKey;
    const unwrap = vi.spyOn(key, 'unwrapDataKey');
    const { body } = stripeEventBody(
      'checkout.session.completed',
      checkoutSession({ customer: stripeId('cus'), planId: gold.id }),
      { created: nowSeconds() },
    );
    const forged = stripeSignature(body, 'whsec_forged', nowSeconds());
    const unwrapsFor = async (project: string) => {
      // The decoy is sealed once per key: warm it so only the per-request work is counted.
      await post(body, forged, randomUUID());
      unwrap.mockClear();
      expect((await post(body, forged, project)).status).toBe(400);
      return unwrap.mock.calls.length;
    };
    expect([
      await unwrapsFor(projectId),
      await unwrapsFor(randomUUID()),
      await unwrapsFor(other),
      await unwrapsFor('not-a-project'),
    ]).toEqual([1, 1, 1, 1]);
  });
});
