/**
 * The subscriber side's state changes run through the one pipeline (DESIGN D20, D27, D35): the portal's sign-in,
 * "Update payment method", sign-out, cancel and resume, and the bot command that answers with a portal link. Each
 * writes one activity entry with surface `portal`, replays with its idempotency key, and keeps working on a team locked
 * for non-payment (the subscriber side is exempt from BILLING_LOCKED), while the creator's own write is refused.
 * Against DynamoDB Local and a loopback fake of the Stripe API.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { caller, runAnyOperation, rest } from '../support/calls.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import type { ActivityEntry } from '../../shared/domain/activity/schema.js';
import {
  createPortalLink,
  PORTAL_LINK_LIFETIME_MS,
  subscriberPrincipal,
} from '../../shared/domain/portal-sessions/links.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { listSubscriptions } from '../../shared/domain/subscriptions/queries.js';
import { membershipCommand } from '../../shared/hooks/membership-command.js';
import { stripeHook } from '../../shared/hooks/stripe.js';
import { handlePublicRequest } from '../../shared/public-pages/router.js';
import { lockTeam } from '../support/billing.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';
import { startFakeStripeApi, type FakeStripeApi } from '../support/stripe-api.js';
import {
  checkoutSession,
  connectStripeWithPlan,
  invoice,
  stripeEventBody,
  stripeId,
  stripeSignature,
} from '../support/stripe.js';

let clock: ManualClock;
let runtime: TestRuntime;
let stripe: FakeStripeApi;

beforeAll(async () => {
  stripe = await startFakeStripeApi();
  clock = testClock({ secondsIntoMinute: 1 });
  runtime = await createTestRuntime({ clock });
  runtime.integrations = {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: 'http://127.0.0.1:9',
    stripeApiBaseUrl: stripe.url,
    publicBaseUrl: 'https://members.example',
    retry: { retries: 0, minTimeoutMs: 0 },
  };
});
afterAll(async () => {
  await stripe.stop();
});

/** A team with a Stripe-connected project and one subscriber whose monthly subscription is active and Stripe-billed. */
async function stripeSubscriber() {
  const team = await seedTeam(runtime.store, clock, undefined, 'free');
  const projectId = (await createProject(runtime, team.principal, { name: 'Readers', platform_type: 'web' })).id;
  const { ok } = caller(() => ({ runtime, token: team.token }));
  const { plan, webhookSecret } = await connectStripeWithPlan(stripe, ok, projectId);
  const deliver = async (type: string, object: unknown) => {
    const created = Math.floor(clock.nowMs() / 1000);
    const { body } = stripeEventBody(type, object, { created });
    const headers = { 'stripe-signature': stripeSignature(body, webhookSecret, created) };
    expect((await stripeHook(runtime, { projectId, headers, body })).status).toBe(200);
  };
  const [subscription, customer] = [stripeId('sub'), stripeId('cus')];
  stripe.addSubscription(subscription, { priceId: plan.provider_price_id, customer });
  await deliver('checkout.session.completed', {
    ...checkoutSession({ customer, email: 'payer@example.com', planId: plan.id, subscription }),
    id: stripeId('cs'),
  });
  await deliver(
    'invoice.paid',
    invoice({ subscription, paymentIntent: stripeId('pi'), amount: 900, billingReason: 'subscription_create' }),
  );
  const [ours] = (await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data;
  return { team, projectId, subscription: ours };
}

/** A GET or POST of the portal with the session's cookie. */
function portal(method: string, path: string, cookies: string[], form?: Record<string, string>) {
  return handlePublicRequest(runtime, {
    version: '2.0',
    routeKey: 'ANY /portal/{proxy+}',
    rawPath: path.split('?')[0],
    rawQueryString: path.split('?')[1] ?? '',
    cookies,
    headers: {
      host: 'localhost:3000',
      'x-forwarded-proto': 'http',
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    requestContext: {
      http: { method, path: path.split('?')[0], sourceIp: `192.0.2.${Math.floor(Math.random() * 250)}` },
      requestId: randomUUID(),
    },
    body: form ? new URLSearchParams(form).toString() : undefined,
    isBase64Encoded: false,
  } as never);
}

/** Signs the subscriber in with a one-time link: the session cookie and the CSRF token of its forms. */
async function signIn(teamId: string, projectId: string, subscriberId: string) {
  const link = await createPortalLink(runtime, teamId, projectId, subscriberId);
  const signedIn = await portal('GET', link.path, []);
  expect(signedIn.statusCode).toBe(303);
  const cookies = [signedIn.cookies![0].split(';')[0]];
  const page = await portal('GET', `/portal/${projectId}`, cookies);
  return { cookies, csrf: /name="csrf_token" value="([^"]+)"/.exec(page.body ?? '')![1] };
}

/** The team's activity entries of `operation`, oldest first. */
async function entriesOf(teamId: string, operation: string): Promise<ActivityEntry[]> {
  return (await listActivity(runtime.store, teamId, { limit: 100, operation })).data.reverse();
}

describe('the portal', () => {
  it('"Update payment method" is openBillingPortal: one entry, a replay opens no second session, works while locked', async () => {
    const { team, projectId, subscription } = await stripeSubscriber();
    const { cookies, csrf } = await signIn(team.team.id, projectId, subscription.subscriber_id);
    const path = `/portal/${projectId}/subscriptions/${subscription.id}/payment-method`;
    const key = randomUUID();
    const before = stripe.billingPortalSessions.length;

    const first = await portal('POST', path, cookies, { csrf_token: csrf, idempotency_key: key });
    expect(first.statusCode, first.body).toBe(303);
    expect(await entriesOf(team.team.id, 'openBillingPortal')).toMatchObject([
      { surface: 'portal', outcome: 'ok', token_id: null, member_id: null },
    ]);
    const replay = await portal('POST', path, cookies, { csrf_token: csrf, idempotency_key: key });
    expect(replay.headers.Location).toBe(first.headers.Location);
    expect(stripe.billingPortalSessions.length).toBe(before + 1);

    await lockTeam(runtime, team.team.id);
    const locked = await portal('POST', path, cookies, { csrf_token: csrf, idempotency_key: randomUUID() });
    expect(locked.statusCode, locked.body).toBe(303);
    expect(stripe.billingPortalSessions.length).toBe(before + 2);
    expect((await entriesOf(team.team.id, 'openBillingPortal')).map((entry) => entry.surface)).toEqual([
      'portal',
      'portal',
      'portal',
    ]);
  });

  it('cancel and resume are the subscriber side: they keep working on a locked team, where the creator’s cancel is BILLING_LOCKED', async () => {
    const { team, projectId, subscription } = await stripeSubscriber();
    const { cookies, csrf } = await signIn(team.team.id, projectId, subscription.subscriber_id);
    await lockTeam(runtime, team.team.id);
    const creator = await rest(runtime, {
      method: 'POST',
      path: `/v1/subscriptions/${subscription.id}/cancel`,
      token: team.token,
      body: { at_period_end: true },
      headers: { 'Idempotency-Key': randomUUID() },
    });
    expect(creator.status, creator.text).toBe(402);
    expect(creator.json.code).toBe('BILLING_LOCKED');

    const key = randomUUID();
    const base = `/portal/${projectId}/subscriptions/${subscription.id}`;
    expect(
      (await portal('POST', `${base}/cancel`, cookies, { csrf_token: csrf, idempotency_key: key })).statusCode,
    ).toBe(303);
    // The same key again replays the first answer (no second transition, so no CONFLICT).
    expect(
      (await portal('POST', `${base}/cancel`, cookies, { csrf_token: csrf, idempotency_key: key })).statusCode,
    ).toBe(303);
    expect(
      (await portal('POST', `${base}/resume`, cookies, { csrf_token: csrf, idempotency_key: randomUUID() })).statusCode,
    ).toBe(303);
    const portalEntries = (await listActivity(runtime.store, team.team.id, { limit: 100 })).data.filter(
      (entry) =>
        entry.surface === 'portal' &&
        !['listSubscriptions', 'listPayments', 'signInToPortal'].includes(entry.operation),
    );
    expect(portalEntries.map((entry) => [entry.operation, entry.outcome]).reverse()).toEqual([
      ['cancelSubscription', 'ok'],
      ['cancelSubscription', 'ok'],
      ['resumeSubscription', 'ok'],
    ]);
  });

  it('sign-out is signOutOfPortal: one entry, replays with its key, works while locked', async () => {
    const { team, projectId, subscription } = await stripeSubscriber();
    await lockTeam(runtime, team.team.id);
    const { cookies, csrf } = await signIn(team.team.id, projectId, subscription.subscriber_id);
    const key = randomUUID();
    const out = await portal('POST', `/portal/${projectId}/sign-out`, cookies, {
      csrf_token: csrf,
      idempotency_key: key,
    });
    expect(out.statusCode).toBe(200);
    expect(out.cookies?.[0]).toContain('Max-Age=0');
    expect((await portal('GET', `/portal/${projectId}`, cookies)).statusCode).toBe(401);
    expect(await entriesOf(team.team.id, 'signOutOfPortal')).toMatchObject([{ surface: 'portal', outcome: 'ok' }]);

    const principal = subscriberPrincipal({
      team_id: team.team.id,
      project_id: projectId,
      subscriber_id: subscription.subscriber_id,
    });
    const again = await runAnyOperation(
      runtime,
      principal,
      'signOutOfPortal',
      { session_cookie: cookies[0].split('=')[1] },
      {
        requestId: randomUUID(),
        idempotencyKey: key,
        surface: 'portal',
      },
    );
    expect(again).toMatchObject({ ok: true, replayed: true, result: { signed_out: true } });
  });

  it('sign-in with a link is signInToPortal: one entry, an expired link refused in the team’s log, a used or unknown one in none; works while locked', async () => {
    const { team, projectId, subscription } = await stripeSubscriber();
    await lockTeam(runtime, team.team.id);
    const link = await createPortalLink(runtime, team.team.id, projectId, subscription.subscriber_id);
    expect((await portal('GET', link.path, [])).statusCode).toBe(303);
    expect((await portal('GET', link.path, [])).statusCode).toBe(404);
    expect((await portal('GET', `/portal/${projectId}/sign-in?token=ppl_${'a'.repeat(43)}`, [])).statusCode).toBe(404);
    const late = await createPortalLink(runtime, team.team.id, projectId, subscription.subscriber_id);
    clock.advance(PORTAL_LINK_LIFETIME_MS + 1);
    expect((await portal('GET', late.path, [])).statusCode).toBe(404);
    expect((await entriesOf(team.team.id, 'signInToPortal')).map(({ surface, outcome }) => [surface, outcome])).toEqual(
      [
        ['portal', 'ok'],
        ['portal', 'NOT_FOUND'],
      ],
    );
  });

  it('a subscriber principal may call only the portal’s operations', async () => {
    const { team, projectId, subscription } = await stripeSubscriber();
    const principal = subscriberPrincipal({
      team_id: team.team.id,
      project_id: projectId,
      subscriber_id: subscription.subscriber_id,
    });
    const refused = await runAnyOperation(
      runtime,
      principal,
      'answerMembershipCommand',
      {
        project_id: projectId,
        platform_user_id: '42',
      },
      { requestId: randomUUID(), idempotencyKey: randomUUID(), surface: 'portal' },
    );
    expect(refused).toMatchObject({ ok: false, problem: { code: 'TOKEN_MISSING_ABILITY' } });
  });
});

describe('the bot command (Telegram /account, Discord /membership)', () => {
  it('is one operation: an entry per command, the same update replays the same link, works while locked', async () => {
    const team = await seedTeam(runtime.store, clock, undefined, 'free');
    const projectId = (await createProject(runtime, team.principal, { name: 'Chat', platform_type: 'web' })).id;
    const subscriber = await rest(runtime, {
      method: 'POST',
      path: `/v1/projects/${projectId}/subscribers`,
      token: team.token,
      body: { display_name: 'Ada', platform_user_id: '4242' },
      headers: { 'Idempotency-Key': randomUUID() },
    });
    expect(subscriber.status, subscriber.text).toBe(201);
    await lockTeam(runtime, team.team.id);
    const command = (source: 'telegram' | 'discord', eventId: string | null, platformUserId = '4242') =>
      membershipCommand(runtime, { source, teamId: team.team.id, projectId, platformUserId, eventId });

    const first = await command('telegram', '1001');
    expect(first).toMatchObject({
      found: true,
      url: expect.stringContaining(`/portal/${projectId}/sign-in?token=ppl_`),
    });
    expect(await command('telegram', '1001')).toEqual(first);
    const fromDiscord = await command('discord', 'interaction-1');
    expect(fromDiscord.found).toBe(true);
    expect(fromDiscord.url).not.toBe(first.url);
    expect(await command('discord', null, '999')).toEqual({ found: false, status: null, url: null, expires_at: null });
    const entries = await entriesOf(team.team.id, 'answerMembershipCommand');
    expect(entries.map((entry) => [entry.surface, entry.outcome])).toEqual([
      ['portal', 'ok'],
      ['portal', 'ok'],
      ['portal', 'ok'],
      ['portal', 'ok'],
    ]);
  });
});
