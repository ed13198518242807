/**
 * Payments a provider reports that do not match their plan's price (DESIGN D15, D16, D22), through the project's
 * Stripe hook against DynamoDB Local: an `invoice.paid` in another currency or for less than the price on a first or
 * a period's invoice is recorded as succeeded with its `mismatch`, emits its `payment.succeeded` and moves no
 * subscription; "Needs attention" lists it; `POST /v1/payments/{id}/accept` clears the flag and applies the
 * transition once (409 naming the state afterwards); a matching, higher (tax) or prorated amount drives the
 * subscription as before; a payment-mode checkout paid short stays pending.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSession } from '../../shared/domain/team-members/sessions.js';
import type { Payment } from '../../shared/domain/payments/schema.js';
import { ensureTeamOwner } from '../../shared/domain/team-members/changes.js';
import { caller } from '../support/calls.js';
import { checkoutSession, invoice, stripeId } from '../support/stripe.js';
import {
  checkout,
  clock,
  gold,
  newEvents,
  ok,
  paidInvoice,
  projectId,
  runtime,
  stripeEvent,
  team,
  types,
  useStripeHooksFixture,
} from '../support/fixtures/stripe-hooks.js';
import { DAY_MS } from '../../shared/clock.js';

useStripeHooksFixture();

const { call } = caller(() => ({ runtime, token: team.token }));

/** The payment a `payment.*` event carries. */
const paymentOf = (event: { data: unknown }) => (event.data as { payment: Payment }).payment;

/** Sends `invoice.paid` with `body` (default: the first invoice of `subscription` at the price) and expects 200. */
async function pay(subscription: string, body?: ReturnType<typeof invoice>) {
  body ??= paidInvoice(subscription, stripeId('pi'), 'subscription_create');
  expect(await stripeEvent('invoice.paid', body).send()).toEqual({ status: 200, body: { received: true } });
}

/** The team's dashboard home page as its owner sees it. */
async function dashboardHome(): Promise<string> {
  const owner = await ensureTeamOwner(runtime, team.team.id, { email: `owner-${randomUUID()}@example.com`, name: 'O' });
  const { cookieValue } = await createSession(runtime.store, clock, {
    teamId: team.team.id,
    memberId: owner.id,
    state: 'active',
    method: 'passkey',
  });
  const { dashboard } = caller(() => ({ runtime, token: team.token }));
  const page = await dashboard('GET', '/dashboard', { cookie: cookieValue });
  expect(page.statusCode).toBe(200);
  return String(page.body);
}

describe('a first invoice that does not match the plan', () => {
  it('1 JPY on a 900 EUR plan is recorded flagged, leaves the subscription pending, shows in Needs attention, and activates once accepted', async () => {
    const { subscription, subscriptionId } = await checkout();
    await newEvents();
    await pay(
      subscription,
      invoice({
        subscription,
        paymentIntent: stripeId('pi'),
        amount: 1,
        currency: 'jpy',
        billingReason: 'subscription_create',
      }),
    );
    const events = await newEvents();
    expect(types(events)).toEqual(['payment.succeeded']);
    const payment = paymentOf(events[0]);
    expect(payment).toMatchObject({
      status: 'succeeded',
      amount: 1,
      currency: 'JPY',
      mismatch: { expected_amount: 900, expected_currency: 'EUR', reason: 'currency' },
    });
    expect(await ok('GET', `/v1/payments/${payment.id}`)).toMatchObject({ mismatch: { reason: 'currency' } });
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
      status: 'pending',
      has_access: false,
    });

    const home = await dashboardHome();
    expect(home).toContain(`id="attention-mismatch-${payment.id}"`);
    expect(home).toContain('Book club: Ada paid 1 JPY (in another currency), the plan asks 9.00 EUR');
    expect(home).toContain(`/dashboard/projects/${projectId}/subscribers/${payment.subscriber_id}`);
    await newEvents(); // the team owner the dashboard signed in as

    const accepted = await ok('POST', `/v1/payments/${payment.id}/accept`);
    expect(accepted).toMatchObject({ id: payment.id, status: 'succeeded', mismatch: null });
    const afterAccept = await newEvents();
    // The transition only: the payment itself was announced when Stripe reported it.
    expect(types(afterAccept)[0]).toBe('subscription.activated');
    expect(types(afterAccept).filter((type) => type.startsWith('payment.'))).toEqual([]);
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
      status: 'active',
      has_access: true,
    });

    const again = await call('POST', `/v1/payments/${payment.id}/accept`);
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ code: 'CONFLICT' });
    expect(again.json.detail).toContain('is succeeded and not flagged');
    expect(types(await newEvents())).toEqual([]);
    expect(await dashboardHome()).not.toContain('attention-mismatch-');
  });

  it('a first invoice for less than the price is flagged; the exact price and a higher amount (tax) activate as before', async () => {
    const short = await checkout();
    await pay(short.subscription, paidInvoice(short.subscription, stripeId('pi'), 'subscription_create', 899));
    const events = await newEvents();
    expect(types(events)).toEqual(['subscription.created', 'payment.succeeded']);
    expect(paymentOf(events[1]).mismatch).toEqual({
      expected_amount: 900,
      expected_currency: 'EUR',
      reason: 'amount_below_price',
    });
    expect((await ok('GET', `/v1/subscriptions/${short.subscriptionId}`)).status).toBe('pending');

    for (const amount of [900, 1080]) {
      const exact = await checkout();
      await newEvents();
      await pay(exact.subscription, paidInvoice(exact.subscription, stripeId('pi'), 'subscription_create', amount));
      const paid = await newEvents();
      expect(types(paid).slice(0, 2)).toEqual(['payment.succeeded', 'subscription.activated']);
      expect(paymentOf(paid[0])).toMatchObject({ amount, mismatch: null });
      expect((await ok('GET', `/v1/subscriptions/${exact.subscriptionId}`)).status).toBe('active');
    }
  });

  it('a payment-mode checkout paid short creates a pending subscription with the payment flagged', async () => {
    const reply = await stripeEvent(
      'checkout.session.completed',
      checkoutSession({ customer: stripeId('cus'), planId: gold.id, mode: 'payment', amountTotal: 100 }),
    ).send();
    expect(reply.status).toBe(200);
    const events = await newEvents();
    expect(types(events).slice(0, 2)).toEqual(['payment.succeeded', 'subscription.created']);
    expect(paymentOf(events[0]).mismatch).toMatchObject({ reason: 'amount_below_price', expected_amount: 900 });
    expect(events[1].data).toMatchObject({ subscription: { status: 'pending' } });
  });
});

describe('a renewal that does not match the plan', () => {
  it('a period invoice paying less renews nothing; accepting it renews once; a prorated invoice for less is not flagged', async () => {
    const { subscription, subscriptionId } = await checkout();
    await pay(subscription);
    const active = await ok('GET', `/v1/subscriptions/${subscriptionId}`);
    expect(active.status).toBe('active');
    await newEvents();

    clock.advance(31 * DAY_MS);
    await pay(subscription, paidInvoice(subscription, stripeId('pi'), 'subscription_cycle', 450));
    const events = await newEvents();
    expect(types(events)).toEqual(['payment.succeeded']);
    expect(paymentOf(events[0]).mismatch).toEqual({
      expected_amount: 900,
      expected_currency: 'EUR',
      reason: 'amount_below_price',
    });
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
      status: 'active',
      current_period_end: active.current_period_end,
    });

    await ok('POST', `/v1/payments/${paymentOf(events[0]).id}/accept`);
    expect(types(await newEvents())).toEqual(['subscription.renewed']);
    const renewed = await ok('GET', `/v1/subscriptions/${subscriptionId}`);
    expect(renewed.current_period_start).toBe(active.current_period_end);

    // A plan change's proration legitimately charges less: recorded as it is, not flagged.
    await pay(
      subscription,
      invoice({ subscription, paymentIntent: stripeId('pi'), amount: 120, billingReason: 'subscription_update' }),
    );
    expect(paymentOf((await newEvents())[0])).toMatchObject({ amount: 120, mismatch: null });
  });

  it('a past-due subscription paid short stays past due until the payment is accepted', async () => {
    const { subscription, subscriptionId } = await checkout();
    await pay(subscription);
    clock.advance(31 * DAY_MS);
    const intent = stripeId('pi');
    const failed = await stripeEvent(
      'invoice.payment_failed',
      paidInvoice(subscription, intent, 'subscription_cycle'),
    ).send();
    expect(failed.status).toBe(200);
    expect((await ok('GET', `/v1/subscriptions/${subscriptionId}`)).status).toBe('past_due');
    await newEvents();

    clock.advance(DAY_MS);
    await pay(subscription, paidInvoice(subscription, intent, 'subscription_cycle', 300));
    const events = await newEvents();
    expect(types(events)).toEqual(['payment.succeeded']);
    const payment = paymentOf(events[0]);
    expect(payment).toMatchObject({ status: 'succeeded', amount: 300, mismatch: { reason: 'amount_below_price' } });
    expect((await ok('GET', `/v1/subscriptions/${subscriptionId}`)).status).toBe('past_due');

    await ok('POST', `/v1/payments/${payment.id}/accept`);
    expect(types(await newEvents())[0]).toBe('subscription.activated');
    expect((await ok('GET', `/v1/subscriptions/${subscriptionId}`)).status).toBe('active');
  });
});
