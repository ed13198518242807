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

import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { keys } from '../../shared/store/keys.js';
import { domainSnapshot } from '../support/guarantees.js';
import { checkoutSession, stripeEventBody, stripeId, stripeSignature, stripeSubscription } from '../support/stripe.js';
import {
  checkout,
  clock,
  gold,
  newEvents,
  nowSeconds,
  ok,
  paidInvoice,
  post,
  projectId,
  runtime,
  stripeEvent,
  team,
  types,
  webhookSecret,
  useStripeHooksFixture,
} from '../support/fixtures/stripe-hooks.js';
import { DAY_MS } from '../../shared/clock.js';

useStripeHooksFixture();

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
    clock.advance(31 * DAY_MS);
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
