/**
 * OAuth consent, the token endpoint and invitation acceptance run through the one pipeline (DESIGN D4, D20, D30, D35):
 * consent (approve, deny) writes one activity entry with surface `dashboard` and replays with its idempotency key;
 * the token endpoint's issuance writes its entry (surface `rest`, naming the access token) and its refusal too;
 * consent and issuance are sign-in actions, exempt from BILLING_LOCKED; accepting an invitation on the dashboard
 * counts in the same per-IP bucket as REST and writes its entry. Against DynamoDB Local.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { handleDashboardRequest } from '../../shared/dashboard/router.js';
import { createSession } from '../../shared/domain/team-members/sessions.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import type { ActivityEntry } from '../../shared/domain/activity/schema.js';
import { BUILT_IN_ROLE_IDS } from '../../shared/domain/roles/built-in.js';
import { ensureTeamOwner } from '../../shared/domain/team-members/changes.js';
import { inviteTeamMember } from '../../shared/domain/team-members/invitations.js';
import { handleToolServerApiRequest } from '../../shared/local/tool-server-api.js';
import { RATE_LIMITS } from '../../shared/limits/rate-limit.js';
import { lockTeam } from '../support/billing.js';
import { rest } from '../support/calls.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';

const ORIGIN = 'https://mcp.test';
const REDIRECT = 'http://127.0.0.1:33418/callback';

let clock: ManualClock;
let runtime: TestRuntime;
let nextIp = 0;
/** A client IP of its own (documentation range 198.18.0.0/15), so flows never share a per-IP limit. */
const freshIp = () => `198.18.${Math.floor(++nextIp / 250)}.${nextIp % 250}`;

beforeAll(async () => {
  clock = testClock({ secondsIntoMinute: 1 });
  runtime = await createTestRuntime({ clock });
});

/** A team on the free tier (so it can be locked) and its owner. */
async function teamWithOwner() {
  const seeded = await seedTeam(runtime.store, clock, undefined, 'free');
  const owner = await ensureTeamOwner(runtime, seeded.team.id, { email: `o-${randomUUID()}@example.com`, name: 'O' });
  return { seeded, teamId: seeded.team.id, ownerId: owner.id };
}

function dashboard(
  method: string,
  pathAndQuery: string,
  options: { cookies?: string[]; form?: Record<string, string>; ip?: string },
) {
  const [path, query] = pathAndQuery.split('?');
  return handleDashboardRequest(runtime, {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: query ?? '',
    cookies: options.cookies,
    headers: { host: 'mcp.test', ...(options.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    requestContext: { http: { method, path, sourceIp: options.ip ?? freshIp() }, requestId: randomUUID() },
    body: options.form ? new URLSearchParams(options.form).toString() : undefined,
    isBase64Encoded: false,
  } as never);
}

const call = (path: string, init: RequestInit & { ip: string }) =>
  handleToolServerApiRequest(runtime, new Request(`${ORIGIN}${path}`, init), { clientIp: init.ip });

/** The team's activity entries of `operation`, oldest first. */
async function entriesOf(teamId: string, operation: string): Promise<ActivityEntry[]> {
  return (await listActivity(runtime.store, teamId, { limit: 100, operation })).data.reverse();
}

/** A registered client's pending authorization request, and the owner's consent page (its CSRF token). */
async function consentFor(teamId: string, memberId: string) {
  const ip = freshIp();
  const client = await (
    await call('/oauth/register', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: 'Assistant', redirect_uris: [REDIRECT] }),
      ip,
    })
  ).json();
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'xyz',
    resource: `${ORIGIN}/mcp`,
  });
  const consent = new URL((await call(`/oauth/authorize?${query}`, { ip })).headers.get('location')!);
  const session = await createSession(runtime.store, clock, { teamId, memberId, state: 'active', method: 'passkey' });
  const cookies = [`dashboard_session=${session.cookieValue}`];
  const page = await dashboard('GET', `${consent.pathname}${consent.search}`, { cookies });
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1];
  const answer = (decision: 'allow' | 'deny', key: string) =>
    dashboard('POST', '/dashboard/oauth/authorize', {
      cookies,
      form: { csrf_token: csrf, request: consent.searchParams.get('request')!, decision, idempotency_key: key },
    });
  return { client, verifier, ip, answer };
}

describe('OAuth consent', () => {
  it('Allow is approveOAuthConsent: one entry (dashboard, the member), a double submit replays the same code, works while locked', async () => {
    const { teamId, ownerId } = await teamWithOwner();
    await lockTeam(runtime, teamId);
    const { answer } = await consentFor(teamId, ownerId);
    const key = randomUUID();
    const first = await answer('allow', key);
    expect(first.statusCode, first.body).toBe(303);
    expect(new URL(first.headers.Location).searchParams.get('code')).toMatch(/^oac_/);
    expect(await entriesOf(teamId, 'approveOAuthConsent')).toMatchObject([
      { surface: 'dashboard', outcome: 'ok', member_id: ownerId, token_id: null },
    ]);
    const again = await answer('allow', key);
    expect(again.headers.Location).toBe(first.headers.Location);
    // Another key finds the request answered.
    expect((await answer('allow', randomUUID())).statusCode).toBe(404);
    expect((await entriesOf(teamId, 'approveOAuthConsent')).map((entry) => entry.outcome)).toEqual([
      'ok',
      'ok',
      'NOT_FOUND',
    ]);
  });

  it('Deny is denyOAuthConsent: one entry, replays with its key', async () => {
    const { teamId, ownerId } = await teamWithOwner();
    const { answer } = await consentFor(teamId, ownerId);
    const key = randomUUID();
    const denied = await answer('deny', key);
    expect(new URL(denied.headers.Location).searchParams.get('error')).toBe('access_denied');
    expect((await answer('deny', key)).headers.Location).toBe(denied.headers.Location);
    expect(await entriesOf(teamId, 'denyOAuthConsent')).toMatchObject([
      { surface: 'dashboard', outcome: 'ok', member_id: ownerId },
      { surface: 'dashboard', outcome: 'ok', member_id: ownerId },
    ]);
  });
});

describe('the token endpoint', () => {
  it('issuance is oauthAuthorizationCodeGrant: an entry naming the access token, a refused reuse too, BILLING_LOCKED while locked', async () => {
    const { teamId, ownerId } = await teamWithOwner();
    const exchange = async (flow: Awaited<ReturnType<typeof consentFor>>, code: string) => {
      const response = await call('/oauth/token', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          client_id: flow.client.client_id,
          redirect_uri: REDIRECT,
          code_verifier: flow.verifier,
        }).toString(),
        ip: flow.ip,
      });
      return { status: response.status, body: await response.json() };
    };
    const codeOf = async (flow: Awaited<ReturnType<typeof consentFor>>) =>
      new URL((await flow.answer('allow', randomUUID())).headers.Location).searchParams.get('code')!;
    const flow = await consentFor(teamId, ownerId);
    const code = await codeOf(flow);
    const issued = await exchange(flow, code);
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    const tokenId = /^svc_live_([0-9A-Z]{26})_/.exec(issued.body.access_token)![1];
    expect(await exchange(flow, code)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await entriesOf(teamId, 'oauthAuthorizationCodeGrant')).toMatchObject([
      { surface: 'rest', outcome: 'ok', status: 200, token_id: tokenId },
      { surface: 'rest', outcome: 'VALIDATION_FAILED', token_id: null },
    ]);
    const refreshed = await call('/oauth/token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: issued.body.refresh_token,
        client_id: flow.client.client_id,
      }).toString(),
      ip: flow.ip,
    });
    // The reused code revoked the grant (RFC 6749 §4.1.2): the refresh is refused, and logged.
    expect(refreshed.status).toBe(400);
    expect(await entriesOf(teamId, 'oauthRefreshTokenGrant')).toMatchObject([
      { surface: 'rest', outcome: 'VALIDATION_FAILED' },
    ]);

    // Issuing a token is a creator write (D20): a locked team gets none, and the refusal is logged.
    const lockedFlow = await consentFor(teamId, ownerId);
    const lockedCode = await codeOf(lockedFlow);
    await lockTeam(runtime, teamId);
    expect(await exchange(lockedFlow, lockedCode)).toMatchObject({ status: 402 });
    expect((await entriesOf(teamId, 'oauthAuthorizationCodeGrant')).at(-1)).toMatchObject({
      surface: 'rest',
      outcome: 'BILLING_LOCKED',
      token_id: null,
    });
  });
});

describe('invitation acceptance', () => {
  const accept = (form: Record<string, string>, ip: string) =>
    dashboard('POST', '/dashboard/invitations/accept', {
      cookies: ['dashboard_presession=csrf-1'],
      form: { csrf_token: 'csrf-1', ...form },
      ip,
    });

  it('on the dashboard is acceptTeamInvitation: one entry (dashboard, the new member) in the team joined', async () => {
    const { seeded, teamId } = await teamWithOwner();
    const invited = await inviteTeamMember(runtime, seeded.principal, {
      email: `new-${randomUUID()}@example.com`,
      name: 'New',
      role_ids: [BUILT_IN_ROLE_IDS.viewer],
    });
    const accepted = await accept({ token: invited.invitation_token }, freshIp());
    expect(accepted.statusCode, accepted.body).toBe(303);
    expect(await entriesOf(teamId, 'acceptTeamInvitation')).toMatchObject([
      { surface: 'dashboard', outcome: 'ok', member_id: invited.id, token_id: null },
    ]);
  });

  it('on the dashboard counts in the same per-IP bucket as REST: the sixth try from one IP is refused', async () => {
    const ip = freshIp();
    const { limit } = RATE_LIMITS['rest-anonymous'];
    for (let index = 0; index < limit - 1; index++)
      expect((await accept({ token: `tmi_${randomUUID()}` }, ip)).statusCode).not.toBe(429);
    const viaRest = await rest(runtime, {
      method: 'POST',
      path: '/v1/team-invitations/accept',
      body: { token: `tmi_${randomUUID()}` },
      sourceIp: ip,
    });
    expect(viaRest.status).not.toBe(429);
    const refused = await accept({ token: `tmi_${randomUUID()}` }, ip);
    expect(refused.statusCode).toBe(429);
    expect(refused.body).toContain('Rate limit');
    expect((await accept({ token: `tmi_${randomUUID()}` }, freshIp())).statusCode).not.toBe(429);
  });
});
