/**
 * A creator starts from the dashboard without curl (DESIGN D21, D22, D26), in Chromium at 375 px: signs in,
 * creates a Telegram project, connects its bot against the loopback Telegram fake, links a chat, and finds
 * the join link to share, and runs the access audit from its page (D34); the new pages have no serious or critical
 * axe-core violation. Screenshots go to
 * `test-results/dashboard/`.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DEMO_OWNER } from '../../shared/local/service.js';
import { expectAccessible, screenshot } from '../support/browser.js';
import { telegramDashboardFixture, until } from '../support/dashboard.js';

const PHONE = { width: 375, height: 812 };
const BOT = { id: 7_100_200, username: 'readers_club_bot' };

const { api, dashboard, signInWithLink, service, telegram } = telegramDashboardFixture();

describe('projects from the dashboard in Chromium at 375 px', () => {
  it('creates a Telegram project, connects its bot, links a chat and shows the join link; a refused token is shown on the form without the token', async () => {
    const page = await signInWithLink(DEMO_OWNER.email, PHONE);
    const token = `${BOT.id}:${randomBytes(24).toString('base64url')}`;
    telegram().addBot(token, BOT);

    await page.goto(dashboard('/projects'));
    await page.getByRole('link', { name: 'New project' }).click();
    await page.waitForURL(/\/dashboard\/projects\/new$/);
    await expectAccessible(page);
    await screenshot(page, 'project-new-375');
    const name = `Readers ${randomBytes(3).toString('hex')}`;
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Platform').selectOption('telegram');
    await page.getByLabel('Description (optional)').fill('A book club');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.waitForURL(/\/dashboard\/projects\/[0-9a-f-]{36}\/settings\?created=1$/);
    const projectId = /projects\/([0-9a-f-]{36})/.exec(page.url())![1];
    expect(await page.getByRole('status').textContent()).toContain('The project is created.');
    expect(await page.getByRole('textbox', { name: 'Join link' }).inputValue()).toBe(
      `${service().baseUrl}/join/${projectId}`,
    );
    expect(await page.getByRole('textbox', { name: 'Webhook URL' }).inputValue()).toBe(
      `${service().baseUrl}/hooks/stripe/${projectId}`,
    );
    // The whole join link shows at 375 px: its field wraps instead of cutting it off.
    expect(
      await page
        .getByRole('textbox', { name: 'Join link' })
        .evaluate((field) => field.scrollWidth <= field.clientWidth && field.scrollHeight <= field.clientHeight),
    ).toBe(true);
    await expectAccessible(page);
    await screenshot(page, 'project-settings-375');
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth),
      'no sideways scrolling at 375 px',
    ).toBeLessThanOrEqual(PHONE.width);

    // A token Telegram does not know: the problem on the form, the field empty again.
    const unknown = `4242:${randomBytes(24).toString('base64url')}`;
    await page.getByLabel('Bot token').fill(unknown);
    await page.getByRole('button', { name: 'Connect the bot' }).click();
    await page.locator('.problem').waitFor();
    expect(await page.getByLabel('Bot token').inputValue()).toBe('');
    expect(await page.content()).not.toContain(unknown);

    await page.getByLabel('Bot token').fill(token);
    await page.getByRole('button', { name: 'Connect the bot' }).click();
    await page.getByText('is connected').waitFor();
    expect(await page.locator('#project-bot').textContent()).toContain(`@${BOT.username}`);
    expect(
      telegram()
        .callsOf('setWebhook')
        .some((call) => call.token === token),
    ).toBe(true);

    await page.getByLabel('Kind').selectOption('group');
    await page.getByLabel('Platform resource id').fill('-1001234567890');
    await page.getByLabel('Name (optional)').fill('Readers chat');
    await page.getByRole('button', { name: 'Link resource' }).click();
    await page.getByText('The group is linked.').waitFor();
    expect(await page.locator('#project-resources').textContent()).toContain('-1001234567890');
    expect(await page.getByRole('textbox', { name: 'Join link' }).inputValue()).toBe(
      `${service().baseUrl}/join/${projectId}`,
    );
    await expectAccessible(page);
    await screenshot(page, 'project-connected-375');
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth),
      'no sideways scrolling at 375 px',
    ).toBeLessThanOrEqual(PHONE.width);

    const project = (await api('GET', `/v1/projects/${projectId}`)).body;
    expect(project).toMatchObject({
      name,
      description: 'A book club',
      bot: { username: BOT.username },
      resources: [{ kind: 'group', platform_resource_id: '-1001234567890', name: 'Readers chat' }],
    });

    // The delete confirmation page.
    await page.getByRole('link', { name: 'Delete project…' }).click();
    await page.waitForURL(/\/delete$/);
    await expectAccessible(page);
    await page.getByRole('button', { name: `Delete project ${name}` }).click();
    await page.waitForURL(/\/dashboard\/projects\?deleted=1$/);
    expect((await api('GET', `/v1/projects/${projectId}`)).status).toBe(404);
  });

  it('runs the access audit from its page and shows it, accessible at 375 px', async () => {
    const page = await signInWithLink(DEMO_OWNER.email, PHONE);
    const project = (
      await api('POST', '/v1/projects', { name: `Audited ${randomBytes(3).toString('hex')}`, platform_type: 'web' })
    ).body as { id: string };
    await page.goto(dashboard(`/projects/${project.id}/access-audit`));
    expect(await page.getByText('This project has not been audited yet.').count()).toBe(1);
    await page.getByRole('button', { name: 'Run audit now' }).click();
    expect(await page.getByRole('status').textContent()).toContain('The audit started');
    await until('the audit to finish', async () => {
      await page.goto(dashboard(`/projects/${project.id}/access-audit`));
      return (await page.getByText('succeeded', { exact: true }).count()) > 0;
    });
    expect(await page.getByText('No findings: payments, subscriptions and the platform agree.').count()).toBe(1);
    await expectAccessible(page);
    await screenshot(page, 'project-access-audit-375');
    expect(
      await page.evaluate(() => document.documentElement.scrollWidth),
      'no sideways scrolling at 375 px',
    ).toBeLessThanOrEqual(PHONE.width);
  });
});
