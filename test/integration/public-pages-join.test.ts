/**
 * The public pages' handler (DESIGN D26, D27) against DynamoDB Local, without a browser: the join page lists only the
 * project's active plans (paid plans without a synced provider price as unavailable, no button); an unknown project and
 * another team's project answer the same 404; a free plan (once the e-mailed link confirms the address) and a code
 * create the subscription and lead to a welcome page whose link is not guessable (a forged one grants nothing); a paid
 * plan of a Stripe-connected project leads (303) to Stripe Checkout (the loopback fake) and, once the signed events
 * arrived, the welcome page shows the subscription and a portal link; the portal cancels at period end and resumes only
 * the subscriber's own subscriptions; a form without its CSRF token is refused (403); the per-IP rate limit answers
 * 429; every answer carries the strict headers.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateAccessCodes } from '../../shared/domain/access-codes/generation.js';
import { GenerateAccessCodesRequest } from '../../shared/domain/access-codes/schema.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { CreatePlanRequest } from '../../shared/domain/plans/schema.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { listSubscriptions } from '../../shared/domain/subscriptions/queries.js';
import { RATE_LIMITS } from '../../shared/limits/rate-limit.js';
import { seedTeam } from '../support/store.js';
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
  it('a free plan creates the subscriber and a subscription that is active once the e-mailed link confirms the address (surface portal), then shows the welcome page', async () => {
    const free = await plan({ name: 'Free readers', amount: 0, currency: 'EUR', interval: 'month' });
    const { cookies, csrf } = await openJoinPage();
    const { joined, mails, confirmed } = await joinFreePlanByEmail(free.id, 'fan@example.com');
    expect(joined.statusCode).toBe(303);
    const welcomePattern = new RegExp(`^/join/${projectId}/welcome\\?subscription=[0-9a-f-]{36}&t=[A-Za-z0-9_-]{43}$`);
    expect(joined.headers.Location).toMatch(welcomePattern);
    expect(mails.map((mail) => mail.to)).toEqual(['fan@example.com']);
    expect(confirmed.statusCode, confirmed.body).toBe(303);
    const location = confirmed.headers.Location;
    expect(location).toMatch(welcomePattern);
    const subscriptions = await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 });
    expect(subscriptions.data).toHaveLength(1);
    expect(subscriptions.data[0]).toMatchObject({ plan_id: free.id, status: 'active', source: 'free_plan' });
    expect(location).toContain(subscriptions.data[0].id);
    expect(joined.headers.Location).toContain(subscriptions.data[0].id);

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
      expect.arrayContaining(['joinFreePlan', 'confirmFreeJoin']),
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
