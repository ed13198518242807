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

import { describe, expect, it } from 'vitest';
import { keys } from '../../shared/store/keys.js';
import { scanTable } from '../support/guarantees.js';
import { checkoutSession, refundedCharge, stripeId, stripeSubscription } from '../support/stripe.js';
import {
  checkout,
  clock,
  gold,
  newEvents,
  nowSeconds,
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
    clock.advance(31 * DAY_MS);
    expect(
      (await stripeEvent('invoice.paid', paidInvoice(subscription, stripeId('pi'), 'subscription_cycle')).send())
        .status,
    ).toBe(200);
    expect(types(await newEvents())).toEqual(['payment.succeeded', 'subscription.renewed']);
    clock.advance(31 * DAY_MS);
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
    // Its grace period is the plan's default 7 days from the failure.
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
      status: 'past_due',
      has_access: true,
      grace_period_end: new Date(clock.nowMs() + 7 * DAY_MS).toISOString(),
    });
    clock.advance(DAY_MS);
    expect(
      (await stripeEvent('invoice.paid', paidInvoice(subscription, failedIntent, 'subscription_cycle')).send()).status,
    ).toBe(200);
    const recovered = await newEvents();
    expect(types(recovered)).toEqual(['payment.succeeded', 'subscription.activated']);
    expect(await ok('GET', `/v1/subscriptions/${subscriptionId}`)).toMatchObject({
      status: 'active',
      grace_period_end: null,
    });
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
      trial_ends_at: new Date(clock.nowMs() + 14 * DAY_MS).toISOString(),
    });
    await newEvents();
    expect(
      (await stripeEvent('invoice.paid', paidInvoice(subscription, stripeId('pi'), 'subscription_create', 0)).send())
        .body.ignored,
    ).toContain('trialing');
    expect(await newEvents()).toEqual([]);
    clock.advance(14 * DAY_MS);
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
