/**
 * The dashboard's server side without a browser (DESIGN D21): one-time sign-in links (15 minutes, single
 * use), sessions (12 hours idle, revocable), CSRF, escaping of stored text, and team-member principals
 * running the same operations as the API — idempotency, activity entries naming the member, and an
 * endpoint owned by a member receiving events only while the member holds their abilities (D6).
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { handleDashboardRequest } from '../../shared/dashboard/router.js';
import { runAnyOperation, dashboardEvent } from '../support/calls.js';
import { createSession } from '../../shared/domain/team-members/sessions.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { BUILT_IN_ROLE_IDS } from '../../shared/domain/roles/built-in.js';
import { inviteTeamMember, acceptTeamInvitation } from '../../shared/domain/team-members/invitations.js';
import { world } from '../support/fixtures/dashboard.js';

describe('membership screens', () => {
  it('show a viewer the role, group, plan, billing and subscription actions disabled with the ability named', async () => {
    const { clock, runtime, team, principal } = await world();
    const project = await createProject(runtime, principal, { name: 'Club', platform_type: 'web' });
    const invited = await inviteTeamMember(runtime, principal, {
      email: `v-${randomUUID()}@example.com`,
      name: 'Vi',
      role_ids: [BUILT_IN_ROLE_IDS.viewer],
    });
    await acceptTeamInvitation(runtime, invited.invitation_token);
    const { cookieValue } = await createSession(runtime.store, clock, {
      teamId: team.id,
      memberId: invited.id,
      state: 'active',
      method: 'passkey',
    });
    const get = async (path: string) =>
      (await handleDashboardRequest(runtime, dashboardEvent('GET', path, { cookie: cookieValue }))).body;
    expect(await get('/dashboard/roles')).toContain('New role — needs role:create');
    expect(await get('/dashboard/roles')).toContain('New group — needs group:create');
    expect(await get(`/dashboard/projects/${project.id}`)).toContain(
      'New plan — needs project-subscription-plan:create',
    );
    expect(await get(`/dashboard/projects/${project.id}/plans/new`)).toContain(
      'Create plan — needs project-subscription-plan:create',
    );
    expect(await get(`/dashboard/roles/${BUILT_IN_ROLE_IDS.viewer}`)).toContain('cannot be changed or deleted');
    expect(await get('/dashboard/billing')).toContain('Change tier — needs billing:update');

    const run = async <T>(operation: Parameters<typeof runAnyOperation>[2], input: Record<string, unknown>) => {
      const outcome = await runAnyOperation<T>(runtime, principal, operation, input, {
        requestId: randomUUID(),
        idempotencyKey: randomUUID(),
      });
      if (!outcome.ok) throw new Error(outcome.problem.detail);
      return outcome.result;
    };
    const plan = await run<{ id: string }>('createPlan', {
      project_id: project.id,
      name: 'Monthly',
      amount: 900,
      currency: 'EUR',
      interval: 'month',
    });
    const subscriber = await run<{ id: string }>('createSubscriber', { project_id: project.id, display_name: 'Ada' });
    await run('createSubscription', { project_id: project.id, subscriber_id: subscriber.id, plan_id: plan.id });
    await run('createPlan', {
      project_id: project.id,
      name: 'Yearly',
      amount: 9000,
      currency: 'EUR',
      interval: 'year',
    });
    const suspended = await run<{ id: string }>('createSubscription', {
      project_id: project.id,
      subscriber_id: subscriber.id,
      plan_id: plan.id,
    });
    await run('suspendSubscription', { id: suspended.id });
    const subscriptions = await get(`/dashboard/projects/${project.id}/subscriptions`);
    expect(subscriptions).toContain('Pause — needs project-subscription:pause');
    expect(subscriptions).toContain('Cancel now — needs project-subscription:cancel');
    expect(subscriptions).toContain('Change plan — needs project-subscription:update');
    expect(subscriptions).toContain('Suspend — needs project-subscription:update');
    expect(subscriptions).toContain('Unsuspend — needs project-subscription:update');
    const subscriberPage = await get(`/dashboard/projects/${project.id}/subscribers/${subscriber.id}`);
    expect(subscriberPage).toContain('Ban — needs project-user:ban');
    expect(subscriberPage).toContain('Kick — needs project-user:kick');
    expect(subscriberPage).toContain('Grant subscription — needs project-subscription:create');
    expect(subscriberPage).toContain('Unsuspend — needs project-subscription:update');
    const active = (
      await run<{ data: Array<{ id: string; status: string }> }>('listSubscriptions', { project_id: project.id })
    ).data.find((subscription) => subscription.status === 'active')!;
    const changePlanPage = await get(`/dashboard/projects/${project.id}/subscriptions/${active.id}/change-plan`);
    expect(changePlanPage).toContain('Yearly');
    expect(changePlanPage).toContain('Change plan — needs project-subscription:update');
    await run('banSubscriber', { id: subscriber.id });
    expect(await get(`/dashboard/projects/${project.id}/subscribers/${subscriber.id}`)).toContain(
      'Unban — needs project-user:ban',
    );
  });

  it('change a subscription’s plan: the other active plans of its currency, as upgrade or downgrade; offered only where D15 allows it; a refused change is a readable problem', async () => {
    const { clock, runtime, team, owner, principal } = await world();
    const project = await createProject(runtime, principal, { name: 'Club', platform_type: 'web' });
    const { session, cookieValue } = await createSession(runtime.store, clock, {
      teamId: team.id,
      memberId: owner.id,
      state: 'active',
      method: 'passkey',
    });
    const get = async (path: string) =>
      (await handleDashboardRequest(runtime, dashboardEvent('GET', path, { cookie: cookieValue }))).body;
    const post = (path: string, fields: Record<string, string>) =>
      handleDashboardRequest(
        runtime,
        dashboardEvent('POST', path, {
          cookie: cookieValue,
          form: new URLSearchParams({
            csrf_token: session.csrf_token,
            idempotency_key: randomUUID(),
            ...fields,
          }).toString(),
        }),
      );
    const run = async <T>(operation: Parameters<typeof runAnyOperation>[2], input: Record<string, unknown>) => {
      const outcome = await runAnyOperation<T>(runtime, principal, operation, input, {
        requestId: randomUUID(),
        idempotencyKey: randomUUID(),
      });
      if (!outcome.ok) throw new Error(outcome.problem.detail);
      return outcome.result;
    };
    const monthly = await run<{ id: string }>('createPlan', {
      project_id: project.id,
      name: 'Monthly',
      amount: 900,
      currency: 'EUR',
      interval: 'month',
    });
    const premium = await run<{ id: string }>('createPlan', {
      project_id: project.id,
      name: 'Premium',
      amount: 1900,
      currency: 'EUR',
      interval: 'month',
    });
    const budget = await run<{ id: string }>('createPlan', {
      project_id: project.id,
      name: 'Budget',
      amount: 300,
      currency: 'EUR',
      interval: 'month',
    });
    await run('createPlan', {
      project_id: project.id,
      name: 'Dollar',
      amount: 1000,
      currency: 'USD',
      interval: 'month',
    });
    const retired = await run<{ id: string }>('createPlan', {
      project_id: project.id,
      name: 'Retired',
      amount: 100,
      currency: 'EUR',
      interval: 'month',
    });
    await run('deactivatePlan', { id: retired.id });
    const subscriber = await run<{ id: string }>('createSubscriber', { project_id: project.id, display_name: 'Ada' });
    const subscription = await run<{ id: string }>('createSubscription', {
      project_id: project.id,
      subscriber_id: subscriber.id,
      plan_id: monthly.id,
    });
    const base = `/dashboard/projects/${project.id}/subscriptions/${subscription.id}`;
    const subscriberPath = `/dashboard/projects/${project.id}/subscribers/${subscriber.id}`;

    expect(await get(subscriberPath)).toContain(
      `href="${base}/change-plan?return_to=${encodeURIComponent(subscriberPath)}"`,
    );
    const page = await get(`${base}/change-plan?return_to=${encodeURIComponent(subscriberPath)}`);
    const choices = page.slice(page.indexOf('id="plan-choices"'));
    expect(choices).toMatch(
      /Premium <span class="hint">19\.00 EUR \/ month<\/span> <span class="badge blue">Upgrade<\/span>/,
    );
    expect(choices).toMatch(
      /Budget <span class="hint">3\.00 EUR \/ month<\/span> <span class="badge yellow">Downgrade<\/span>/,
    );
    expect(choices).not.toContain('Dollar');
    expect(choices).not.toContain('Retired');
    expect(page).toContain('One plan in another currency is not offered');

    const changed = await post(`${base}/change-plan`, { plan_id: premium.id, return_to: subscriberPath });
    expect(changed.statusCode).toBe(303);
    expect(changed.headers?.Location).toBe(`${subscriberPath}?plan=Premium`);
    expect(await run<{ plan_id: string }>('getSubscription', { id: subscription.id })).toMatchObject({
      plan_id: premium.id,
    });
    expect(await get(`${subscriberPath}?plan=Premium`)).toContain('The subscription is now on the plan Premium.');

    // Refused: a plan deactivated meanwhile is a CONFLICT, shown readably on the change-plan page.
    await run('deactivatePlan', { id: budget.id });
    const refused = await post(`${base}/change-plan`, { plan_id: budget.id, return_to: subscriberPath });
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('class="problem"');
    expect(refused.body).toContain('is inactive');
    expect((await run<{ plan_id: string }>('getSubscription', { id: subscription.id })).plan_id).toBe(premium.id);

    // Suspend and unsuspend come from the same table: a suspended subscription offers Unsuspend, no plan change.
    const suspendedAt = await post(`${base}/suspend`, { return_to: subscriberPath });
    expect(suspendedAt.headers?.Location).toBe(`${subscriberPath}?subscription=Suspended`);
    const suspendedPage = await get(subscriberPath);
    expect(suspendedPage).toContain('>Unsuspend</button>');
    expect(suspendedPage).not.toContain('>Suspend</button>');
    expect(suspendedPage).not.toContain('/change-plan');
    expect(await get(`${base}/change-plan`)).toContain('id="change-plan-not-allowed"');
    const notAllowed = await post(`${base}/change-plan`, { plan_id: monthly.id });
    expect(notAllowed.statusCode).toBe(409);
    expect(notAllowed.body).toContain('suspended');
    await post(`${base}/unsuspend`, {});
    expect((await run<{ status: string }>('getSubscription', { id: subscription.id })).status).toBe('active');
    expect(await get(subscriberPath)).toContain('>Suspend</button>');

    // A canceled subscription offers none of them.
    await run('cancelSubscription', { id: subscription.id, at_period_end: false });
    const canceledPage = await get(subscriberPath);
    for (const label of ['Suspend', 'Unsuspend']) expect(canceledPage).not.toContain(`>${label}</button>`);
    expect(canceledPage).not.toContain('/change-plan');
  });

  it('create a plan from the price in the major unit and its grace period; a double-submitted form creates one plan; a price the currency cannot have is refused before anything runs; POSTs need the CSRF token', async () => {
    const { clock, runtime, team, owner, principal } = await world();
    const project = await createProject(runtime, principal, { name: 'Club', platform_type: 'web' });
    const { session, cookieValue } = await createSession(runtime.store, clock, {
      teamId: team.id,
      memberId: owner.id,
      state: 'active',
      method: 'passkey',
    });
    const post = (path: string, fields: Record<string, string>) =>
      handleDashboardRequest(
        runtime,
        dashboardEvent('POST', path, {
          cookie: cookieValue,
          form: new URLSearchParams({ csrf_token: session.csrf_token, ...fields }).toString(),
        }),
      );
    const plans = async () => {
      const listed = await runAnyOperation<{ data: Array<{ id: string; amount: number; currency: string }> }>(
        runtime,
        principal,
        'listPlans',
        { project_id: project.id },
        { requestId: randomUUID() },
      );
      return listed.ok ? listed.result.data : [];
    };

    const newPlan = await handleDashboardRequest(
      runtime,
      dashboardEvent('GET', `/dashboard/projects/${project.id}/plans/new`, { cookie: cookieValue }),
    );
    expect(newPlan.body).toContain('Grace period (days)');
    expect(newPlan.body).toContain('How long a member whose renewal failed keeps access while the payment is retried.');
    expect(newPlan.body).toMatch(/name="grace_days"[^>]*value="7"/);
    expect(newPlan.body).toContain('<select id="plan-trial-card" name="trial_payment_method_required">');

    const refused = await post(`/dashboard/projects/${project.id}/plans`, {
      idempotency_key: randomUUID(),
      name: 'Kuwaiti',
      amount: '1.2345',
      currency: 'KWD',
      interval: 'month',
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('at most 3 decimals');
    expect(await plans()).toEqual([]);

    const form = {
      idempotency_key: randomUUID(),
      name: 'Monthly',
      amount: '19.9',
      currency: 'eur',
      interval: 'month',
      interval_count: '1',
      trial_days: '0',
      grace_days: '3',
    };
    const first = await post(`/dashboard/projects/${project.id}/plans`, form);
    const second = await post(`/dashboard/projects/${project.id}/plans`, form);
    expect(first.statusCode).toBe(303);
    expect(second.headers.Location).toBe(first.headers.Location);
    expect(await plans()).toEqual([expect.objectContaining({ amount: 1990, currency: 'EUR', grace_days: 3 })]);
    const cardless = { ...form, idempotency_key: randomUUID(), name: 'Trial', trial_days: '7' };
    const trial = await post(`/dashboard/projects/${project.id}/plans`, {
      ...cardless,
      trial_payment_method_required: 'false',
    });
    expect(trial.statusCode).toBe(303);
    expect((await plans()).find((plan) => 'name' in plan && plan.name === 'Trial')).toMatchObject({
      name: 'Trial',
      trial_days: 7,
      trial_payment_method_required: false,
    });

    const forged = await handleDashboardRequest(
      runtime,
      dashboardEvent('POST', '/dashboard/roles', { cookie: cookieValue, form: 'name=x&abilities=team%3Aview' }),
    );
    expect(forged.statusCode).toBe(403);
    expect(JSON.parse(forged.body).code).toBe('CSRF_TOKEN_INVALID');
  });
});
