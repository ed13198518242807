/**
 * The public pages' handler (DESIGN D26, D27) against DynamoDB Local, without a browser: the join page
 * lists only the project's active plans (paid plans without a synced provider price as unavailable, no
 * button); an unknown project and another team's project answer the same 404; a free plan and a code
 * create the subscription and lead to a welcome page whose link is not guessable (a forged one grants
 * nothing); a paid plan of a Stripe-connected project leads (303) to Stripe Checkout (the loopback fake) and,
 * once the signed events arrived, the welcome page shows the subscription and a portal link; the portal
 * cancels at period end and resumes only the subscriber's own subscriptions; a form without its CSRF token
 * is refused (403); the per-IP rate limit answers 429; every answer carries the strict headers.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '../../shared/domain/projects/creation.js';
import { listSubscriptions } from '../../shared/domain/subscriptions/queries.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { stripeHook } from '../../shared/hooks/stripe.js';
import { caller } from '../support/calls.js';
import { startFakeStripeApi, type FakeStripeApi } from '../support/stripe-api.js';
import {
  checkoutSession,
  connectStripeWithPlan,
  invoice,
  stripeEventBody,
  stripeId,
  stripeSignature,
} from '../support/stripe.js';
import {
  clock,
  joinFreePlanByEmail,
  openJoinPage,
  plan,
  projectId,
  runtime,
  serve,
  team,
  usePublicPagesFixture,
} from '../support/fixtures/public-pages.js';

usePublicPagesFixture();

describe('the welcome page', () => {
  it('shows nothing for a forged or foreign welcome link, and only "confirming" for an unknown checkout session', async () => {
    const free = await plan({ name: 'Free readers', amount: 0, currency: 'EUR', interval: 'month' });
    const { confirmed } = await joinFreePlanByEmail(free.id, 'fan@example.com');
    const real = new URL(confirmed.headers.Location, 'http://x');
    const subscriptionId = real.searchParams.get('subscription')!;
    const token = real.searchParams.get('t')!;
    const other = await createProject(runtime, team.principal, { name: 'Other', platform_type: 'web' });

    for (const forged of [
      `/join/${projectId}/welcome?subscription=${subscriptionId}`,
      `/join/${projectId}/welcome?subscription=${subscriptionId}&t=${'A'.repeat(43)}`,
      `/join/${projectId}/welcome?subscription=${randomUUID()}&t=${token}`,
      `/join/${other.id}/welcome?subscription=${subscriptionId}&t=${token}`,
    ]) {
      const answer = await serve('GET', forged);
      expect(answer.statusCode, forged).toBe(404);
      expect(answer.body).not.toContain('Active');
    }

    const confirming = await serve(
      'GET',
      `/join/${projectId}/welcome?session_id=cs_test_${randomUUID().replaceAll('-', '')}`,
    );
    expect(confirming.statusCode).toBe(200);
    expect(confirming.body).toContain('We are confirming your payment');
    expect(confirming.body).toContain('hx-trigger="every 2s"');
    expect(confirming.body).not.toContain('Manage your membership');
    const fragment = await serve('GET', `/join/${projectId}/welcome?session_id=cs_test_unknown`, { htmx: true });
    expect(fragment.body).toMatch(/^<div id="welcome-status"/);
  });
});

describe('paid plans and the portal', () => {
  let stripe: FakeStripeApi;
  beforeAll(async () => {
    stripe = await startFakeStripeApi();
  });
  afterAll(async () => {
    await stripe.stop();
  });

  /**
   * Connects the project to the fake Stripe and creates a synced monthly plan; returns the plan and the signing secret.
   */
  async function stripePlan(): Promise<{ planId: string; priceId: string; webhookSecret: string }> {
    runtime.integrations = {
      keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
      telegramApiRoot: 'http://127.0.0.1:9',
      stripeApiBaseUrl: stripe.url,
      retry: { retries: 0, minTimeoutMs: 0 },
    };
    const { ok } = caller(() => ({ runtime, token: team.token }));
    const { plan, webhookSecret } = await connectStripeWithPlan(stripe, ok, projectId);
    return { planId: plan.id, priceId: plan.provider_price_id, webhookSecret };
  }

  /** Delivers a signed Stripe event to the project's hook, as Stripe would. */
  async function deliver(webhookSecret: string, type: string, object: unknown): Promise<void> {
    const created = Math.floor(clock.nowMs() / 1000);
    const { body } = stripeEventBody(type, object, { created });
    const answer = await stripeHook(runtime, {
      projectId,
      headers: { 'stripe-signature': stripeSignature(body, webhookSecret, created) },
      body,
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  }

  it('a paid plan leads (303) to the checkout page of a session of its synced price, with the welcome page as success URL', async () => {
    const { planId, priceId } = await stripePlan();
    const { page, cookies, csrf } = await openJoinPage();
    expect(page.headers?.['Content-Security-Policy']).toContain(new URL(stripe.url).origin);
    const answer = await serve('POST', `/join/${projectId}/plans/${planId}`, {
      cookies,
      form: { csrf_token: csrf, idempotency_key: randomUUID() },
    });
    expect(answer.statusCode, answer.body).toBe(303);
    const sessions = [...stripe.checkoutSessions.values()].filter(
      (session) => session.metadata?.project_id === projectId,
    );
    expect(sessions).toHaveLength(1);
    expect(answer.headers.Location).toBe(sessions[0].url);
    expect(sessions[0]).toMatchObject({
      mode: 'subscription',
      line_items: [{ price: priceId }],
      metadata: { project_id: projectId, plan_id: planId },
      success_url: `http://localhost:3000/join/${projectId}/welcome?session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `http://localhost:3000/join/${projectId}`,
    });
    expect((await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data).toEqual([]);
  });

  it('after the signed events the welcome page shows the subscription and a portal link; the portal cancels at period end and resumes the subscriber’s own subscription only', async () => {
    const { planId, priceId, webhookSecret } = await stripePlan();
    const sessionId = stripeId('cs');
    const subscription = stripeId('sub');
    const customer = stripeId('cus');
    stripe.addSubscription(subscription, { priceId, customer });
    const welcomePath = `/join/${projectId}/welcome?session_id=${sessionId}`;
    expect((await serve('GET', welcomePath)).body).toContain('We are confirming your payment');

    await deliver(webhookSecret, 'checkout.session.completed', {
      ...checkoutSession({ customer, email: 'payer@example.com', planId, subscription }),
      id: sessionId,
    });
    const pending = await serve('GET', welcomePath, { htmx: true });
    expect(pending.body).toContain('Pending');
    expect(pending.body).toContain('hx-trigger="every 2s"');
    await deliver(
      webhookSecret,
      'invoice.paid',
      invoice({ subscription, paymentIntent: stripeId('pi'), amount: 900, billingReason: 'subscription_create' }),
    );
    const welcome = await serve('GET', welcomePath);
    expect(welcome.body).toContain('Active');
    expect(welcome.body).not.toContain('hx-trigger');
    expect(welcome.body).not.toContain('payer@example.com');
    const manage = /href="(\/portal\/[^"]+)"/.exec(welcome.body ?? '')![1].replaceAll('&amp;', '&');

    const signedIn = await serve('GET', manage);
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.cookies?.[0]).toMatch(/^portal_session=pps_\w+; Path=\/portal; HttpOnly; Secure; SameSite=Lax$/);
    expect((await serve('GET', manage)).statusCode).toBe(404); // single use
    const cookies = [signedIn.cookies![0].split(';')[0]];
    const portal = await serve('GET', `/portal/${projectId}`, { cookies });
    expect(portal.statusCode).toBe(200);
    expect(portal.body).toContain('€9.00 per month');
    expect(portal.body).toContain('Renews on');
    expect(portal.body).toContain('Update payment method');
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(portal.body ?? '')![1];
    const [ours] = (await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data;

    expect(
      (
        await serve('POST', `/portal/${projectId}/subscriptions/${ours.id}/cancel`, {
          cookies,
          form: { idempotency_key: randomUUID() },
        })
      ).statusCode,
    ).toBe(403);
    const cancelled = await serve('POST', `/portal/${projectId}/subscriptions/${ours.id}/cancel`, {
      cookies,
      form: { csrf_token: csrf, idempotency_key: randomUUID() },
    });
    expect(cancelled.statusCode, cancelled.body).toBe(303);
    const after = await serve('GET', `/portal/${projectId}`, { cookies });
    expect(after.body).toContain('Cancels at period end');
    expect(after.body).toContain('Ends on');
    expect(
      stripe
        .requestsTo('POST', `/v1/subscriptions/${subscription}`)
        .map((request) => request.params.cancel_at_period_end),
    ).toEqual(['true']);
    const resumed = await serve('POST', `/portal/${projectId}/subscriptions/${ours.id}/resume`, {
      cookies,
      form: { csrf_token: csrf, idempotency_key: randomUUID() },
    });
    expect(resumed.statusCode, resumed.body).toBe(303);
    expect((await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data[0].status).toBe(
      'active',
    );

    const billing = await serve('POST', `/portal/${projectId}/subscriptions/${ours.id}/payment-method`, {
      cookies,
      form: { csrf_token: csrf, idempotency_key: randomUUID() },
    });
    expect(billing.statusCode, billing.body).toBe(303);
    expect(billing.headers.Location).toBe(stripe.billingPortalSessions.at(-1)!.url);
    expect(stripe.billingPortalSessions.at(-1)).toMatchObject({
      customer,
      return_url: `http://localhost:3000/portal/${projectId}`,
    });

    // Someone else's subscription of the same project is not theirs: nothing changes.
    const free = await plan({ name: 'Free readers', amount: 0, currency: 'EUR', interval: 'month' });
    await joinFreePlanByEmail(free.id, 'other@example.com');
    const others = (await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data.find(
      (candidate) => candidate.id !== ours.id,
    )!;
    const refused = await serve('POST', `/portal/${projectId}/subscriptions/${others.id}/cancel`, {
      cookies,
      form: { csrf_token: csrf, idempotency_key: randomUUID() },
    });
    expect(refused.statusCode).toBe(404);
    expect(refused.body).not.toContain('other@example.com');
    expect(
      (await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data.find(
        (candidate) => candidate.id === others.id,
      )!.status,
    ).toBe('active');

    const signedOut = await serve('POST', `/portal/${projectId}/sign-out`, { cookies, form: { csrf_token: csrf } });
    expect(signedOut.cookies?.[0]).toContain('Max-Age=0');
    expect((await serve('GET', `/portal/${projectId}`, { cookies })).statusCode).toBe(401);
  });
});
