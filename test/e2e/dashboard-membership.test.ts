/**
 * The dashboard's membership screens in a real browser (DESIGN D19–D21): roles with chosen abilities assigned to a
 * member (and the CONFLICT of deleting a role still held), groups, plans priced in the currency's major unit, a
 * subscriber's subscription granted, paused, resumed and cancelled, its plan changed (and a refused change), suspended
 * and unsuspended, the subscriber banned, unbanned and kicked, billing with tier and invoices, the token list's "last
 * used", and the projects, tokens, deliveries and subscriptions tables at 375 px. Each test signs in its own member
 * session; screenshots go to `test-results/dashboard/`.
 */

import { describe, expect, it } from 'vitest';
import { BUILT_IN_ROLE_IDS } from '../../shared/domain/roles/built-in.js';
import { DEMO_OWNER } from '../../shared/local/service.js';
import { expectAccessible, screenshot } from '../support/browser.js';
import {
  api,
  dashboard,
  newProject,
  rowText,
  signInWithLink,
  unique,
  useDashboardMembershipFixture,
} from '../support/fixtures/dashboard-membership.js';

useDashboardMembershipFixture();

describe('dashboard membership screens in Chromium', () => {
  it('roles: creates a role with chosen abilities and assigns it to a member; deleting it while held shows the CONFLICT; built-in roles are read-only; groups are created and deleted', async () => {
    const page = await signInWithLink(DEMO_OWNER.email);
    const invited = await api('POST', '/v1/team-members/invitations', {
      email: `${crypto.randomUUID().slice(0, 8)}@example.com`,
      name: unique('Sam Support'),
      role_ids: [BUILT_IN_ROLE_IDS.viewer],
    });
    expect(invited.status).toBe(201);
    const member = invited.body as { id: string; name: string };

    await page.goto(dashboard('/roles'));
    await expectAccessible(page);
    await screenshot(page, 'roles-list');
    await page.getByRole('link', { name: 'New role' }).click();
    await page.waitForURL(/\/dashboard\/roles\/new$/);
    await expectAccessible(page);
    await screenshot(page, 'role-new');
    const roleName = unique('Moderator');
    await page.getByLabel('Name').fill(roleName);
    await page.getByRole('checkbox', { name: 'project:view-any' }).check();
    await page.getByRole('checkbox', { name: 'project-user:view-any' }).check();
    await page.getByRole('checkbox', { name: 'project-user:ban' }).check();
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.waitForURL(/\/dashboard\/roles\/[0-9a-f-]{36}\?saved=1$/);
    const roleId = /\/roles\/([0-9a-f-]{36})/.exec(page.url())![1];
    expect((await api('GET', `/v1/roles/${roleId}`)).body).toMatchObject({
      name: roleName,
      built_in: false,
      project_ids: null,
      abilities: ['project:view-any', 'project-user:view-any', 'project-user:ban'],
    });

    // Edit: one ability fewer, narrowed to the demo project.
    await page.getByRole('checkbox', { name: 'project-user:ban' }).uncheck();
    await page.getByRole('checkbox', { name: 'Book club' }).check();
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.waitForURL(/\?saved=1$/);
    const demoProject = (await api('GET', '/v1/projects?limit=100')).body.data.find(
      (project: { name: string }) => project.name === 'Book club',
    );
    expect((await api('GET', `/v1/roles/${roleId}`)).body).toMatchObject({
      abilities: ['project:view-any', 'project-user:view-any'],
      project_ids: [demoProject.id],
    });

    // Assign it from the member's page (updateTeamMember with the complete set of roles).
    await page.goto(dashboard('/team-members'));
    await page.getByRole('link', { name: `Change the roles of ${member.name}` }).click();
    await page.waitForURL(new RegExp(`/dashboard/team-members/${member.id}$`));
    await page.getByRole('checkbox', { name: new RegExp(`^${roleName}`) }).check();
    await expectAccessible(page);
    await screenshot(page, 'team-member-roles');
    await page.getByRole('button', { name: 'Save roles' }).click();
    await page.waitForURL(/\?saved=1$/);
    expect((await api('GET', `/v1/team-members/${member.id}`)).body.role_ids).toEqual(
      expect.arrayContaining([BUILT_IN_ROLE_IDS.viewer, roleId]),
    );

    // Deleting a role still held: the CONFLICT as a readable message, beside who holds it.
    await page.goto(dashboard(`/roles/${roleId}`));
    expect(await page.locator('#role-holders').textContent()).toContain(member.name);
    await page.getByRole('button', { name: `Delete role ${roleName}` }).click();
    expect(await page.locator('.problem').textContent()).toContain('CONFLICT');
    expect(await page.locator('.problem').textContent()).toContain('still assigned');
    expect(await page.locator('#role-conflict-help').count()).toBe(1);
    await screenshot(page, 'role-delete-conflict');
    expect((await api('GET', `/v1/roles/${roleId}`)).status).toBe(200);

    // Built-in roles are shown, not editable.
    await page.goto(dashboard(`/roles/${BUILT_IN_ROLE_IDS.viewer}`));
    expect(await page.locator('#role-form').count()).toBe(0);
    expect(await page.locator('#role-abilities li').count()).toBeGreaterThan(0);
    await screenshot(page, 'role-built-in');

    // A group with the role and the member; then deleted.
    await page.goto(dashboard('/roles'));
    await page.getByRole('link', { name: 'New group' }).click();
    const groupName = unique('Night shift');
    await page.getByLabel('Name').fill(groupName);
    await page.getByRole('checkbox', { name: roleName }).check();
    await page.getByRole('checkbox', { name: new RegExp(member.name) }).check();
    await expectAccessible(page);
    await screenshot(page, 'group-new');
    await page.getByRole('button', { name: 'Create group' }).click();
    await page.waitForURL(/\/dashboard\/groups\/[0-9a-f-]{36}\?saved=1$/);
    const groupId = /\/groups\/([0-9a-f-]{36})/.exec(page.url())![1];
    expect((await api('GET', `/v1/groups/${groupId}`)).body).toMatchObject({
      name: groupName,
      role_ids: [roleId],
      member_ids: [member.id],
    });
    await screenshot(page, 'group-edit');
    await page.getByRole('button', { name: `Delete group ${groupName}` }).click();
    await page.waitForURL(/\/dashboard\/roles\?deleted=group$/);
    expect((await api('GET', `/v1/groups/${groupId}`)).status).toBe(404);

    // Every action is in the activity log, naming the member.
    const owner = (await api('GET', '/v1/team-members?limit=100')).body.data.find(
      (candidate: { email: string }) => candidate.email === DEMO_OWNER.email,
    );
    const activity = (await api('GET', `/v1/activity?member_id=${owner.id}&limit=100`)).body.data as Array<{
      operation: string;
      surface: string;
      outcome: string;
    }>;
    for (const operation of ['createRole', 'updateTeamMember', 'createGroup', 'deleteGroup'])
      expect(
        activity.find((entry) => entry.operation === operation),
        operation,
      ).toMatchObject({ surface: 'dashboard' });
    expect(activity.find((entry) => entry.operation === 'deleteRole')).toMatchObject({
      surface: 'dashboard',
      outcome: 'CONFLICT',
    });
    await page.context().close();
  });

  it('plans: creates plans priced in the major unit (19.90 EUR → 1990, 500 JPY → 500), refuses a price the currency cannot have, changes the price, deactivates and activates', async () => {
    const projectId = await newProject();
    const page = await signInWithLink(DEMO_OWNER.email);
    await page.goto(dashboard(`/projects/${projectId}`));
    await page.getByRole('link', { name: 'New plan' }).click();
    await page.waitForURL(/\/plans\/new$/);
    await expectAccessible(page);
    await screenshot(page, 'plan-new');
    await page.getByLabel('Name', { exact: true }).fill('Monthly');
    await page.getByLabel('Price').fill('19.90');
    await page.getByLabel('Currency').fill('EUR');
    await page.getByRole('button', { name: 'Create plan' }).click();
    await page.waitForURL(new RegExp(`/dashboard/projects/${projectId}\\?plan_saved=`));
    expect(await rowText(page, 'Monthly')).toContain('19.90 EUR');

    // A yen price has no decimals: 0.5 JPY is refused with the reason, 500 JPY is 500 minor units.
    await page.getByRole('link', { name: 'New plan' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Yen pass');
    await page.getByLabel('Price').fill('0.5');
    await page.getByLabel('Currency').fill('JPY');
    await page.getByRole('button', { name: 'Create plan' }).click();
    expect(await page.locator('.problem').textContent()).toContain('must be a whole number of JPY');
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Yen pass');
    await screenshot(page, 'plan-new-refused');
    await page.getByLabel('Price').fill('500');
    await page.getByRole('button', { name: 'Create plan' }).click();
    await page.waitForURL(/\?plan_saved=/);
    expect(await rowText(page, 'Yen pass')).toContain('500 JPY');
    await expectAccessible(page);
    await screenshot(page, 'project-plans');

    const plans = (await api('GET', `/v1/projects/${projectId}/plans?limit=100`)).body.data as Array<{
      id: string;
      name: string;
      amount: number;
      currency: string;
      status: string;
    }>;
    expect(plans.map(({ name, amount, currency }) => ({ name, amount, currency }))).toEqual([
      { name: 'Monthly', amount: 1990, currency: 'EUR' },
      { name: 'Yen pass', amount: 500, currency: 'JPY' },
    ]);

    // Change the price, then deactivate (archive) and activate again.
    await page.getByRole('link', { name: 'Monthly' }).click();
    await page.waitForURL(new RegExp(`/plans/${plans[0].id}$`));
    expect(await page.getByLabel('Price').inputValue()).toBe('19.90');
    await page.getByLabel('Price').fill('24.5');
    await page.getByRole('button', { name: 'Save plan' }).click();
    expect(await page.locator('.notice').textContent()).toContain('saved');
    expect(await page.locator('#plan-facts').textContent()).toContain('24.50 EUR');
    expect((await api('GET', `/v1/plans/${plans[0].id}`)).body.amount).toBe(2450);
    await page.getByRole('button', { name: 'Deactivate (archive)' }).click();
    expect(await page.locator('.notice').textContent()).toContain('inactive');
    expect((await api('GET', `/v1/plans/${plans[0].id}`)).body.status).toBe('inactive');
    await page.getByRole('button', { name: 'Activate' }).click();
    expect((await api('GET', `/v1/plans/${plans[0].id}`)).body.status).toBe('active');
    await expectAccessible(page);
    await screenshot(page, 'plan-edit');
    await page.context().close();
  });

  it('subscriptions: grants one to a subscriber, pauses, resumes, cancels at period end, resumes and cancels now', async () => {
    const projectId = await newProject();
    const plan = await api('POST', `/v1/projects/${projectId}/plans`, {
      name: 'Monthly',
      amount: 900,
      currency: 'EUR',
      interval: 'month',
    });
    expect(plan.status).toBe(201);
    const subscriber = await api('POST', `/v1/projects/${projectId}/subscribers`, { display_name: unique('Ada') });
    expect(subscriber.status).toBe(201);
    const page = await signInWithLink(DEMO_OWNER.email);

    await page.goto(dashboard(`/projects/${projectId}/subscribers`));
    await page.getByRole('link', { name: subscriber.body.display_name }).click();
    await page.waitForURL(new RegExp(`/subscribers/${subscriber.body.id}$`));
    await page.getByLabel('Plan', { exact: true }).selectOption({ label: 'Monthly (9.00 EUR)' });
    await page.getByRole('button', { name: 'Grant subscription' }).click();
    await page.waitForURL(/\?subscription=active$/);
    const statusCell = () =>
      page.locator('#subscriber-subscriptions tbody tr').first().locator('td').nth(1).textContent();
    expect(await statusCell()).toBe('Active');
    await expectAccessible(page);
    await screenshot(page, 'subscriber-detail');
    const [subscription] = (
      await api('GET', `/v1/projects/${projectId}/subscriptions?subscriber_id=${subscriber.body.id}`)
    ).body.data as Array<{ id: string; source: string }>;
    expect(subscription.source).toBe('creator_grant');
    const statusOf = async () => (await api('GET', `/v1/subscriptions/${subscription.id}`)).body.status as string;

    for (const [button, label, status] of [
      ['Pause', 'Paused', 'paused'],
      ['Resume', 'Active', 'active'],
      ['Cancel at period end', 'Cancels at period end', 'pending_cancellation'],
      ['Resume', 'Active', 'active'],
    ] as const) {
      await page.getByRole('button', { name: button, exact: true }).click();
      await page.waitForURL(new RegExp(`\\?subscription=${encodeURIComponent(label).replaceAll('%20', '(%20|\\+)')}$`));
      expect(await statusCell(), button).toBe(label);
      expect(await statusOf(), button).toBe(status);
    }

    // From the project's subscriptions list: cancel at once; no action is left on a canceled subscription.
    await page.goto(dashboard(`/projects/${projectId}/subscriptions`));
    await expectAccessible(page);
    await screenshot(page, 'subscriptions-list');
    await page.getByRole('button', { name: 'Cancel now' }).click();
    expect(await page.locator('.notice').textContent()).toContain('Canceled');
    expect(await statusOf()).toBe('canceled');
    expect(await page.getByRole('button', { name: /Cancel|Pause|Resume/ }).count()).toBe(0);
    await page.context().close();
  });
});
