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
import { runAnyOperation, dashboardEvent } from '../support/calls.js';
import {
  SESSION_IDLE_MS,
  SIGN_IN_LINK_LIFETIME_MS,
  consumeSignInLink,
  createSession,
  createSignInLink,
  findSession,
  listSessions,
} from '../../shared/domain/team-members/sessions.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { dashboardSessionStore } from '../../shared/store/dashboard-sessions.js';
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
import { world } from '../support/fixtures/dashboard.js';

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
    const revoke = (memberId: string) =>
      dashboardSessionStore.revoke(runtime.store, clock, { teamId: team.id, memberId, sessionId: first.session.id });
    await expect(revoke(randomUUID())).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await revoke(owner.id);
    expect(await findSession(runtime.store, clock, first.cookieValue)).toBeNull();
    expect(await findSession(runtime.store, clock, `${first.cookieValue.slice(0, -1)}x`)).toBeNull();

    const page = await handleDashboardRequest(
      runtime,
      dashboardEvent('GET', '/dashboard/webhooks', { cookie: first.cookieValue }),
    );
    expect(page.statusCode).toBe(303);
    // Back to the page after sign-in
    expect(page.headers.Location).toBe('/dashboard/sign-in?return_to=%2Fdashboard%2Fwebhooks');
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
    const refused = await runAnyOperation(
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
    const first = await runAnyOperation<{ id: string; secret: string }>(
      runtime,
      ownerPrincipal,
      'createWebhookEndpoint',
      input,
      { requestId: randomUUID(), idempotencyKey: key },
    );
    const second = await runAnyOperation<{ id: string; secret: string }>(
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
    const endpoints = await runAnyOperation<{ data: unknown[] }>(
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
    const refused = await runAnyOperation(
      runtime,
      ownerPrincipal,
      'createProject',
      { name: 'While locked', platform_type: 'telegram' },
      { requestId: randomUUID(), idempotencyKey: randomUUID() },
    );
    expect(refused).toMatchObject({ ok: false, problem: { code: 'BILLING_LOCKED', status: 402 } });
    const projects = await runAnyOperation<{ data: Array<{ name: string }> }>(
      runtime,
      ownerPrincipal,
      'listProjects',
      {},
      { requestId: randomUUID() },
    );
    expect(projects.ok && projects.result.data.map((project) => project.name)).not.toContain('While locked');
    const billing = await runAnyOperation<{ status: string }>(
      runtime,
      ownerPrincipal,
      'getBilling',
      {},
      { requestId: randomUUID() },
    );
    expect(billing).toMatchObject({ ok: true, result: { status: 'locked' } });
    const tier = await runAnyOperation<{ status: string; tier: string }>(
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
    const endpoint = await runAnyOperation<{ id: string }>(
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

describe('signing out through the pipeline', () => {
  it('signs out and revokes a session as `revokeDashboardSession`: logged for the member, also while the team is locked; another member’s session is NOT_FOUND', async () => {
    const clock = testClock();
    const runtime = await createTestRuntime({ clock });
    const { team } = await seedTeam(runtime.store, clock, undefined, 'free');
    const owner = await ensureTeamOwner(runtime, team.id, { email: `owner-${randomUUID()}@example.com`, name: 'O' });
    const open = () =>
      createSession(runtime.store, clock, { teamId: team.id, memberId: owner.id, state: 'active', method: 'passkey' });
    const [current, other] = [await open(), await open()];
    const post = (path: string) =>
      handleDashboardRequest(
        runtime,
        dashboardEvent('POST', path, {
          cookie: current.cookieValue,
          form: { csrf_token: current.session.csrf_token, idempotency_key: randomUUID() },
        }),
      );
    await lockTeam(runtime, team.id); // signing out is exempt from the lockdown (D20)

    const revoked = await post(`/dashboard/account/sessions/${other.session.id}/revoke`);
    expect(revoked.statusCode).toBe(303);
    expect(await findSession(runtime.store, clock, other.cookieValue)).toBeNull();
    const foreign = await post(`/dashboard/account/sessions/${randomUUID()}/revoke`);
    expect(foreign.statusCode).toBe(404);
    const signedOut = await post('/dashboard/sign-out');
    expect(signedOut.statusCode).toBe(303);
    expect(signedOut.headers.Location).toBe('/dashboard/sign-in?signed_out=1');
    expect(await findSession(runtime.store, clock, current.cookieValue)).toBeNull();

    const activity = await listActivity(runtime.store, team.id, { limit: 10, operation: 'revokeDashboardSession' });
    expect(
      activity.data.map(({ surface, member_id, token_id, outcome }) => [surface, member_id, token_id, outcome]),
    ).toEqual([
      ['dashboard', owner.id, null, 'ok'],
      ['dashboard', owner.id, null, 'NOT_FOUND'],
      ['dashboard', owner.id, null, 'ok'],
    ]);
  });
});
