/**
 * Signing in to the dashboard runs through the pipeline (DESIGN D21, D35): a sign-in link is `signInWithLink`, a
 * passkey's registration `registerPasskey` and its sign-in `signInWithPasskey`, the operator's link `createSignInLink`.
 * Each writes one activity entry in the member's team, a refusal included once the credential names its team; each
 * works while the team is locked (D20); the pages before sign-in count in the public pages' per-IP bucket (D4).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { operatorPrincipal } from '../../shared/auth/operator.js';
import { handleDashboardRequest } from '../../shared/dashboard/router.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { BUILT_IN_ROLE_IDS } from '../../shared/domain/roles/built-in.js';
import { removeTeamMember } from '../../shared/domain/team-members/changes.js';
import { acceptTeamInvitation, inviteTeamMember } from '../../shared/domain/team-members/invitations.js';
import {
  SIGN_IN_LINK_LIFETIME_MS,
  createSession,
  createSignInLink,
  findSession,
} from '../../shared/domain/team-members/sessions.js';
import { RATE_LIMITS } from '../../shared/limits/rate-limit.js';
import { lockTeam } from '../support/billing.js';
import { dashboardEvent, runAnyOperation } from '../support/calls.js';
import { world } from '../support/fixtures/dashboard.js';
import { answerRegistration, answerSignIn } from '../support/passkey-authenticator.js';

/** The origin `dashboardEvent` requests come from (its Host header, plain HTTP locally). */
const ORIGIN = 'http://localhost:3000';

type Runtime = Awaited<ReturnType<typeof world>>['runtime'];

/** The team's entries of `operation` (oldest first) as [surface, member, outcome]. */
async function entriesOf(runtime: Runtime, teamId: string, operation: string) {
  const page = await listActivity(runtime.store, teamId, { limit: 100, operation });
  return page.data.reverse().map(({ surface, member_id, outcome }) => [surface, member_id, outcome]);
}

/** A JSON POST to the dashboard, with the session's cookie and CSRF header when given, from `ip`. */
function postJson(
  runtime: Runtime,
  path: string,
  body: unknown,
  session?: { cookie: string; csrf: string },
  ip = '198.51.100.7',
) {
  const event = dashboardEvent('POST', path, {
    form: JSON.stringify(body),
    cookie: session?.cookie,
    headers: { 'content-type': 'application/json', ...(session ? { 'x-csrf-token': session.csrf } : {}) },
  }) as { requestContext: { http: Record<string, string> } };
  event.requestContext.http.sourceIp = ip;
  return handleDashboardRequest(runtime, event as never);
}

/** Uses a sign-in link's path as a browser does: opens its page, then posts its form with the pre-session token. */
async function useLink(runtime: Runtime, path: string) {
  const page = await handleDashboardRequest(runtime, dashboardEvent('GET', path));
  const presession = page.cookies!.find((cookie) => cookie.startsWith('dashboard_presession='))!.split(';')[0];
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1];
  const token = new URL(path, ORIGIN).searchParams.get('token')!;
  return handleDashboardRequest(runtime, {
    ...(dashboardEvent('POST', '/dashboard/sign-in/link', { form: { token, csrf_token: csrf } }) as object),
    cookies: [presession],
  } as never);
}

/** Registers a passkey for the session of `cookie` through the dashboard's two JSON requests. */
async function registerPasskey(runtime: Runtime, session: { cookie: string; csrf: string }) {
  const started = JSON.parse((await postJson(runtime, '/dashboard/passkeys/registration-options', {}, session)).body);
  const { passkey, response } = answerRegistration(started.options, ORIGIN);
  const answer = await postJson(
    runtime,
    '/dashboard/passkeys/register',
    { challenge_id: started.challenge_id, response },
    session,
  );
  return { passkey, answer };
}

/** Signs in with `passkey` through the dashboard's two JSON requests; returns the body sent and the answer. */
async function signInWithPasskey(runtime: Runtime, passkey: Parameters<typeof answerSignIn>[0]) {
  const started = JSON.parse((await postJson(runtime, '/dashboard/sign-in/passkey-options', {})).body);
  const body = { challenge_id: started.challenge_id, response: answerSignIn(passkey, started.options, ORIGIN) };
  return { body, answer: await postJson(runtime, '/dashboard/sign-in/passkey', body) };
}

describe('dashboard sign-in through the pipeline', () => {
  it('a link is createSignInLink (operator) and signInWithLink: one entry each, an expired link refused in the member’s log, a used or unknown one in none', async () => {
    const { clock, runtime, team, owner } = await world('free');
    await lockTeam(runtime, team.id);
    const made = await runAnyOperation<{ path: string }>(
      runtime,
      await operatorPrincipal(runtime.store, team.id),
      'createSignInLink',
      { email: owner.email },
      { requestId: randomUUID(), surface: 'operator' },
    );
    expect(made.ok).toBe(true);
    const { path } = (made as { result: { path: string } }).result;

    const signedIn = await useLink(runtime, path);
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.headers.Location).toBe('/dashboard/passkeys/new');
    const cookie = /^dashboard_session=([^;]+)/.exec(signedIn.cookies![0])![1];
    expect(await findSession(runtime.store, runtime.clock, cookie)).toMatchObject({
      member_id: owner.id,
      state: 'registration',
      method: 'link',
    });
    expect((await useLink(runtime, path)).statusCode).toBe(404);
    const late = await createSignInLink(runtime.store, runtime.clock, team.id, owner.email);
    clock.advance(SIGN_IN_LINK_LIFETIME_MS + 1);
    expect((await useLink(runtime, late.path)).statusCode).toBe(404);
    expect(
      (await useLink(runtime, `/dashboard/sign-in/link?token=sil_${'0'.repeat(26)}_${'a'.repeat(43)}`)).statusCode,
    ).toBe(404);

    expect(await entriesOf(runtime, team.id, 'createSignInLink')).toEqual([['operator', null, 'ok']]);
    expect(await entriesOf(runtime, team.id, 'signInWithLink')).toEqual([
      ['dashboard', owner.id, 'ok'],
      ['dashboard', owner.id, 'NOT_FOUND'],
    ]);
  });

  it('a passkey registers as registerPasskey and signs in as signInWithPasskey while the team is locked; a replayed assertion and a removed member’s passkey sign nobody in', async () => {
    const { runtime, team, owner, principal } = await world('free');
    await lockTeam(runtime, team.id);
    const { session, cookieValue } = await createSession(runtime.store, runtime.clock, {
      teamId: team.id,
      memberId: owner.id,
      state: 'registration',
      method: 'link',
    });
    const { passkey, answer: registered } = await registerPasskey(runtime, {
      cookie: cookieValue,
      csrf: session.csrf_token,
    });
    expect(registered.statusCode).toBe(201);
    expect(await findSession(runtime.store, runtime.clock, cookieValue)).toMatchObject({ state: 'active' });

    const { body, answer } = await signInWithPasskey(runtime, passkey);
    expect(answer.statusCode).toBe(200);
    const cookie = /^dashboard_session=([^;]+)/.exec(answer.cookies![0])![1];
    expect(await findSession(runtime.store, runtime.clock, cookie)).toMatchObject({
      member_id: owner.id,
      state: 'active',
      method: 'passkey',
    });
    const replayed = await postJson(runtime, '/dashboard/sign-in/passkey', body);
    expect(replayed.statusCode).toBe(401);
    expect(JSON.parse(replayed.body).code).toBe('AUTHENTICATION_REQUIRED');

    // A member who registered a passkey and was removed: the refusal is in their team's log.
    const invited = await inviteTeamMember(runtime, principal, {
      email: `m-${randomUUID()}@example.com`,
      name: 'M',
      role_ids: [BUILT_IN_ROLE_IDS.viewer],
    });
    await acceptTeamInvitation(runtime, invited.invitation_token);
    const theirs = await createSession(runtime.store, runtime.clock, {
      teamId: team.id,
      memberId: invited.id,
      state: 'registration',
      method: 'link',
    });
    const { passkey: removedKey } = await registerPasskey(runtime, {
      cookie: theirs.cookieValue,
      csrf: theirs.session.csrf_token,
    });
    await removeTeamMember(runtime, principal, invited.id);
    expect((await signInWithPasskey(runtime, removedKey)).answer.statusCode).toBe(401);

    expect(await entriesOf(runtime, team.id, 'registerPasskey')).toEqual([
      ['dashboard', owner.id, 'ok'],
      ['dashboard', invited.id, 'ok'],
    ]);
    expect(await entriesOf(runtime, team.id, 'signInWithPasskey')).toEqual([
      ['dashboard', owner.id, 'ok'],
      ['dashboard', invited.id, 'AUTHENTICATION_REQUIRED'],
    ]);
  });

  it('a passkey answer without its challenge is VALIDATION_FAILED, and changes nothing', async () => {
    const { runtime, team } = await world();
    const answer = await postJson(runtime, '/dashboard/sign-in/passkey', { response: {} });
    expect(answer.statusCode).toBe(422);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(answer.cookies ?? []).toEqual([]);
    expect(await entriesOf(runtime, team.id, 'signInWithPasskey')).toEqual([]);
  });

  it('the pages before sign-in count in the public pages’ per-IP bucket: past it, 429 for that IP only (a page for a browser)', async () => {
    const { runtime } = await world();
    const { limit } = RATE_LIMITS['public-pages'];
    const ask = (ip: string) => postJson(runtime, '/dashboard/sign-in/passkey-options', {}, undefined, ip);
    for (let sent = 0; sent < limit; sent++) expect((await ask('203.0.113.9')).statusCode).toBe(200);
    const refused = await ask('203.0.113.9');
    expect(refused.statusCode).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'RATE_LIMITED' });
    expect(Number(refused.headers['Retry-After'])).toBeGreaterThan(0);
    // A browser's page load past the limit gets a page saying so, not a problem document.
    const page = await handleDashboardRequest(runtime, {
      ...(dashboardEvent('GET', '/dashboard/sign-in', { headers: { accept: 'text/html,*/*;q=0.8' } }) as {
        requestContext: object;
      }),
      requestContext: { http: { method: 'GET', path: '/dashboard/sign-in', sourceIp: '203.0.113.9' } },
    } as never);
    expect(page.statusCode).toBe(429);
    expect(page.headers['Content-Type']).toMatch(/^text\/html/);
    expect(page.body).toContain('Too many requests');
    expect(Number(page.headers['Retry-After'])).toBeGreaterThan(0);
    expect((await ask('203.0.113.10')).statusCode).toBe(200);
  });
});
