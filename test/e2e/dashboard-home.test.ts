/**
 * The business at a glance (DESIGN D21), in Chromium at 375 px and at desktop width: a member signs in,
 * creates a Telegram project, connects its bot against the loopback Telegram fake, links a chat and copies
 * the join link; then a subscription is created and paid over the REST API with a token, and the home
 * page's figures change (active count, revenue, the charts' data), as do the project page's. Both pages
 * have no serious or critical axe-core violation and no sideways scrolling. Screenshots go to
 * `test-results/dashboard/`.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { DEMO_OWNER } from '../../shared/local/service.js';
import { expectAccessible, screenshot } from '../support/browser.js';
import { telegramDashboardFixture } from '../support/dashboard.js';

const PHONE = { width: 375, height: 812 };
const DESKTOP = { width: 1280, height: 900 };
const BOT = { id: 7_100_300, username: 'figures_club_bot' };

const { api, dashboard, signInWithLink, service, telegram } = telegramDashboardFixture();

/** The page passes axe (0 serious or critical) and does not scroll sideways at its width. */
async function expectReadable(page: Page): Promise<void> {
  await expectAccessible(page);
  const widths = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
  }));
  expect(widths.scroll, `no sideways scrolling on ${page.url()}`).toBeLessThanOrEqual(widths.client);
}

/** The number in a figure tile (`#<prefix>-active dd`). */
const figure = async (page: Page, id: string) => Number(await page.locator(`#${id} dd`).textContent());

describe('the business at a glance in Chromium', () => {
  it('shows the figures of the home and project pages change after a subscription is created and paid over the API', async () => {
    const page = await signInWithLink(DEMO_OWNER.email, PHONE);
    await page
      .context()
      .grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(dashboard()).origin });
    const botToken = `${BOT.id}:${randomBytes(24).toString('base64url')}`;
    telegram().addBot(botToken, BOT);

    // The home page before: its figures, needs attention, the chart of active subscriptions.
    await page.goto(dashboard());
    await page.locator('#team-figures').waitFor();
    const activeBefore = await figure(page, 'team-active');
    await expectReadable(page);

    // A project with its bot and a linked chat; the join link copied.
    await page.goto(dashboard('/projects/new'));
    const name = `Figures ${randomBytes(3).toString('hex')}`;
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Platform').selectOption('telegram');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.waitForURL(/\/dashboard\/projects\/[0-9a-f-]{36}\/settings\?created=1$/);
    const projectId = /projects\/([0-9a-f-]{36})/.exec(page.url())![1];
    await page.getByLabel('Bot token').fill(botToken);
    await page.getByRole('button', { name: 'Connect the bot' }).click();
    await page.getByText('is connected').waitFor();
    await page.getByLabel('Kind').selectOption('group');
    await page.getByLabel('Platform resource id').fill('-1001234567891');
    await page.getByRole('button', { name: 'Link resource' }).click();
    await page.getByText('The group is linked.').waitFor();
    const copy = page.getByRole('button', { name: 'Copy join link' });
    await copy.click();
    await expect.poll(() => copy.textContent()).toBe('Copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${service().baseUrl}/join/${projectId}`);

    // Over the REST API with a token: a plan, a subscriber, a subscription, its payment.
    const minted = await api('POST', '/v1/tokens', {
      name: 'Figures test',
      abilities: [
        'project:update',
        'project-subscription-plan:create',
        'project-user:update',
        'project-subscription:create',
        'project-subscription:update',
      ],
      project_ids: [projectId],
    });
    expect(minted.status).toBe(201);
    const token = minted.body.token as string;
    expect((await api('PUT', `/v1/projects/${projectId}/payment-provider`, { provider: 'manual' }, token)).status).toBe(
      200,
    );
    const plan = await api(
      'POST',
      `/v1/projects/${projectId}/plans`,
      { name: 'Monthly', amount: 1_250, currency: 'EUR', interval: 'month' },
      token,
    );
    const subscriber = await api('POST', `/v1/projects/${projectId}/subscribers`, { display_name: 'Ada' }, token);
    const subscription = await api(
      'POST',
      `/v1/projects/${projectId}/subscriptions`,
      { subscriber_id: subscriber.body.id, plan_id: plan.body.id },
      token,
    );
    expect(subscription.status, JSON.stringify(subscription.body)).toBe(201);
    const payment = await api(
      'POST',
      `/v1/projects/${projectId}/payments`,
      { subscription_id: subscription.body.id, status: 'succeeded' },
      token,
    );
    expect(payment.status, JSON.stringify(payment.body)).toBe(201);

    // The home page after: one more active subscription, the revenue in euros, a revenue bar for today.
    await page.goto(dashboard());
    expect(await figure(page, 'team-active')).toBe(activeBefore + 1);
    expect(await page.locator('#team-money').textContent()).toContain('€12.50');
    expect(await page.locator('#team-chart-revenue-eur rect.chart-bar').count()).toBeGreaterThanOrEqual(1);
    expect(await page.locator('#team-chart-active desc').textContent()).toContain(`${activeBefore + 1} on the last`);
    await expectReadable(page);
    await screenshot(page, 'home-figures-375');

    // The project page: its own figures and charts.
    await page.goto(dashboard(`/projects/${projectId}`));
    expect(await figure(page, 'project-active')).toBe(1);
    expect(await page.locator('#project-money').textContent()).toContain('€12.50');
    expect(await page.locator('#project-chart-revenue-eur rect.chart-bar').count()).toBe(1);
    await expectReadable(page);
    await screenshot(page, 'project-figures-375');

    // At desktop width the charts sit side by side and nothing scrolls sideways either.
    await page.setViewportSize(DESKTOP);
    await page.goto(dashboard());
    await expectReadable(page);
    await screenshot(page, 'home-figures-1280');
  });
});
