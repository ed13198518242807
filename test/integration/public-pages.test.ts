/**
 * The public pages' handler (DESIGN D26, D27) against DynamoDB Local, without a browser: the join page
 * lists only the project's active plans (paid plans without a synced provider price as unavailable, no
 * button); an unknown project and another team's project answer the same 404; a free plan and a code
 * create the subscription and lead to a welcome page whose link is not guessable (a forged one grants
 * nothing); a form without its CSRF token is refused (403); the per-IP rate limit answers 429; every answer
 * carries the strict headers.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { generateAccessCodes } from '../../shared/domain/access-codes/generation.js';
import { GenerateAccessCodesRequest } from '../../shared/domain/access-codes/schema.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { CreatePlanRequest } from '../../shared/domain/plans/schema.js';
import { createProject } from '../../shared/domain/projects/repository.js';
import { listSubscriptions } from '../../shared/domain/subscriptions/queries.js';
import type { ApiGatewayResult } from '../../shared/http/api-gateway.js';
import { RATE_LIMITS } from '../../shared/limits/rate-limit.js';
import { handlePublicRequest } from '../../shared/public-pages/router.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;
let ip: string;

beforeEach(async () => {
  clock = testClock({ secondsIntoMinute: 1 });
  runtime = await createTestRuntime({ clock });
  team = await seedTeam(runtime.store, clock);
  projectId = (await createProject(runtime, team.principal, { name: 'Book <club>', platform_type: 'web', description: 'A monthly reading circle.' })).id;
  ip = `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
});

/** An API Gateway v2 event of the public pages from this test's client IP. */
function pageEvent(method: string, path: string, options: { form?: Record<string, string>; cookies?: string[]; htmx?: boolean; ip?: string } = {}) {
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
    },
    requestContext: { http: { method, path: path.split('?')[0], sourceIp: options.ip ?? ip }, requestId: randomUUID() },
    body: options.form ? new URLSearchParams(options.form).toString() : undefined,
    isBase64Encoded: false,
  } as never;
}

const serve = (method: string, path: string, options?: Parameters<typeof pageEvent>[2]) => handlePublicRequest(runtime, pageEvent(method, path, options));

/** Opens the join page and returns the CSRF cookie and token its forms carry. */
async function openJoinPage(): Promise<{ page: ApiGatewayResult; cookies: string[]; csrf: string }> {
  const page = await serve('GET', `/join/${projectId}`);
  const cookie = page.cookies?.[0] ?? '';
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body ?? '')![1];
  return { page, cookies: [cookie.split(';')[0]], csrf };
}

const plan = (input: Record<string, unknown>) => createPlan(runtime, team.principal, projectId, CreatePlanRequest.parse(input));

describe('the join page', () => {
  it('lists the project’s active plans with their price, interval and trial; a paid plan without a synced price has no button', async () => {
    const free = await plan({ name: 'Free readers', amount: 0, currency: 'EUR', interval: 'month' });
    const paid = await plan({ name: 'Monthly reader', amount: 900, currency: 'EUR', interval: 'month', trial_days: 7 });
    await plan({ name: 'Closed plan', amount: 500, currency: 'EUR', interval: 'month', status: 'inactive' });
    const other = await createProject(runtime, team.principal, { name: 'Other', platform_type: 'web' });
    await createPlan(runtime, team.principal, other.id, CreatePlanRequest.parse({ name: 'Other plan', amount: 100, currency: 'EUR', interval: 'month' }));

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
    const other = await serve('POST', `/join/${randomUUID()}/code`, { form: { csrf_token: 'a' }, cookies: ['join_csrf=a'] });
    expect(other.statusCode).toBe(404);
    expect(foreign.body).toBe(unknown.body);
    expect(other.body).toBe(unknown.body);
    expect(unknown.body).not.toContain('Secret project');

    const { page } = await openJoinPage();
    for (const answer of [page, unknown]) {
      expect(answer.headers?.['Content-Security-Policy']).toMatch(/default-src 'self'.*frame-ancestors 'none'.*form-action 'self'/);
      expect(answer.headers).toMatchObject({ 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer', 'Cache-Control': 'no-store' });
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
      form: { csrf_token: csrf, idempotency_key: randomUUID(), subscription_key: randomUUID(), email: 'fan@example.com' },
    });
    expect(joined.statusCode).toBe(303);
    const location = joined.headers.Location;
    expect(location).toMatch(new RegExp(`^/join/${projectId}/welcome\\?subscription=[0-9a-f-]{36}&t=[A-Za-z0-9_-]{43}$`));
    const subscriptions = await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 });
    expect(subscriptions.data).toHaveLength(1);
    expect(subscriptions.data[0]).toMatchObject({ plan_id: free.id, status: 'active', source: 'free_plan' });
    expect(location).toContain(subscriptions.data[0].id);

    const welcome = await serve('GET', location);
    expect(welcome.statusCode).toBe(200);
    expect(welcome.body).toContain('Active');
    expect(welcome.body).toContain('sign in on Book &lt;club>’s site');
    expect(welcome.body).not.toContain('fan@example.com');
    const activity = await listActivity(runtime.store, team.team.id, { limit: 10 });
    expect(activity.data.filter((entry) => entry.surface === 'portal').map((entry) => entry.operation)).toEqual(expect.arrayContaining(['createSubscriber', 'createSubscription']));
  });

  it('a code is redeemed for a new subscriber with the e-mail', async () => {
    const monthly = await plan({ name: 'Monthly reader', amount: 900, currency: 'EUR', interval: 'month' });
    const generated = await generateAccessCodes(runtime, team.principal, { project_id: projectId, ...GenerateAccessCodesRequest.parse({ plan_id: monthly.id, count: 1, access_days: 30 }) });
    const { cookies, csrf } = await openJoinPage();
    const redeemed = await serve('POST', `/join/${projectId}/code`, {
      cookies,
      form: { csrf_token: csrf, idempotency_key: randomUUID(), code: generated.codes[0].code.toLowerCase(), email: 'coded@example.com' },
    });
    expect(redeemed.statusCode).toBe(303);
    const subscriptions = await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 });
    expect(subscriptions.data).toHaveLength(1);
    expect(subscriptions.data[0]).toMatchObject({ plan_id: monthly.id, status: 'active', source: 'access_code' });

    const again = await serve('POST', `/join/${projectId}/code`, { cookies, form: { csrf_token: csrf, idempotency_key: randomUUID(), code: generated.codes[0].code, email: 'second@example.com' } });
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('role="alert"');
  });

  it('a paid plan cannot be subscribed to for free by posting to it', async () => {
    const paid = await plan({ name: 'Monthly reader', amount: 900, currency: 'EUR', interval: 'month' });
    const { cookies, csrf } = await openJoinPage();
    const answer = await serve('POST', `/join/${projectId}/plans/${paid.id}`, { cookies, form: { csrf_token: csrf, idempotency_key: randomUUID(), email: 'sneaky@example.com' } });
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
      form: { csrf_token: csrf, idempotency_key: randomUUID(), subscription_key: randomUUID(), email: 'fan@example.com' },
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

    const confirming = await serve('GET', `/join/${projectId}/welcome?session_id=cs_test_${randomUUID().replaceAll('-', '')}`);
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
    for (let index = 0; index < limit; index++) expect((await serve('GET', `/join/${randomUUID()}`)).statusCode).toBe(404);
    const refused = await serve('GET', `/join/${projectId}`);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers?.['Retry-After']).toMatch(/^\d+$/);
    expect(refused.headers?.['Content-Security-Policy']).toContain("frame-ancestors 'none'");
    expect((await serve('GET', `/join/${projectId}`, { ip: '203.0.113.9' })).statusCode).toBe(200);
    clock.advance(60_000);
    expect((await serve('GET', `/join/${projectId}`)).statusCode).toBe(200);
  });
});
