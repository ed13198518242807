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
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { generateAccessCodes } from '../../shared/domain/access-codes/generation.js';
import { GenerateAccessCodesRequest } from '../../shared/domain/access-codes/schema.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { CreatePlanRequest } from '../../shared/domain/plans/schema.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { listSubscriptions } from '../../shared/domain/subscriptions/queries.js';
import type { ApiGatewayResult } from '../../shared/http/api-gateway.js';
import { RATE_LIMITS } from '../../shared/limits/rate-limit.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { stripeHook } from '../../shared/hooks/stripe.js';
import { handlePublicRequest } from '../../shared/public-pages/router.js';
import { rest } from '../support/calls.js';
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
let ip: string;

beforeEach(async () => {
  clock = testClock({ secondsIntoMinute: 1 });
  runtime = await createTestRuntime({ clock });
  team = await seedTeam(runtime.store, clock);
  projectId = (
    await createProject(runtime, team.principal, {
      name: 'Book <club>',
      platform_type: 'web',
      description: 'A monthly reading circle.',
    })
  ).id;
  ip = `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
});

/** An API Gateway v2 event of the public pages from this test's client IP. */
function pageEvent(
  method: string,
  path: string,
  options: {
    form?: Record<string, string>;
    cookies?: string[];
    htmx?: boolean;
    ip?: string;
    headers?: Record<string, string>;
  } = {},
) {
  return {
    version: '2.0',
    routeKey: 'ANY /join/{proxy+}',
    rawPath: path.split('?')[0],
    rawQueryString: path.split('?')[1] ?? '',
    cookies: options.cookies,
    headers: {
      host: 'localhost:3000',
      'x-forwarded-proto': 'http',
      ...(options.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...(options.htmx ? { 'hx-request': 'true' } : {}),
      ...options.headers,
    },
    requestContext: { http: { method, path: path.split('?')[0], sourceIp: options.ip ?? ip }, requestId: randomUUID() },
    body: options.form ? new URLSearchParams(options.form).toString() : undefined,
    isBase64Encoded: false,
  } as never;
}

const serve = (method: string, path: string, options?: Parameters<typeof pageEvent>[2]) =>
  handlePublicRequest(runtime, pageEvent(method, path, options));

/** Opens the join page and returns the CSRF cookie and token its forms carry. */
async function openJoinPage(): Promise<{ page: ApiGatewayResult; cookies: string[]; csrf: string }> {
  const page = await serve('GET', `/join/${projectId}`);
  const cookie = page.cookies?.[0] ?? '';
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body ?? '')![1];
  return { page, cookies: [cookie.split(';')[0]], csrf };
}

const plan = (input: Record<string, unknown>) =>
  createPlan(runtime, team.principal, projectId, CreatePlanRequest.parse(input));

describe('the join page', () => {
  it('lists the project’s active plans with their price, interval and trial; a paid plan without a synced price has no button', async () => {
    const free = await plan({ name: 'Free readers', amount: 0, currency: 'EUR', interval: 'month' });
    const paid = await plan({ name: 'Monthly reader', amount: 900, currency: 'EUR', interval: 'month', trial_days: 7 });
    await plan({ name: 'Closed plan', amount: 500, currency: 'EUR', interval: 'month', status: 'inactive' });
    const other = await createProject(runtime, team.principal, { name: 'Other', platform_type: 'web' });
    await createPlan(
      runtime,
      team.principal,
      other.id,
      CreatePlanRequest.parse({ name: 'Other plan', amount: 100, currency: 'EUR', interval: 'month' }),
    );

    const { page } = await openJoinPage();
    expect(page.statusCode).toBe(200);
    const body = page.body ?? '';
    expect(body).toContain('Join Book &lt;club>');
    expect(body).not.toContain('<club>');
    expect(body).toContain('A monthly reading circle.');
    expect(body).toContain('Free readers');
    expect(body).toContain('€9.00 per month');
    expect(body).toContain('7-day free trial');
    expect(body).not.toContain('Closed plan');
    expect(body).not.toContain('Other plan');
    expect(body).toContain(`action="/join/${projectId}/plans/${free.id}"`);
    expect(body).not.toContain(`action="/join/${projectId}/plans/${paid.id}"`);
    expect(body).toContain('Not available for sign-up here yet.');
    expect(body).toContain('Have a code?');
  });

  it('answers the same 404 page for an unknown project and for another team’s project, and strict headers on every page', async () => {
    const stranger = await seedTeam(runtime.store, clock);
    const theirs = await createProject(runtime, stranger.principal, { name: 'Secret project', platform_type: 'web' });
    const unknown = await serve('GET', `/join/${randomUUID()}`);
    const foreign = await serve('GET', `/join/${theirs.id}/welcome?subscription=${randomUUID()}&t=x`);
    expect(unknown.statusCode).toBe(404);
    expect(foreign.statusCode).toBe(404);
    const other = await serve('POST', `/join/${randomUUID()}/code`, {
      form: { csrf_token: 'a' },
      cookies: ['join_csrf=a'],
    });
    expect(other.statusCode).toBe(404);
    expect(foreign.body).toBe(unknown.body);
    expect(other.body).toBe(unknown.body);
    expect(unknown.body).not.toContain('Secret project');

    const { page } = await openJoinPage();
    for (const answer of [page, unknown]) {
      expect(answer.headers?.['Content-Security-Policy']).toMatch(
        /default-src 'self'.*frame-ancestors 'none'.*form-action 'self'/,
      );
      expect(answer.headers).toMatchObject({
        'X-Content-Type-Options': 'nosniff',
        'Referrer-Policy': 'no-referrer',
        'Cache-Control': 'no-store',
      });
    }
    expect(page.cookies?.[0]).toMatch(/^join_csrf=[A-Za-z0-9_-]{43}; Path=\/join; HttpOnly; Secure; SameSite=Strict$/);
  });
});

describe('joining', () => {
  it('a free plan creates the subscriber and an active subscription at once (surface portal) and shows the welcome page', async () => {
    const free = await plan({ name: 'Free readers', amount: 0, currency: 'EUR', interval: 'month' });
    const { cookies, csrf } = await openJoinPage();
    const joined = await serve('POST', `/join/${projectId}/plans/${free.id}`, {
      cookies,
      form: {
        csrf_token: csrf,
        idempotency_key: randomUUID(),
        subscription_key: randomUUID(),
        email: 'fan@example.com',
      },
    });
    expect(joined.statusCode).toBe(303);
    const location = joined.headers.Location;
    expect(location).toMatch(
      new RegExp(`^/join/${projectId}/welcome\\?subscription=[0-9a-f-]{36}&t=[A-Za-z0-9_-]{43}$`),
    );
    const subscriptions = await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 });
    expect(subscriptions.data).toHaveLength(1);
    expect(subscriptions.data[0]).toMatchObject({ plan_id: free.id, status: 'active', source: 'free_plan' });
    expect(location).toContain(subscriptions.data[0].id);

    // The same form posted from another site changes nothing, even with the right token.
    for (const headers of [{ 'sec-fetch-site': 'cross-site' }, { origin: 'https://attacker.example' }] as Record<
      string,
      string
    >[]) {
      const forged = await serve('POST', `/join/${projectId}/plans/${free.id}`, {
        cookies,
        headers,
        form: {
          csrf_token: csrf,
          idempotency_key: randomUUID(),
          subscription_key: randomUUID(),
          email: 'victim@example.com',
        },
      });
      expect(forged.statusCode).toBe(403);
    }
    expect((await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data).toHaveLength(1);

    const welcome = await serve('GET', location);
    expect(welcome.statusCode).toBe(200);
    expect(welcome.body).toContain('Active');
    expect(welcome.body).toContain('sign in on Book &lt;club>’s site');
    expect(welcome.body).not.toContain('fan@example.com');
    const activity = await listActivity(runtime.store, team.team.id, { limit: 10 });
    expect(activity.data.filter((entry) => entry.surface === 'portal').map((entry) => entry.operation)).toEqual(
      expect.arrayContaining(['createSubscriber', 'createSubscription']),
    );
  });

  it('a code is redeemed for a new subscriber with the e-mail', async () => {
    const monthly = await plan({ name: 'Monthly reader', amount: 900, currency: 'EUR', interval: 'month' });
    const generated = await generateAccessCodes(runtime, team.principal, {
      project_id: projectId,
      ...GenerateAccessCodesRequest.parse({ plan_id: monthly.id, count: 1, access_days: 30 }),
    });
    const { cookies, csrf } = await openJoinPage();
    const redeemed = await serve('POST', `/join/${projectId}/code`, {
      cookies,
      form: {
        csrf_token: csrf,
        idempotency_key: randomUUID(),
        code: generated.codes[0].code.toLowerCase(),
        email: 'coded@example.com',
      },
    });
    expect(redeemed.statusCode).toBe(303);
    const subscriptions = await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 });
    expect(subscriptions.data).toHaveLength(1);
    expect(subscriptions.data[0]).toMatchObject({ plan_id: monthly.id, status: 'active', source: 'access_code' });

    const again = await serve('POST', `/join/${projectId}/code`, {
      cookies,
      form: {
        csrf_token: csrf,
        idempotency_key: randomUUID(),
        code: generated.codes[0].code,
        email: 'second@example.com',
      },
    });
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('role="alert"');
  });

  it('a paid plan cannot be subscribed to for free by posting to it', async () => {
    const paid = await plan({ name: 'Monthly reader', amount: 900, currency: 'EUR', interval: 'month' });
    const { cookies, csrf } = await openJoinPage();
    const answer = await serve('POST', `/join/${projectId}/plans/${paid.id}`, {
      cookies,
      form: { csrf_token: csrf, idempotency_key: randomUUID(), email: 'sneaky@example.com' },
    });
    expect(answer.statusCode).toBe(409);
    expect((await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data).toEqual([]);
  });

  it('refuses a form without the CSRF token of its cookie (403) and changes nothing', async () => {
    const free = await plan({ name: 'Free readers', amount: 0, currency: 'EUR', interval: 'month' });
    const { cookies, csrf } = await openJoinPage();
    const form = { idempotency_key: randomUUID(), subscription_key: randomUUID(), email: 'fan@example.com' };
    for (const attempt of [
      { cookies, form },
      { cookies: undefined, form: { ...form, csrf_token: csrf } },
      { cookies, form: { ...form, csrf_token: `${csrf.slice(0, -1)}x` } },
    ]) {
      const answer = await serve('POST', `/join/${projectId}/plans/${free.id}`, attempt);
      expect(answer.statusCode).toBe(403);
      expect(answer.body).toContain('CSRF_TOKEN_INVALID');
    }
    expect((await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data).toEqual([]);
  });
});

describe('the welcome page', () => {
  it('shows nothing for a forged or foreign welcome link, and only "confirming" for an unknown checkout session', async () => {
    const free = await plan({ name: 'Free readers', amount: 0, currency: 'EUR', interval: 'month' });
    const { cookies, csrf } = await openJoinPage();
    const joined = await serve('POST', `/join/${projectId}/plans/${free.id}`, {
      cookies,
      form: {
        csrf_token: csrf,
        idempotency_key: randomUUID(),
        subscription_key: randomUUID(),
        email: 'fan@example.com',
      },
    });
    const real = new URL(joined.headers.Location, 'http://x');
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

describe('rate limit', () => {
  it('answers 429 with Retry-After past the per-IP limit, and other IPs are not affected', async () => {
    const { limit } = RATE_LIMITS['public-pages'];
    for (let index = 0; index < limit; index++)
      expect((await serve('GET', `/join/${randomUUID()}`)).statusCode).toBe(404);
    const refused = await serve('GET', `/join/${projectId}`);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers?.['Retry-After']).toMatch(/^\d+$/);
    expect(refused.headers?.['Content-Security-Policy']).toContain("frame-ancestors 'none'");
    expect((await serve('GET', `/join/${projectId}`, { ip: '203.0.113.9' })).statusCode).toBe(200);
    clock.advance(60_000);
    expect((await serve('GET', `/join/${projectId}`)).statusCode).toBe(200);
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

  /** Connects the project to the fake Stripe and creates a synced monthly plan; returns the plan and the signing secret. */
  async function stripePlan(): Promise<{ planId: string; priceId: string; webhookSecret: string }> {
    runtime.integrations = {
      keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
      telegramApiRoot: 'http://127.0.0.1:9',
      stripeApiBaseUrl: stripe.url,
      retry: { retries: 0, minTimeoutMs: 0 },
    };
    const call = async (method: string, path: string, body: unknown) => {
      const reply = await rest(runtime, {
        method,
        path,
        token: team.token,
        body,
        headers: { 'Idempotency-Key': randomUUID() },
      });
      expect(reply.status, reply.text).toBeLessThan(300);
      return reply.json as Record<string, any>;
    };
    const { webhookSecret } = await connectStripe(stripe, (path, body) => call('PUT', path, body), projectId);
    const plan = await call('POST', `/v1/projects/${projectId}/plans`, {
      name: 'Monthly',
      amount: 900,
      currency: 'EUR',
      interval: 'month',
    });
    expect(plan.sync_status).toBe('synced');
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
    const join = await openJoinPage();
    await serve('POST', `/join/${projectId}/plans/${free.id}`, {
      cookies: join.cookies,
      form: {
        csrf_token: join.csrf,
        idempotency_key: randomUUID(),
        subscription_key: randomUUID(),
        email: 'other@example.com',
      },
    });
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
