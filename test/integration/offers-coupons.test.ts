/**
 * Coupons and promotion codes (DESIGN D33) over REST, against DynamoDB Local and the loopback Stripe fake: a
 * Stripe-connected project's coupon is created at Stripe first; a checkout with its code carries it as the session's
 * discount, Stripe bills the discounted amount, and the subscription, payment and metrics carry the discount while it
 * lasts (a `once` coupon: the first month); codes that cannot apply are refused with a reason and nothing is created;
 * archiving stops the coupon at Stripe; a manual project's code limit holds under 50 concurrent redemptions.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { caller } from '../support/calls.js';
import { clock, projectId, runtime, team, usePublicPagesFixture } from '../support/fixtures/public-pages.js';
import { startHookServer } from '../support/hook-server.js';
import { startFakeStripeApi, type FakeStripeApi } from '../support/stripe-api.js';
import { connectStripe, invoice, stripeEventBody, stripeSignature } from '../support/stripe.js';
import { DAY_MS } from '../../shared/clock.js';

usePublicPagesFixture();

let stripe: FakeStripeApi;
let hooks: Awaited<ReturnType<typeof startHookServer>>;

beforeAll(async () => {
  stripe = await startFakeStripeApi();
  hooks = await startHookServer(() => runtime);
});
afterAll(async () => {
  await Promise.all([stripe.stop(), hooks.close()]);
});

const { ok, call } = caller(() => ({ runtime, token: team.token }));

let planId: string;
let otherPlanId: string;
let webhookSecret: string;

beforeEach(async () => {
  runtime.integrations = {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: 'http://127.0.0.1:9',
    stripeApiBaseUrl: stripe.url,
    publicBaseUrl: 'https://members.example',
    retry: { retries: 0, minTimeoutMs: 1 },
  };
  ({ webhookSecret } = await connectStripe(stripe, (path, body) => ok('PUT', path, body), projectId));
  stripe.deliverEventsTo(`${hooks.url}/hooks/stripe/${projectId}`, webhookSecret);
  const monthly = { amount: 900, currency: 'EUR', interval: 'month' };
  planId = (await ok('POST', `/v1/projects/${projectId}/plans`, { name: 'Monthly', ...monthly }, 201)).id;
  otherPlanId = (await ok('POST', `/v1/projects/${projectId}/plans`, { name: 'Other', ...monthly }, 201)).id;
});

const coupons = () => `/v1/projects/${projectId}/coupons`;
const checkout = (body: Record<string, unknown>, plan = planId) =>
  call('POST', `/v1/plans/${plan}/checkout-sessions`, body);

/** Pays a session on the fake's hosted page (the fake delivers checkout.session.completed and invoice.paid). */
async function pay(url: string): Promise<void> {
  const answer = await fetch(`${url}/pay`, {
    method: 'POST',
    body: new URLSearchParams({ email: 'fan@example.com' }),
    redirect: 'manual',
  });
  expect(answer.status).toBe(303);
}

/** Signs and sends one Stripe event to the project's hook, as Stripe would. */
async function sendStripeEvent(type: string, object: unknown): Promise<void> {
  const created = Math.floor(clock.nowMs() / 1000);
  const { body } = stripeEventBody(type, object, { created });
  const answer = await fetch(`${hooks.url}/hooks/stripe/${projectId}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Stripe-Signature': stripeSignature(body, webhookSecret, created) },
    body,
  });
  expect(answer.status).toBe(200);
}

describe('a Stripe-connected project’s coupon', () => {
  it('is created at Stripe first, discounts the checkout, and is billed at full price once it ends', async () => {
    const coupon = await ok(
      'POST',
      coupons(),
      {
        name: 'Launch',
        percent_off: 50,
        duration: 'once',
        applies_to_plans: [planId],
        promotion_codes: [{ code: 'launch50' }],
      },
      201,
    );
    const plan = await ok('GET', `/v1/plans/${planId}`);
    expect(coupon).toMatchObject({ provider: 'stripe', status: 'active', percent_off: 50, times_redeemed: 0 });
    expect(coupon.promotion_codes).toEqual([
      expect.objectContaining({ code: 'LAUNCH50', provider_promotion_code_id: expect.stringMatching(/^promo_/) }),
    ]);
    expect(stripe.discounts.coupons.get(coupon.id)).toMatchObject({
      percent_off: 50,
      duration: 'once',
      applies_to: { products: [plan.provider_product_id] },
    });

    const session = await checkout({ promotion_code: 'Launch50' });
    expect(session.status, session.text).toBe(201);
    const sent = stripe.checkoutSessions.get(session.json.id)!;
    expect(sent.discounts).toEqual([{ promotion_code: coupon.promotion_codes[0].provider_promotion_code_id }]);
    expect(sent.metadata).toMatchObject({ promotion_code: 'LAUNCH50' });
    await pay(session.json.url);

    const [subscription] = (await ok('GET', `/v1/projects/${projectId}/subscriptions`)).data;
    expect(subscription).toMatchObject({ status: 'active', plan_id: planId });
    expect(subscription.discount).toMatchObject({
      coupon_id: coupon.id,
      promotion_code: 'LAUNCH50',
      duration: 'once',
      end: subscription.current_period_end,
    });
    const [payment] = (await ok('GET', `/v1/projects/${projectId}/payments`)).data;
    expect(payment).toMatchObject({
      amount: 450,
      mismatch: null,
      discount: { coupon_id: coupon.id, promotion_code: 'LAUNCH50', amount: 450 },
    });
    const metrics = await ok('GET', `/v1/projects/${projectId}/metrics`);
    expect(metrics.mrr).toEqual([{ currency: 'EUR', amount: 450 }]);
    expect(metrics.last_30_days.discounts).toEqual([{ currency: 'EUR', amount: 450 }]);
    const counted = await ok('GET', `${coupons()}/${coupon.id}`);
    expect(counted.times_redeemed).toBe(1);
    expect(counted.promotion_codes[0].times_redeemed).toBe(1);

    // The second month: Stripe bills the full price; the discount is over, MRR is the full price.
    clock.advance(31 * DAY_MS);
    const stripeSubscription = [...stripe.subscriptions.keys()].at(-1)!;
    await sendStripeEvent(
      'invoice.paid',
      invoice({
        subscription: stripeSubscription,
        paymentIntent: 'pi_second',
        amount: 900,
        billingReason: 'subscription_cycle',
      }),
    );
    const renewed = await ok('GET', `/v1/subscriptions/${subscription.id}`);
    expect(renewed).toMatchObject({ status: 'active', discount: null });
    expect((await ok('GET', `/v1/projects/${projectId}/metrics`)).mrr).toEqual([{ currency: 'EUR', amount: 900 }]);
  });

  it('lets the buyer type a code on Stripe’s page when the plan allows it, and recognises it from Stripe’s ids', async () => {
    const coupon = await ok(
      'POST',
      coupons(),
      { name: 'Typed', percent_off: 10, duration: 'forever', promotion_codes: [{ code: 'TYPED10' }] },
      201,
    );
    expect((await ok('POST', `/v1/plans/${planId}`, { allow_promotion_codes: true })).allow_promotion_codes).toBe(true);
    const session = await checkout({});
    expect(stripe.checkoutSessions.get(session.json.id)).toMatchObject({ allow_promotion_codes: 'true' });
    const paid = await fetch(`${session.json.url}/pay`, {
      method: 'POST',
      body: new URLSearchParams({ email: 'typist@example.com', promotion_code: 'typed10' }),
      redirect: 'manual',
    });
    expect(paid.status).toBe(303);
    const [subscription] = (await ok('GET', `/v1/projects/${projectId}/subscriptions`)).data;
    expect(subscription.discount).toMatchObject({ coupon_id: coupon.id, promotion_code: 'TYPED10', end: null });
    const [payment] = (await ok('GET', `/v1/projects/${projectId}/payments`)).data;
    expect(payment).toMatchObject({ amount: 810, mismatch: null, discount: { amount: 90 } });
    expect((await ok('GET', `${coupons()}/${coupon.id}`)).times_redeemed).toBe(1);
  });

  it('refuses codes that cannot apply with the reason, and creates no checkout', async () => {
    const limited = await ok(
      'POST',
      coupons(),
      {
        name: 'Only the other plan',
        amount_off: 200,
        currency: 'EUR',
        duration: 'repeating',
        duration_in_months: 3,
        applies_to_plans: [otherPlanId],
        promotion_codes: [
          { code: 'OTHER2' },
          { code: 'SOON', expires_at: new Date(clock.nowMs() + DAY_MS).toISOString() },
        ],
      },
      201,
    );
    const before = stripe.checkoutSessions.size;
    const refusal = async (code: string, plan = planId) => {
      const reply = await checkout({ promotion_code: code }, plan);
      expect(reply.status, reply.text).toBe(422);
      return reply.json.detail as string;
    };
    expect(await refusal('NOPE')).toBe('There is no code NOPE.');
    expect(await refusal('other2')).toBe('The code OTHER2 does not apply to this plan.');
    clock.advance(2 * DAY_MS);
    expect(await refusal('SOON', otherPlanId)).toBe('The code SOON has expired.');
    expect(stripe.checkoutSessions.size).toBe(before);
    expect((await checkout({ promotion_code: 'OTHER2' }, otherPlanId)).status).toBe(201);

    // A code is unique per project; archiving stops the coupon at Stripe and here.
    const taken = await call('POST', `${coupons()}/${limited.id}/promotion-codes`, { code: 'other2' });
    expect(taken.status).toBe(409);
    const archived = await ok('POST', `${coupons()}/${limited.id}/archive`);
    expect(archived.status).toBe('archived');
    expect(archived.promotion_codes.map((code: { status: string }) => code.status)).toEqual(['archived', 'archived']);
    expect(stripe.discounts.coupons.has(limited.id)).toBe(false);
    expect(
      [...stripe.discounts.promotionCodes.values()]
        .filter((code) => code.promotion.coupon === limited.id)
        .map((code) => code.active),
    ).toEqual([false, false]);
    expect(await refusal('OTHER2', otherPlanId)).toBe('The code OTHER2 is no longer valid.');
    expect((await call('POST', `${coupons()}/${limited.id}/archive`)).status).toBe(409);
  });

  it('is not stored when Stripe refuses it', async () => {
    stripe.failNext(
      { status: 400, error: { type: 'invalid_request_error', message: 'Invalid percent_off' } },
      { method: 'POST', pathPrefix: '/v1/coupons' },
    );
    const reply = await call('POST', coupons(), { name: 'Bad', percent_off: 10, duration: 'forever' });
    expect(reply.status).toBe(422);
    expect(reply.json.detail).toContain('Invalid percent_off');
    expect((await ok('GET', coupons())).data).toEqual([]);
  });
});

describe('a manual project’s promotion code', () => {
  it('is redeemed exactly up to its limit by 50 concurrent first payments', async () => {
    const project = await ok('POST', '/v1/projects', { name: 'Manual', platform_type: 'telegram' }, 201);
    await ok('PUT', `/v1/projects/${project.id}/payment-provider`, { provider: 'manual' });
    const plan = await ok(
      'POST',
      `/v1/projects/${project.id}/plans`,
      { name: 'Monthly', amount: 1000, currency: 'EUR', interval: 'month' },
      201,
    );
    const coupon = await ok(
      'POST',
      `/v1/projects/${project.id}/coupons`,
      {
        name: 'Ten only',
        percent_off: 25,
        duration: 'forever',
        promotion_codes: [{ code: 'TEN', max_redemptions: 10 }],
      },
      201,
    );
    expect(coupon.provider).toBeNull();
    const subscribers = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        ok('POST', `/v1/projects/${project.id}/subscribers`, { email: `fan${index}@example.com` }, 201),
      ),
    );
    const replies = await Promise.all(
      subscribers.map((subscriber) =>
        call('POST', `/v1/projects/${project.id}/payments`, {
          subscriber_id: subscriber.id,
          plan_id: plan.id,
          status: 'succeeded',
          promotion_code: 'ten',
        }),
      ),
    );
    const accepted = replies.filter((reply) => reply.status === 201);
    expect(accepted).toHaveLength(10);
    for (const reply of replies.filter((entry) => entry.status !== 201)) expect([409, 422]).toContain(reply.status);
    for (const reply of accepted)
      expect(reply.json).toMatchObject({
        amount: 750,
        discount: { coupon_id: coupon.id, promotion_code: 'TEN', amount: 250 },
      });
    const after = await ok('GET', `/v1/projects/${project.id}/coupons/${coupon.id}`);
    expect(after.times_redeemed).toBe(10);
    expect(after.promotion_codes[0].times_redeemed).toBe(10);
    const subscriptions = (
      await ok('GET', `/v1/projects/${project.id}/subscriptions`, undefined, 200, { query: { limit: '100' } })
    ).data;
    expect(subscriptions).toHaveLength(10);
    expect(subscriptions.every((subscription: { discount: unknown }) => subscription.discount !== null)).toBe(true);
    expect((await ok('GET', `/v1/projects/${project.id}/metrics`)).mrr).toEqual([{ currency: 'EUR', amount: 7500 }]);
  });
});

describe('a first-time-only code of a manual project', () => {
  it('is refused to a subscriber who paid before, and taken by a new one', async () => {
    const project = await ok('POST', '/v1/projects', { name: 'Manual first', platform_type: 'telegram' }, 201);
    await ok('PUT', `/v1/projects/${project.id}/payment-provider`, { provider: 'manual' });
    const plan = await ok(
      'POST',
      `/v1/projects/${project.id}/plans`,
      { name: 'Monthly', amount: 1000, currency: 'EUR', interval: 'month' },
      201,
    );
    await ok(
      'POST',
      `/v1/projects/${project.id}/coupons`,
      {
        name: 'Welcome',
        amount_off: 300,
        currency: 'EUR',
        duration: 'once',
        promotion_codes: [{ code: 'WELCOME', first_time_transaction: true }],
      },
      201,
    );
    const payFor = (subscriberId: string, code?: string) =>
      call('POST', `/v1/projects/${project.id}/payments`, {
        subscriber_id: subscriberId,
        plan_id: plan.id,
        status: 'succeeded',
        ...(code ? { promotion_code: code } : {}),
      });
    const returning = await ok('POST', `/v1/projects/${project.id}/subscribers`, { email: 'back@example.com' }, 201);
    expect((await payFor(returning.id)).status).toBe(201);
    const refused = await payFor(returning.id, 'WELCOME');
    expect(refused.status).toBe(422);
    expect(refused.json.detail).toBe('The code WELCOME is for first-time buyers only.');
    const fresh = await ok('POST', `/v1/projects/${project.id}/subscribers`, { email: 'new@example.com' }, 201);
    const accepted = await payFor(fresh.id, 'WELCOME');
    expect(accepted.status, accepted.text).toBe(201);
    expect(accepted.json).toMatchObject({ amount: 700, discount: { promotion_code: 'WELCOME', amount: 300 } });
  });
});
