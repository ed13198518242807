/**
 * The dashboard's membership screens in a real browser (DESIGN D19–D21): roles with chosen abilities assigned to a
 * member (and the CONFLICT of deleting a role still held), groups, plans priced in the currency's major unit, a
 * subscriber's subscription granted, paused, resumed and cancelled, its plan changed (and a refused change), suspended
 * and unsuspended, the subscriber banned, unbanned and kicked, billing with tier and invoices, the token list's "last
 * used", and the projects, tokens, deliveries and subscriptions tables at 375 px. Each test signs in its own member
 * session; screenshots go to `test-results/dashboard/`.
 */

import { describe, expect, it } from 'vitest';
import { recordPlatformMembership } from '../../shared/domain/members/platform-updates.js';
import { DEMO_OWNER } from '../../shared/local/service.js';
import { expectAccessible, screenshot } from '../support/browser.js';
import {
  api,
  dashboard,
  newProject,
  rowText,
  service,
  signInWithLink,
  unique,
  useDashboardMembershipFixture,
} from '../support/fixtures/dashboard-membership.js';

useDashboardMembershipFixture();

describe('dashboard membership screens in Chromium', () => {
  it('billing: shows the tier, the status and the invoices', async () => {
    const page = await signInWithLink(DEMO_OWNER.email);
    await page.goto(dashboard('/billing'));
    expect(await page.locator('#billing-tier').textContent()).toBe('business');
    const invoices = (await api('GET', '/v1/billing/invoices')).body.data as Array<{ number: string }>;
    expect(invoices.length).toBeGreaterThan(0);
    // The demo team's first invoice is open and no payment failed: in good standing, the invoice named.
    expect(await page.locator('#lock-state').textContent()).toContain(
      `No payment has failed. Open: ${invoices[0].number} (99.00 USD)`,
    );
    expect(await rowText(page, invoices[0].number)).toContain('99.00 USD');
    expect(await page.getByRole('button', { name: 'Change tier' }).isEnabled()).toBe(true);
    await expectAccessible(page);
    await screenshot(page, 'billing');
    await page.context().close();
  });

  it('tokens: the list shows "never" for an unused token and when it was last used after a call', async () => {
    const name = unique('probe');
    const token = await api('POST', '/v1/tokens', { name, abilities: ['team:view'] });
    expect(token.status).toBe(201);
    const page = await signInWithLink(DEMO_OWNER.email);
    await page.goto(dashboard('/tokens'));
    const lastUsed = () =>
      page
        .getByRole('row', { name: new RegExp(name) })
        .locator('td')
        .nth(5)
        .textContent();
    expect(await lastUsed()).toBe('never');
    expect((await api('GET', '/v1/teams/current', undefined, token.body.token)).status).toBe(200);
    await page.reload();
    expect(await lastUsed()).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    await screenshot(page, 'tokens-last-used');
    await page.context().close();
  });

  it('subscribers: changes a subscription’s plan (an upgrade) and shows a refused change; suspends and unsuspends; bans, unbans and kicks the subscriber', async () => {
    const projectId = await newProject();
    const plan = async (name: string, amount: number) => {
      const created = await api('POST', `/v1/projects/${projectId}/plans`, {
        name,
        amount,
        currency: 'EUR',
        interval: 'month',
      });
      expect(created.status).toBe(201);
      return created.body.id as string;
    };
    const monthly = await plan('Monthly', 900);
    const premium = await plan('Premium', 1900);
    const budget = await plan('Budget', 300);
    const subscriber = await api('POST', `/v1/projects/${projectId}/subscribers`, {
      display_name: unique('Grace'),
      platform_user_id: crypto.randomUUID().slice(0, 12),
    });
    expect(subscriber.status).toBe(201);
    const granted = await api('POST', `/v1/projects/${projectId}/subscriptions`, {
      subscriber_id: subscriber.body.id,
      plan_id: monthly,
    });
    expect(granted.status).toBe(201);
    const subscriptionOf = async () =>
      (await api('GET', `/v1/subscriptions/${granted.body.id}`)).body as { status: string; plan_id: string };
    const page = await signInWithLink(DEMO_OWNER.email);
    const subscriberUrl = dashboard(`/projects/${projectId}/subscribers/${subscriber.body.id}`);
    await page.goto(subscriberUrl);
    const row = () => page.locator('#subscriber-subscriptions tbody tr').first();

    // Change plan: the other plans with price and direction; choose the upgrade.
    await page.getByRole('link', { name: 'Change plan' }).click();
    await page.waitForURL(/\/change-plan\?return_to=/);
    expect(await page.locator('#current-plan').textContent()).toBe('Monthly (9.00 EUR / month)');
    expect(
      await page.getByRole('radio', { name: /Premium/ }).evaluate((radio) => radio.closest('label')!.textContent),
    ).toMatch(/Premium\s+19\.00 EUR \/ month\s+Upgrade/);
    expect(
      await page.getByRole('radio', { name: /Budget/ }).evaluate((radio) => radio.closest('label')!.textContent),
    ).toMatch(/Budget\s+3\.00 EUR \/ month\s+Downgrade/);
    await expectAccessible(page);
    await screenshot(page, 'subscription-change-plan');
    await page.getByRole('radio', { name: /Premium/ }).check();
    await page.getByRole('button', { name: 'Change plan' }).click();
    await page.waitForURL(/\?plan=Premium$/);
    expect(await page.locator('.notice').textContent()).toContain('now on the plan Premium');
    expect(await row().locator('td').first().textContent()).toBe('Premium');
    expect((await subscriptionOf()).plan_id).toBe(premium);

    // A change refused by the service (the plan was deactivated meanwhile) is shown readably; nothing changes.
    await page.getByRole('link', { name: 'Change plan' }).click();
    await page.getByRole('radio', { name: /Budget/ }).check();
    expect((await api('POST', `/v1/plans/${budget}/deactivate`)).status).toBe(200);
    await page.getByRole('button', { name: 'Change plan' }).click();
    expect(await page.locator('.problem').textContent()).toMatch(/CONFLICT[\s\S]*inactive/);
    await expectAccessible(page);
    await screenshot(page, 'subscription-change-plan-refused');
    expect((await subscriptionOf()).plan_id).toBe(premium);

    // Suspend and unsuspend (the D15 table offers one or the other).
    await page.goto(subscriberUrl);
    await page.getByRole('button', { name: 'Suspend', exact: true }).click();
    await page.waitForURL(/\?subscription=Suspended$/);
    expect(await row().locator('td').nth(1).textContent()).toBe('Suspended');
    expect(await page.getByRole('button', { name: 'Suspend', exact: true }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Change plan' }).count()).toBe(0);
    expect((await subscriptionOf()).status).toBe('suspended');
    await page.getByRole('button', { name: 'Unsuspend' }).click();
    await page.waitForURL(/\?subscription=Active$/);
    expect((await subscriptionOf()).status).toBe('active');

    // Kick (a joined member: the platform reported the join), then ban with a reason (live subscriptions
    // suspended), then unban.
    const subscriberStatus = async () =>
      (await api('GET', `/v1/subscribers/${subscriber.body.id}`)).body.status as string;
    await recordPlatformMembership(service.runtime, {
      teamId: service.demoTeamId,
      projectId,
      platformUserId: subscriber.body.platform_user_id,
      change: 'joined',
    });
    await page.reload();
    await page.getByLabel('Reason for the kick (optional)').fill('off topic');
    await page.getByRole('button', { name: 'Kick' }).click();
    expect(await page.locator('.notice').textContent()).toContain('The subscriber is kicked.');
    await screenshot(page, 'subscriber-kicked');
    await page.getByLabel('Reason for the ban (optional)').fill('spam');
    await page.getByRole('button', { name: 'Ban', exact: true }).click();
    expect(await page.locator('.notice').textContent()).toContain('The subscriber is banned.');
    expect(await page.locator('#subscriber-facts').textContent()).toContain('banned');
    expect(await subscriberStatus()).toBe('banned');
    expect((await subscriptionOf()).status).toBe('suspended');
    await expectAccessible(page);
    await screenshot(page, 'subscriber-banned');
    await page.getByRole('button', { name: 'Unban' }).click();
    expect(await page.locator('.notice').textContent()).toContain('The subscriber is unbanned.');
    expect(await subscriberStatus()).not.toBe('banned');
    expect(await page.getByRole('button', { name: 'Ban', exact: true }).count()).toBe(1);

    const owner = (await api('GET', '/v1/team-members?limit=100')).body.data.find(
      (candidate: { email: string }) => candidate.email === DEMO_OWNER.email,
    );
    const activity = (await api('GET', `/v1/activity?member_id=${owner.id}&limit=100`)).body.data as Array<{
      operation: string;
      surface: string;
      outcome: string;
    }>;
    for (const operation of [
      'changeSubscriptionPlan',
      'suspendSubscription',
      'unsuspendSubscription',
      'banSubscriber',
      'unbanSubscriber',
      'kickSubscriber',
    ]) {
      expect(
        activity.find((entry) => entry.operation === operation && entry.outcome === 'ok'),
        operation,
      ).toMatchObject({ surface: 'dashboard' });
    }
    expect(
      activity.find((entry) => entry.operation === 'changeSubscriptionPlan' && entry.outcome === 'CONFLICT'),
    ).toMatchObject({ surface: 'dashboard' });
    await page.context().close();
  });

  it('tokens, deliveries and subscriptions: readable at 375 px — one card per row, no sideways scrolling of the page or the table', async () => {
    expect(
      (
        await api('POST', '/v1/tokens', {
          name: unique('narrow screen probe with a long name'),
          abilities: ['team:view'],
        })
      ).status,
    ).toBe(201);
    const endpoint = await api('POST', '/v1/webhook-endpoints', {
      name: unique('narrow'),
      url: 'https://hooks.example.invalid/receive',
      events: ['project.created'],
    });
    expect(endpoint.status).toBe(201);
    expect((await api('POST', `/v1/webhook-endpoints/${endpoint.body.id}/test`)).status).toBe(202);
    const projectId = await newProject();
    const plan = await api('POST', `/v1/projects/${projectId}/plans`, {
      name: 'Monthly',
      amount: 900,
      currency: 'EUR',
      interval: 'month',
    });
    expect(plan.status).toBe(201);
    const subscriber = await api('POST', `/v1/projects/${projectId}/subscribers`, {
      display_name: unique('Subscriber with a long display name'),
    });
    expect(subscriber.status).toBe(201);
    expect(
      (
        await api('POST', `/v1/projects/${projectId}/subscriptions`, {
          subscriber_id: subscriber.body.id,
          plan_id: plan.body.id,
        })
      ).status,
    ).toBe(201);
    const page = await signInWithLink(DEMO_OWNER.email, { width: 375, height: 812 });
    for (const [path, table, name] of [
      ['/tokens', '#tokens', 'tokens-375x812'],
      [`/webhooks/deliveries?endpoint_id=${endpoint.body.id}`, '#deliveries', 'deliveries-375x812'],
      // A table converted from the sideways-scrolling one, with a cell of action buttons.
      [`/projects/${projectId}/subscriptions`, '#subscriptions', 'subscriptions-375x812'],
    ] as const) {
      await page.goto(dashboard(path));
      expect(await page.locator(`${table} tbody tr`).count(), path).toBeGreaterThan(0);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), path).toBeLessThanOrEqual(375);
      const wrap = page.locator(`${table}`);
      expect(await wrap.evaluate((element) => element.scrollWidth - element.clientWidth), path).toBe(0);
      // Each cell names its column (the header is visually hidden).
      expect(
        await page
          .locator(`${table} tbody tr`)
          .first()
          .locator('td')
          .first()
          .evaluate((cell) => getComputedStyle(cell, '::before').content),
        path,
      ).not.toBe('none');
      const rights = await page
        .locator(`${table} tbody td`)
        .evaluateAll((cells) =>
          cells.filter((cell) => cell.getClientRects().length > 0).map((cell) => cell.getBoundingClientRect().right),
        );
      expect(Math.max(...rights), path).toBeLessThanOrEqual(375);
      await expectAccessible(page);
      await screenshot(page, name);
    }
    await page.context().close();
  });

  it('projects: readable at 375 px — no sideways scrolling of the page, each project’s name and state in view', async () => {
    await newProject();
    const page = await signInWithLink(DEMO_OWNER.email, { width: 375, height: 812 });
    await page.goto(dashboard('/projects'));
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);
    const firstLink = page.locator('#projects tbody a').first();
    const box = (await firstLink.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(375);
    await expectAccessible(page);
    await screenshot(page, 'projects-375x812');
    await page.context().close();
  });
});
