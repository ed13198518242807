/**
 * A promotion code on the join page in a real browser at 375 px (DESIGN D33): a creator's 50 %-off-the-first-month
 * coupon with code LAUNCH50 (created at the Stripe fake first); a fan opens `/join/{project}?code=LAUNCH50`, sees the
 * discounted price, joins, and the Checkout Session the fake recorded carries the code as its discount; paying it makes
 * an active subscription that carries the discount, a payment of half the price and half the MRR. An unknown code says
 * so and leaves the price alone. axe-core finds no serious or critical violation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { LocalService } from '../../shared/local/service.js';
import { expectAccessible, launchChromium, screenshot } from '../support/browser.js';
import { startTestService } from '../support/local-service.js';
import { restApi } from '../support/rest-client.js';
import { connectStripe } from '../support/stripe.js';
import { startFakeStripeApi, type FakeStripeApi } from '../support/stripe-api.js';

let service: LocalService;
let browser: Browser;
let stripe: FakeStripeApi;

beforeAll(async () => {
  stripe = await startFakeStripeApi();
  service = await startTestService({ integrations: { stripeApiBaseUrl: stripe.url } });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  await stripe?.stop();
});

/** REST with the demo token; asserts a 2xx and returns the JSON body. */
const api = restApi(() => service);

describe('a promotion code on the join page in Chromium at 375 px', () => {
  it('shows the discounted price, carries the code into Stripe Checkout, and the subscription pays half', async () => {
    const project = await api('POST', '/v1/projects', { name: 'Launch club', platform_type: 'telegram' });
    const { webhookSecret } = await connectStripe(stripe, (path, body) => api('PUT', path, body), project.id);
    stripe.deliverEventsTo(`${service.baseUrl}/hooks/stripe/${project.id}`, webhookSecret);
    const plan = await api('POST', `/v1/projects/${project.id}/plans`, {
      name: 'Monthly',
      amount: 900,
      currency: 'EUR',
      interval: 'month',
    });
    if (plan.sync_status !== 'synced') await api('POST', `/v1/plans/${plan.id}/sync`, {});
    const coupon = await api('POST', `/v1/projects/${project.id}/coupons`, {
      name: 'Launch',
      percent_off: 50,
      duration: 'once',
      promotion_codes: [{ code: 'LAUNCH50' }],
    });
    const base = service.dashboardUrl.replace(/\/dashboard$/, '');
    const context = await browser.newContext({ viewport: { width: 375, height: 812 }, bypassCSP: true });
    const page = await context.newPage();

    await page.goto(`${base}/join/${project.id}?code=NOSUCH`);
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toBe('There is no discount code NOSUCH; if it is an access code, redeem it below.');
    expect(await page.locator('s').count()).toBe(0);

    await page.goto(`${base}/join/${project.id}?code=launch50`);
    await expect
      .poll(() => page.getByRole('status').textContent())
      .toBe('Code LAUNCH50 applied: 50% off the first payment.');
    expect(await page.locator('s').first().textContent()).toBe('€9.00 per month');
    expect(await page.getByText('€4.50 the first month, then €9.00 per month').count()).toBe(1);
    await expectAccessible(page);
    await screenshot(page, 'join-code-375');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);

    await page.getByRole('button', { name: 'Join Monthly' }).click();
    await page.waitForURL(new RegExp(`^${stripe.url}/checkout/`));
    const [session] = [...stripe.checkoutSessions.values()].filter(
      (entry) => entry.metadata?.project_id === project.id,
    );
    expect(session.discounts).toEqual([{ promotion_code: coupon.promotion_codes[0].provider_promotion_code_id }]);
    await page.getByLabel('Email').fill('early.bird@example.com');
    await page.getByRole('button', { name: 'Pay' }).click();
    await page.waitForURL(new RegExp(`/join/${project.id}/welcome\\?session_id=`));
    await expect.poll(() => page.locator('#welcome-status .badge').textContent(), { timeout: 30_000 }).toBe('Active');

    const [subscription] = (await api('GET', `/v1/projects/${project.id}/subscriptions`)).data;
    expect(subscription.discount).toMatchObject({ coupon_id: coupon.id, promotion_code: 'LAUNCH50', duration: 'once' });
    const [payment] = (await api('GET', `/v1/projects/${project.id}/payments`)).data;
    expect(payment).toMatchObject({ amount: 450, discount: { amount: 450 } });
    expect((await api('GET', `/v1/projects/${project.id}/metrics`)).mrr).toEqual([{ currency: 'EUR', amount: 450 }]);
    await context.close();
  });
});
