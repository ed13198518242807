/**
 * The dashboard's server side without a browser (DESIGN D21): one-time sign-in links (15 minutes, single
 * use), sessions (12 hours idle, revocable), CSRF, escaping of stored text, and team-member principals
 * running the same operations as the API — idempotency, activity entries naming the member, and an
 * endpoint owned by a member receiving events only while the member holds their abilities (D6).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { memberPrincipal } from '../../shared/auth/principal.js';
import { handleDashboardRequest } from '../../shared/dashboard/router.js';
import { runOperation } from '../../shared/web/run-operation.js';
import {
  SESSION_IDLE_MS,
  SIGN_IN_LINK_LIFETIME_MS,
  consumeSignInLink,
  createSession,
  createSignInLink,
  findSession,
  listSessions,
  revokeSession,
} from '../../shared/dashboard/sessions.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { BUILT_IN_ROLE_IDS } from '../../shared/domain/roles/built-in.js';
import { ensureTeamOwner, removeTeamMember } from '../../shared/domain/team-members/changes.js';
import { inviteTeamMember, acceptTeamInvitation } from '../../shared/domain/team-members/invitations.js';
import { fanOutEvent } from '../../shared/domain/webhook-deliveries/fan-out.js';
import { listDeliveries } from '../../shared/domain/webhook-deliveries/reads.js';
import { ABILITY_VALUES } from '../../shared/catalogues/abilities.js';
import type { StoredEvent } from '../../shared/events/outbox.js';
import { keys } from '../../shared/store/keys.js';
import { lockTeam } from '../support/billing.js';
import { createTestRuntime, seedTeam, testClock } from '../support/store.js';

async function world() {
  const clock = testClock();
  const runtime = await createTestRuntime({ clock });
  const seeded = await seedTeam(runtime.store, clock);
  const owner = await ensureTeamOwner(runtime, seeded.team.id, {
    email: `owner-${randomUUID()}@example.com`,
    name: 'Owner',
  });
  return { clock, runtime, ...seeded, owner };
}

function dashboardEvent(
  method: string,
  path: string,
  options: { cookie?: string; form?: string; headers?: Record<string, string> } = {},
) {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path.split('?')[0],
    rawQueryString: path.split('?')[1] ?? '',
    cookies: options.cookie ? [`dashboard_session=${options.cookie}`] : undefined,
    headers: {
      host: 'localhost:3000',
      'x-forwarded-proto': 'http',
      ...(options.form !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...options.headers,
    },
    requestContext: { http: { method, path }, requestId: randomUUID() },
    body: options.form,
    isBase64Encoded: false,
  } as never;
}

describe('sign-in links and sessions', () => {
  it('a sign-in link works once, for 15 minutes, and never for a removed member', async () => {
    const { clock, runtime, team, owner, principal } = await world();
    const link = await createSignInLink(runtime.store, clock, team.id, owner.email.toUpperCase());
    const token = new URL(link.path, 'http://x').searchParams.get('token')!;
    expect(await runtime.store.get(keys.signInLink(token.split('_')[1]))).not.toHaveProperty('secret');
    await expect(consumeSignInLink(runtime.store, clock, token)).resolves.toEqual({
      teamId: team.id,
      memberId: owner.id,
    });
    await expect(consumeSignInLink(runtime.store, clock, token)).rejects.toMatchObject({ code: 'NOT_FOUND' });

    const late = await createSignInLink(runtime.store, clock, team.id, owner.email);
    clock.advance(SIGN_IN_LINK_LIFETIME_MS + 1);
    await expect(
      consumeSignInLink(runtime.store, clock, new URL(late.path, 'http://x').searchParams.get('token')!),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });

    const invited = await inviteTeamMember(runtime, principal, {
      email: `m-${randomUUID()}@example.com`,
      name: 'M',
      role_ids: [BUILT_IN_ROLE_IDS.viewer],
    });
    await expect(createSignInLink(runtime.store, clock, team.id, invited.email)).rejects.toMatchObject({
      code: 'CONFLICT',
    });
    await acceptTeamInvitation(runtime, invited.invitation_token);
    const before = await createSignInLink(runtime.store, clock, team.id, invited.email);
    await removeTeamMember(runtime, principal, invited.id);
    await expect(
      consumeSignInLink(runtime.store, clock, new URL(before.path, 'http://x').searchParams.get('token')!),
    ).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(createSignInLink(runtime.store, clock, team.id, invited.email)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('a session ends after 12 hours without use, is listed for its member and can be revoked; pages without one redirect to sign-in', async () => {
    const { clock, runtime, team, owner } = await world();
    const first = await createSession(runtime.store, clock, {
      teamId: team.id,
      memberId: owner.id,
      state: 'active',
      method: 'passkey',
      userAgent: 'test',
    });
    const second = await createSession(runtime.store, clock, {
      teamId: team.id,
      memberId: owner.id,
      state: 'active',
      method: 'passkey',
    });
    clock.advance(SESSION_IDLE_MS - 1000);
    expect(await findSession(runtime.store, clock, first.cookieValue)).not.toBeNull(); // used: idle time starts again
    clock.advance(SESSION_IDLE_MS - 1000);
    expect(await findSession(runtime.store, clock, first.cookieValue)).not.toBeNull();
    expect(await findSession(runtime.store, clock, second.cookieValue)).toBeNull(); // 24 hours idle
    expect((await listSessions(runtime.store, clock, team.id, owner.id)).map((session) => session.id)).toEqual([
      first.session.id,
    ]);
    await expect(revokeSession(runtime.store, clock, team.id, randomUUID(), first.session.id)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await revokeSession(runtime.store, clock, team.id, owner.id, first.session.id);
    expect(await findSession(runtime.store, clock, first.cookieValue)).toBeNull();
    expect(await findSession(runtime.store, clock, `${first.cookieValue.slice(0, -1)}x`)).toBeNull();

    const page = await handleDashboardRequest(
      runtime,
      dashboardEvent('GET', '/dashboard/webhooks', { cookie: first.cookieValue }),
    );
    expect(page.statusCode).toBe(303);
    expect(page.headers.Location).toBe('/dashboard/sign-in?return_to=%2Fdashboard%2Fwebhooks'); // back to the page after sign-in
  });

  it('a session from a sign-in link may only register a passkey; every POST needs the session’s CSRF token', async () => {
    const { clock, runtime, team, owner } = await world();
    const { session, cookieValue } = await createSession(runtime.store, clock, {
      teamId: team.id,
      memberId: owner.id,
      state: 'registration',
      method: 'link',
    });
    const home = await handleDashboardRequest(
      runtime,
      dashboardEvent('GET', '/dashboard/tokens', { cookie: cookieValue }),
    );
    expect(home.headers.Location).toBe('/dashboard/passkeys/new');
    expect(
      (await handleDashboardRequest(runtime, dashboardEvent('GET', '/dashboard/passkeys/new', { cookie: cookieValue })))
        .statusCode,
    ).toBe(200);
    const noToken = await handleDashboardRequest(
      runtime,
      dashboardEvent('POST', '/dashboard/passkeys/registration-options', {
        cookie: cookieValue,
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(noToken.statusCode).toBe(403);
    expect(JSON.parse(noToken.body).code).toBe('CSRF_TOKEN_INVALID');
    const withToken = await handleDashboardRequest(
      runtime,
      dashboardEvent('POST', '/dashboard/passkeys/registration-options', {
        cookie: cookieValue,
        headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrf_token },
      }),
    );
    expect(withToken.statusCode).toBe(200);
    expect(JSON.parse(withToken.body).options.rp).toEqual({ name: 'Membership service', id: 'localhost' });
  });
});

describe('no login CSRF', () => {
  it('a sign-in link form posted from another site, or without its pre-session token, signs nobody in; the form as served does', async () => {
    const { clock, runtime, team, owner } = await world();
    const link = await createSignInLink(runtime.store, clock, team.id, owner.email);
    const token = new URL(link.path, 'http://x').searchParams.get('token')!;
    const page = await handleDashboardRequest(runtime, dashboardEvent('GET', link.path));
    const presession = page.cookies!.find((cookie) => cookie.startsWith('dashboard_presession='))!;
    expect(presession).toMatch(/; Path=\/dashboard; HttpOnly; Secure; SameSite=Strict$/);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1];
    const post = (form: string, headers: Record<string, string> = {}, cookie = presession.split(';')[0]) =>
      handleDashboardRequest(runtime, {
        ...(dashboardEvent('POST', '/dashboard/sign-in/link', { form, headers }) as object),
        cookies: [cookie],
      } as never);

    const refused = [
      await post(`token=${token}&csrf_token=${csrf}`, { 'sec-fetch-site': 'cross-site' }),
      await post(`token=${token}&csrf_token=${csrf}`, { origin: 'https://attacker.example' }),
      await post(`token=${token}`),
      await post(
        `token=${token}&csrf_token=${csrf}`,
        {},
        'dashboard_presession=another-browsers-token-aaaaaaaaaaaaaaaaaaaaaaaa',
      ),
    ];
    for (const answer of refused) {
      expect(answer.statusCode).toBe(403);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'CSRF_TOKEN_INVALID' });
      expect(answer.cookies ?? []).toEqual([]);
    }
    // The link was not used up by the refusals: the real form signs in.
    const accepted = await post(`token=${token}&csrf_token=${csrf}`, {
      'sec-fetch-site': 'same-origin',
      origin: 'http://localhost:3000',
    });
    expect(accepted.statusCode).toBe(303);
    expect(accepted.cookies![0]).toMatch(/^dashboard_session=/);
  });
});

describe('pages', () => {
  it('escape stored text: a project named with markup is shown as text', async () => {
    const { clock, runtime, team, owner, principal } = await world();
    await createProject(runtime, principal, { name: '<script>alert("x")</script>', platform_type: 'web' });
    const { cookieValue } = await createSession(runtime.store, clock, {
      teamId: team.id,
      memberId: owner.id,
      state: 'active',
      method: 'passkey',
    });
    const page = await handleDashboardRequest(
      runtime,
      dashboardEvent('GET', '/dashboard/projects', { cookie: cookieValue }),
    );
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('&lt;script>alert(&#34;x&#34;)&lt;/script>');
    expect(page.body).not.toContain('<script>alert');
    expect(page.headers['Content-Security-Policy']).toContain("script-src 'self'");
  });
});

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

    const run = async <T>(operation: Parameters<typeof runOperation>[2], input: Record<string, unknown>) => {
      const outcome = await runOperation<T>(runtime, principal, operation, input, {
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
    const run = async <T>(operation: Parameters<typeof runOperation>[2], input: Record<string, unknown>) => {
      const outcome = await runOperation<T>(runtime, principal, operation, input, {
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

  it('create a plan from the price in the major unit; a double-submitted form creates one plan; a price the currency cannot have is refused before anything runs; POSTs need the CSRF token', async () => {
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
      const listed = await runOperation<{ data: Array<{ id: string; amount: number; currency: string }> }>(
        runtime,
        principal,
        'listPlans',
        { project_id: project.id },
        { requestId: randomUUID() },
      );
      return listed.ok ? listed.result.data : [];
    };

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
    };
    const first = await post(`/dashboard/projects/${project.id}/plans`, form);
    const second = await post(`/dashboard/projects/${project.id}/plans`, form);
    expect(first.statusCode).toBe(303);
    expect(second.headers.Location).toBe(first.headers.Location);
    expect(await plans()).toEqual([expect.objectContaining({ amount: 1990, currency: 'EUR' })]);

    const forged = await handleDashboardRequest(
      runtime,
      dashboardEvent('POST', '/dashboard/roles', { cookie: cookieValue, form: 'name=x&abilities=team%3Aview' }),
    );
    expect(forged.statusCode).toBe(403);
    expect(JSON.parse(forged.body).code).toBe('CSRF_TOKEN_INVALID');
  });
});

describe('a team member as principal', () => {
  it('runs the operation with its rules: ability, idempotency (a double submit runs once) and an activity entry naming the member', async () => {
    const { runtime, team, owner, principal } = await world();
    const invited = await inviteTeamMember(runtime, principal, {
      email: `v-${randomUUID()}@example.com`,
      name: 'V',
      role_ids: [BUILT_IN_ROLE_IDS.viewer],
    });
    await acceptTeamInvitation(runtime, invited.invitation_token);
    const viewer = memberPrincipal({
      teamId: team.id,
      memberId: invited.id,
      abilities: ABILITY_VALUES.filter((ability) => /:view(-any)?$/.test(ability) && ability !== 'project-user:view'),
    });
    const refused = await runOperation(
      runtime,
      viewer,
      'createWebhookEndpoint',
      { name: 'x', url: 'https://example.com/h', events: ['project.created'] },
      { requestId: randomUUID(), idempotencyKey: randomUUID() },
    );
    expect(refused).toMatchObject({ ok: false, problem: { code: 'TOKEN_MISSING_ABILITY' } });

    const ownerPrincipal = memberPrincipal({ teamId: team.id, memberId: owner.id, abilities: ABILITY_VALUES });
    const key = randomUUID();
    const input = { name: 'Mine', url: 'https://example.com/hooks', events: ['project.created'] };
    const first = await runOperation<{ id: string; secret: string }>(
      runtime,
      ownerPrincipal,
      'createWebhookEndpoint',
      input,
      { requestId: randomUUID(), idempotencyKey: key },
    );
    const second = await runOperation<{ id: string; secret: string }>(
      runtime,
      ownerPrincipal,
      'createWebhookEndpoint',
      input,
      { requestId: randomUUID(), idempotencyKey: key },
    );
    expect(first.ok && second.ok).toBe(true);
    if (!first.ok || !second.ok) return;
    expect(second).toMatchObject({ replayed: true, result: { id: first.result.id, secret: first.result.secret } });
    const activity = await listActivity(runtime.store, team.id, { limit: 100, member_id: owner.id });
    // Both submits are logged (as REST logs a replayed write); only one endpoint exists.
    const entry = expect.objectContaining({
      surface: 'dashboard',
      member_id: owner.id,
      token_id: null,
      outcome: 'ok',
      operation: 'createWebhookEndpoint',
    });
    expect(activity.data).toEqual([entry, entry]);
    const endpoints = await runOperation<{ data: unknown[] }>(
      runtime,
      ownerPrincipal,
      'listWebhookEndpoints',
      {},
      { requestId: randomUUID() },
    );
    expect(endpoints.ok && endpoints.result.data).toHaveLength(1);
    const viewerActivity = await listActivity(runtime.store, team.id, { limit: 100, member_id: invited.id });
    expect(viewerActivity.data).toEqual([
      expect.objectContaining({ operation: 'createWebhookEndpoint', outcome: 'TOKEN_MISSING_ABILITY', status: 403 }),
    ]);
  });

  it('is refused BILLING_LOCKED on a write while the team is locked (D20), as on REST and MCP; reads and billing still run', async () => {
    const clock = testClock();
    const runtime = await createTestRuntime({ clock });
    const { team } = await seedTeam(runtime.store, clock, undefined, 'free');
    const owner = await ensureTeamOwner(runtime, team.id, {
      email: `owner-${randomUUID()}@example.com`,
      name: 'Owner',
    });
    const ownerPrincipal = memberPrincipal({ teamId: team.id, memberId: owner.id, abilities: ABILITY_VALUES });
    await lockTeam(runtime, team.id);
    const refused = await runOperation(
      runtime,
      ownerPrincipal,
      'createProject',
      { name: 'While locked', platform_type: 'telegram' },
      { requestId: randomUUID(), idempotencyKey: randomUUID() },
    );
    expect(refused).toMatchObject({ ok: false, problem: { code: 'BILLING_LOCKED', status: 402 } });
    const projects = await runOperation<{ data: Array<{ name: string }> }>(
      runtime,
      ownerPrincipal,
      'listProjects',
      {},
      { requestId: randomUUID() },
    );
    expect(projects.ok && projects.result.data.map((project) => project.name)).not.toContain('While locked');
    const billing = await runOperation<{ status: string }>(
      runtime,
      ownerPrincipal,
      'getBilling',
      {},
      { requestId: randomUUID() },
    );
    expect(billing).toMatchObject({ ok: true, result: { status: 'locked' } });
    const tier = await runOperation<{ status: string; tier: string }>(
      runtime,
      ownerPrincipal,
      'changeBillingTier',
      { tier: 'business' },
      { requestId: randomUUID(), idempotencyKey: randomUUID() },
    );
    expect(tier).toMatchObject({ ok: true, result: { status: 'locked', tier: 'business' } });
    const activity = await listActivity(runtime.store, team.id, { limit: 100, member_id: owner.id });
    expect(activity.data.map((entry) => [entry.operation, entry.outcome, entry.status])).toEqual([
      ['changeBillingTier', 'ok', 200],
      ['createProject', 'BILLING_LOCKED', 402],
    ]);
  });

  it('owns the endpoints it creates: events fan out while the member holds their abilities, and stop once the member is removed (D6)', async () => {
    const { runtime, team, principal } = await world();
    const invited = await inviteTeamMember(runtime, principal, {
      email: `d-${randomUUID()}@example.com`,
      name: 'Dev',
      role_ids: [BUILT_IN_ROLE_IDS.developer],
    });
    await acceptTeamInvitation(runtime, invited.invitation_token);
    const developer = memberPrincipal({
      teamId: team.id,
      memberId: invited.id,
      abilities: ['webhook-endpoint:manage', 'project:view'],
    });
    const endpoint = await runOperation<{ id: string }>(
      runtime,
      developer,
      'createWebhookEndpoint',
      { name: 'Dev hook', url: 'https://example.com/dev', events: ['project.created'] },
      { requestId: randomUUID() },
    );
    expect(endpoint.ok).toBe(true);
    const event = (id: string): StoredEvent => ({
      id,
      type: 'project.created',
      created_at: new Date(runtime.clock.nowMs()).toISOString(),
      api_version: '2026-05-01',
      project_id: randomUUID(),
      team_id: team.id,
      data: {},
    });
    const eventItem = async (stored: StoredEvent) =>
      runtime.store.put({ Item: { ...keys.event(team.id, stored.id), ...stored } });
    const one = event(`evt_01M83V6B6QHXMQY54Y2NJVKK3${Math.floor(Math.random() * 9)}`);
    await eventItem(one);
    expect(await fanOutEvent(runtime, one)).toBe(1);
    await removeTeamMember(runtime, principal, invited.id);
    const two = event('evt_01M83V6B6QHXMQY54Y2NJVKK3Z');
    await eventItem(two);
    expect(await fanOutEvent(runtime, two)).toBe(0);
    const deliveries = await listDeliveries(runtime, principal, { limit: 10 });
    expect(deliveries.data.map((delivery) => delivery.event_id)).toEqual([one.id]);
  });
});
