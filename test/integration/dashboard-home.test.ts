/**
 * The dashboard's home and project pages at a glance without a browser (DESIGN D21): "Needs attention"
 * lists disabled webhook endpoints, the billing grace period and members whose platform call failed, with
 * their links, or says nothing needs attention; a member who may not run a check sees the page with the
 * check named instead of an error; the team's and each project's figures with their charts, money hidden
 * without `project-payment:view-any` and the figures without `project-subscription:view-any` (never an
 * error page); a project's subscriptions can be filtered by status.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ABILITY_VALUES, type Ability } from '../../shared/catalogues/abilities.js';
import { handleDashboardRequest } from '../../shared/dashboard/router.js';
import { runAnyOperation, dashboardEvent } from '../support/calls.js';
import { createSession } from '../../shared/domain/team-members/sessions.js';
import { changeTier, markInvoicePaymentFailed } from '../../shared/domain/billing/changes.js';
import { listBillingInvoices } from '../../shared/domain/billing/reads.js';
import type { BillingTier } from '../../shared/domain/billing/schema.js';
import { recordPlatformMembership } from '../../shared/domain/members/platform-updates.js';
import { banSubscriber } from '../../shared/domain/subscribers/moderation.js';
import { ensureTeamOwner } from '../../shared/domain/team-members/changes.js';
import { acceptTeamInvitation, inviteTeamMember } from '../../shared/domain/team-members/invitations.js';
import type { PlatformAdapter } from '../../shared/platforms/platform-adapter.js';
import { createTestRuntime, seedTeam, testClock } from '../support/store.js';

/**
 * A team on `tier` with its owner; `signIn` opens a session for the owner or for a new member holding only `abilities`,
 * and returns a GET helper.
 */
async function world(tier: BillingTier = 'business') {
  const clock = testClock();
  const runtime = await createTestRuntime({ clock });
  const seeded = await seedTeam(runtime.store, clock, ABILITY_VALUES, tier);
  const owner = await ensureTeamOwner(runtime, seeded.team.id, {
    email: `owner-${randomUUID()}@example.com`,
    name: 'Owner',
  });
  const run = async <T>(
    operation: Parameters<typeof runAnyOperation>[2],
    input: Record<string, unknown>,
  ): Promise<T> => {
    const outcome = await runAnyOperation<T>(runtime, seeded.principal, operation, input, {
      requestId: randomUUID(),
      idempotencyKey: randomUUID(),
    });
    if (!outcome.ok) throw new Error(outcome.problem.detail);
    return outcome.result;
  };
  async function signIn(abilities?: Ability[]) {
    let memberId = owner.id;
    if (abilities) {
      const role = await run<{ id: string }>('createRole', { name: `Limited ${randomUUID().slice(0, 8)}`, abilities });
      const invited = await inviteTeamMember(runtime, seeded.principal, {
        email: `m-${randomUUID()}@example.com`,
        name: 'Limited',
        role_ids: [role.id],
      });
      await acceptTeamInvitation(runtime, invited.invitation_token);
      memberId = invited.id;
    }
    const { cookieValue } = await createSession(runtime.store, clock, {
      teamId: seeded.team.id,
      memberId,
      state: 'active',
      method: 'passkey',
    });
    return async (path: string) => {
      const result = await handleDashboardRequest(runtime, dashboardEvent('GET', path, { cookie: cookieValue }));
      return { status: result.statusCode, body: String(result.body) };
    };
  }
  return { runtime, team: seeded.team, principal: seeded.principal, run, signIn };
}

/** A platform adapter whose every call fails with `reason`. */
function failingAdapter(reason: string): PlatformAdapter {
  const fail = async () => ({ ok: false as const, reason });
  return {
    platform: 'web',
    grantAccess: fail,
    revokeInviteLink: fail,
    revokeAccess: fail,
    kick: fail,
    ban: fail,
    unban: fail,
  };
}

describe('needs attention', () => {
  it('says nothing needs attention for a calm team, keeping the team facts and buttons', async () => {
    const { team, signIn } = await world();
    const get = await signIn();
    const home = await get('/dashboard');
    expect(home.status).toBe(200);
    expect(home.body).toContain('Needs attention');
    // An inline icon: browsers never ask for /favicon.ico, which no surface serves.
    expect(home.body).toContain('<link rel="icon" href="data:image/svg+xml,');
    expect(home.body).toContain('Nothing needs your attention.');
    expect(home.body).toContain(team.id);
    expect(home.body).toContain('href="/dashboard/tokens"');
    expect(home.body).not.toContain('Not checked');
  });

  it('lists a disabled webhook endpoint, the billing grace period and a member whose platform call failed, each with its link', async () => {
    const { runtime, team, principal, run, signIn } = await world('free');
    const endpoint = await run<{ id: string }>('createWebhookEndpoint', {
      name: 'hook',
      url: 'https://receiver.example/hook',
      events: ['project.created'],
    });
    await run('updateWebhookEndpoint', { id: endpoint.id, is_active: false });
    await changeTier(runtime, team.id, 'pro');
    const [invoice] = (await listBillingInvoices(runtime.store, team.id, { limit: 1 })).data;
    await markInvoicePaymentFailed(runtime, team.id, invoice.id, 'card_declined');
    const project = await run<{ id: string }>('createProject', { name: 'Site <club>', platform_type: 'web' });
    const subscriber = await run<{ id: string }>('createSubscriber', {
      project_id: project.id,
      display_name: 'Ada',
      platform_user_id: 'web-ada',
    });
    await recordPlatformMembership(runtime, {
      teamId: team.id,
      projectId: project.id,
      platformUserId: 'web-ada',
      change: 'joined',
      username: null,
    });
    await banSubscriber(runtime, principal, subscriber.id, null, {
      adapters: { web: failingAdapter('The bot lacks the ban permission.') },
    });

    const get = await signIn();
    const home = (await get('/dashboard')).body;
    expect(home).not.toContain('Nothing needs your attention.');
    expect(home).toContain('<li id="attention-webhooks"><a href="/dashboard/webhooks">1 webhook endpoint is disabled');
    expect(home).toMatch(
      /<li id="attention-billing"><a href="\/dashboard\/billing">Billing is in its grace period until <time/,
    );
    expect(home).toContain(
      `<li id="attention-platform-${project.id}"><a href="/dashboard/projects/${project.id}/subscribers">Site &lt;club>: 1 member has a failed platform call`,
    );

    const projectPage = (await get(`/dashboard/projects/${project.id}`)).body;
    expect(projectPage).toContain(`id="attention-platform-${project.id}"`);
    expect(projectPage).not.toContain('attention-webhooks'); // team-wide checks stay on the home page
  });

  it('shows the page, naming the checks skipped, to a member who may not run them', async () => {
    const { signIn } = await world();
    const get = await signIn(['project:view-any']);
    const home = await get('/dashboard');
    expect(home.status).toBe(200);
    expect(home.body).toContain('Nothing needs your attention.');
    expect(home.body).toContain('disabled webhook endpoints (needs <code>webhook-endpoint:manage</code>)');
    expect(home.body).toContain('billing (needs <code>billing:view</code>)');
  });
});

describe('figures', () => {
  /**
   * A project with a monthly plan of 12.50 EUR and one subscription created by its first payment (so it counts in MRR),
   * made with the owner's token.
   */
  async function paidSubscription(run: Awaited<ReturnType<typeof world>>['run']) {
    const project = await run<{ id: string }>('createProject', { name: 'Club', platform_type: 'web' });
    await run('connectProjectPaymentProvider', { project_id: project.id, provider: 'manual' });
    const plan = await run<{ id: string }>('createPlan', {
      project_id: project.id,
      name: 'Monthly',
      amount: 1_250,
      currency: 'EUR',
      interval: 'month',
    });
    const subscriber = await run<{ id: string }>('createSubscriber', { project_id: project.id, display_name: 'Ada' });
    const payment = await run<{ subscription_id: string }>('recordPayment', {
      project_id: project.id,
      subscriber_id: subscriber.id,
      plan_id: plan.id,
      status: 'succeeded',
    });
    return { ...project, subscriptionId: payment.subscription_id };
  }

  it('shows the team’s and the project’s figures, money per currency and the charts', async () => {
    const { run, signIn } = await world();
    const project = await paidSubscription(run);
    const get = await signIn();
    const home = (await get('/dashboard')).body;
    expect(home).toContain('<div id="team-active"><dt>Active</dt><dd>1</dd></div>');
    expect(home).toContain(
      '<td data-label="MRR">€12.50</td><td data-label="Revenue (30 days)">€12.50</td><td data-label="Refunds (30 days)">€0.00</td>',
    );
    expect(home).toContain('id="team-chart-active"');
    expect(home).toMatch(/id="team-chart-revenue-eur"[\s\S]*<rect class="chart-bar"/);
    const projectPage = (await get(`/dashboard/projects/${project.id}`)).body;
    expect(projectPage).toContain('<div id="project-active"><dt>Active</dt><dd>1</dd></div>');
    expect(projectPage).toContain('id="project-chart-revenue-eur"');
    expect(projectPage).toContain('<h2>Plans</h2>');
  });

  it('lists a past-due subscription and its failed payment, leading (one project) to its subscriptions filtered by past_due', async () => {
    const { run, signIn } = await world();
    const project = await paidSubscription(run);
    await run('recordPayment', { project_id: project.id, subscription_id: project.subscriptionId, status: 'failed' });
    const get = await signIn();
    const home = (await get('/dashboard')).body;
    const link = `/dashboard/projects/${project.id}/subscriptions?status=past_due`;
    expect(home).toContain(
      `<li id="attention-past-due"><a href="${link}">1 subscription is past due (a renewal failed).</a></li>`,
    );
    expect(home).toContain('<li id="attention-failed-payments">1 payment failed in the last 30 days.</li>');
    const projectPage = (await get(`/dashboard/projects/${project.id}`)).body;
    expect(projectPage).toContain(`<li id="attention-past-due"><a href="${link}">`);
    const pastDue = (await get(link)).body;
    expect(pastDue).toContain(project.subscriptionId);
    expect(pastDue).toContain('Past due');
  });

  it('hides money from a member without project-payment:view-any', async () => {
    const { run, signIn } = await world();
    const project = await paidSubscription(run);
    const get = await signIn([
      'project:view-any',
      'project:view',
      'project-subscription:view-any',
      'project-subscription-plan:view-any',
    ]);
    for (const path of ['/dashboard', `/dashboard/projects/${project.id}`]) {
      const page = await get(path);
      expect(page.status).toBe(200);
      expect(page.body).toContain('<dd>1</dd>');
      expect(page.body).toContain('Money is hidden');
      expect(page.body).not.toContain('€12.50');
      expect(page.body).not.toContain('chart-revenue');
    }
  });

  it('shows the pages without figures to a member without project-subscription:view-any', async () => {
    const { run, signIn } = await world();
    const project = await paidSubscription(run);
    const get = await signIn(['project:view-any', 'project:view', 'project-subscription-plan:view-any']);
    for (const path of ['/dashboard', `/dashboard/projects/${project.id}`]) {
      const page = await get(path);
      expect(page.status).toBe(200);
      expect(page.body).toContain('You cannot see the figures');
      expect(page.body).toContain(
        'past-due subscriptions and failed payments (needs <code>project-subscription:view-any</code>)',
      );
      expect(page.body).not.toContain('role="alert"');
    }
  });
});

describe('subscriptions by status', () => {
  it('filters a project’s subscriptions by the status in the query and ignores an unknown one', async () => {
    const { run, signIn } = await world();
    const project = await run<{ id: string }>('createProject', { name: 'Club', platform_type: 'web' });
    const plan = await run<{ id: string }>('createPlan', {
      project_id: project.id,
      name: 'Monthly',
      amount: 500,
      currency: 'EUR',
      interval: 'month',
    });
    const subscriber = await run<{ id: string }>('createSubscriber', {
      project_id: project.id,
      display_name: 'Ada',
      platform_user_id: 'web-ada',
    });
    await run('createSubscription', { project_id: project.id, subscriber_id: subscriber.id, plan_id: plan.id });
    const get = await signIn();
    const all = (await get(`/dashboard/projects/${project.id}/subscriptions`)).body;
    expect(all).toContain(`/dashboard/projects/${project.id}/subscribers/${subscriber.id}`);
    const pastDue = (await get(`/dashboard/projects/${project.id}/subscriptions?status=past_due`)).body;
    expect(pastDue).toContain('No subscriptions with this status.');
    expect(pastDue).toContain('<option value="past_due" selected>');
    expect((await get(`/dashboard/projects/${project.id}/subscriptions?status=nonsense`)).body).toContain(
      `/subscribers/${subscriber.id}`,
    );
  });
});
