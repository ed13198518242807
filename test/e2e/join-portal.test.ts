/**
 * A fan joins and manages their membership in a real browser at 375 px (DESIGN D26, D27): the join page of a Telegram
 * project connected to Stripe, "Join" → the (fake) Stripe Checkout → "Pay", which delivers the signed
 * `checkout.session.completed` and `invoice.paid` to the service's hook → the welcome page, which polls until the
 * subscription is `active` and shows the personal Telegram invite link and "Manage your membership" → the portal →
 * "Cancel at period end", which reaches Stripe (`cancel_at_period_end` on the subscription). axe-core finds no serious
 * or critical violation on the join, welcome and portal pages. A webhook endpoint subscribed to every event gets
 * subscription.created, payment.succeeded, subscription.activated, member.access_granted and
 * subscription.cancellation_scheduled, each once. The signed-out portal's "E-mail me a sign-in link" and the
 * unsubscribe page (D32) pass axe at 375 px too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { WEBHOOK_EVENT_NAMES } from '../../shared/catalogues/webhook-events.js';
import { createUnsubscribeLink } from '../../shared/domain/messages/unsubscribe.js';
import type { LocalService } from '../../shared/local/service.js';
import { expectAccessible, launchChromium, screenshot } from '../support/browser.js';
import { until } from '../support/dashboard.js';
import { startRecordingReceiver, type RecordingReceiver } from '../support/https-receiver.js';
import { startTestService } from '../support/local-service.js';
import { restApi } from '../support/rest-client.js';
import { telegramProjectOnStripe } from '../support/fixtures/telegram-stripe-project.js';
import { startFakeStripeApi, type FakeStripeApi } from '../support/stripe-api.js';
import { startFakeBotApi, type FakeBotApi } from '../support/telegram-bot-api.js';

const BOT = { id: 700300, username: 'join_bot' };
const CHAT_ID = -1007000000300;

let service: LocalService;
let browser: Browser;
let receiver: RecordingReceiver;
let stripe: FakeStripeApi;
let telegram: FakeBotApi;

beforeAll(async () => {
  receiver = await startRecordingReceiver();
  stripe = await startFakeStripeApi();
  telegram = await startFakeBotApi();
  service = await startTestService({
    extraCaPem: [receiver.caPem],
    allowPrivateTargets: true,
    integrations: { telegramApiRoot: telegram.url, stripeApiBaseUrl: stripe.url },
  });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  await receiver?.close();
  await stripe?.stop();
  await telegram?.stop();
});

/** REST with the demo token; asserts a 2xx and returns the JSON body. */
const api = restApi(() => service);

/** A Telegram project whose bot administers a linked group, connected to Stripe, with a synced monthly plan. */
const telegramProject = () => telegramProjectOnStripe({ service, api, telegram, stripe, bot: BOT, chatId: CHAT_ID });

describe('join page, Stripe Checkout, welcome page and portal in Chromium at 375 px', () => {
  it('a fan pays for a plan, gets the invite link, opens the portal and cancels at period end', async () => {
    const { projectId } = await telegramProject();
    await api('POST', '/v1/webhook-endpoints', { name: 'everything', url: receiver.url, events: WEBHOOK_EVENT_NAMES });
    const base = service.dashboardUrl.replace(/\/dashboard$/, '');
    const context = await browser.newContext({ viewport: { width: 375, height: 812 }, bypassCSP: true });
    const page = await context.newPage();

    await page.goto(`${base}/join/${projectId}`);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Join Night readers');
    await expectAccessible(page);
    await screenshot(page, 'join-375');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);

    await page.getByRole('button', { name: 'Join Monthly' }).click();
    await page.waitForURL(new RegExp(`^${stripe.url}/checkout/`));
    const [session] = [...stripe.checkoutSessions.values()];
    expect(session).toMatchObject({ mode: 'subscription', metadata: { project_id: projectId } });
    await page.getByLabel('Email').fill('night.owl@example.com');
    await page.getByRole('button', { name: 'Pay' }).click();

    await page.waitForURL(new RegExp(`/join/${projectId}/welcome\\?session_id=`));
    await expect.poll(() => page.locator('#welcome-status .badge').textContent(), { timeout: 30_000 }).toBe('Active');
    const invite = page.getByRole('link', { name: /Join Night readers on Telegram/ });
    await expect.poll(() => invite.getAttribute('href'), { timeout: 30_000 }).toMatch(/^https:\/\/t\.me\/\+fakeInvite/);
    await expectAccessible(page);
    await screenshot(page, 'welcome-375');

    await page.getByRole('link', { name: 'Manage your membership' }).click();
    await page.waitForURL(`${base}/portal/${projectId}`);
    await expectAccessible(page);
    await screenshot(page, 'portal-375');
    await page.getByRole('button', { name: 'Cancel at period end' }).click();
    await page.waitForURL(`${base}/portal/${projectId}`);
    await expect.poll(() => page.locator('.badge').first().textContent()).toBe('Cancels at period end');
    const [subscriptionId] = [...stripe.subscriptions.keys()];
    expect(
      stripe
        .requestsTo('POST', `/v1/subscriptions/${subscriptionId}`)
        .map((request) => request.params.cancel_at_period_end),
    ).toEqual(['true']);
    await expectAccessible(page);

    const wanted = [
      'subscription.created',
      'payment.succeeded',
      'subscription.activated',
      'member.access_granted',
      'subscription.cancellation_scheduled',
    ];
    await until('the events of the join and the cancellation', async () =>
      wanted.every((type) => receiver.types().has(type)),
    );
    await service.runtime.idle();
    const mine = receiver.deliveries
      .filter((delivery) => delivery.envelope.project_id === projectId)
      .map((delivery) => delivery.envelope.type);
    for (const type of wanted)
      expect(
        mine.filter((received) => received === type),
        type,
      ).toHaveLength(1);
    await context.close();
  });

  it('"E-mail me a sign-in link" on the signed-out portal and the unsubscribe page are accessible and work', async () => {
    const project = await api('POST', '/v1/projects', { name: 'Quiet readers', platform_type: 'web' });
    const subscriber = await api('POST', `/v1/projects/${project.id}/subscribers`, { email: 'quiet@example.com' });
    const team = await api('GET', '/v1/teams/current');
    const unsubscribeUrl = await createUnsubscribeLink(service.runtime, team.id, project.id, subscriber.id);
    const base = service.dashboardUrl.replace(/\/dashboard$/, '');
    const context = await browser.newContext({ viewport: { width: 375, height: 812 }, bypassCSP: true });
    const page = await context.newPage();

    await page.goto(`${base}/portal/${project.id}`);
    await expectAccessible(page);
    await page.getByLabel('Your e-mail address').fill('quiet@example.com');
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Check your inbox');
    await expectAccessible(page);

    await page.goto(`${base}${new URL(unsubscribeUrl, base).pathname}${new URL(unsubscribeUrl, base).search}`);
    await expectAccessible(page);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    await page.getByRole('button', { name: 'Unsubscribe' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('You are unsubscribed');
    await expectAccessible(page);
    await context.close();
  });
});
