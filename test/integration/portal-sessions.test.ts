/**
 * Subscriber portal sign-in (DESIGN D27): `POST /v1/subscribers/{id}/portal-sessions` makes a one-time link
 * (30 minutes, single use, stored only as its SHA-256), using it starts a portal session (1 hour idle,
 * stored only as its SHA-256), and the session acts as a subscriber principal. An unknown, used, expired or
 * other project's link gets one answer; two concurrent uses of one link make one session. Against DynamoDB
 * Local, with the injected clock.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { runAnyOperation, rest } from '../support/calls.js';
import {
  PORTAL_LINK_LIFETIME_MS,
  PORTAL_SESSION_IDLE_MS,
  consumePortalLink,
  createPortalLink,
  endPortalSession,
  findPortalSession,
  subscriberPrincipal,
} from '../../shared/domain/portal-sessions/links.js';
import { ProblemError } from '../../shared/errors.js';
import { expectRestProblem, scanTable } from '../support/guarantees.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;
let subscriberId: string;

const ok = async (method: string, path: string, body?: unknown, status = 200, token = team.token) => {
  const reply = await rest(runtime, {
    method,
    path,
    token,
    body,
    headers: method === 'GET' ? {} : { 'Idempotency-Key': randomUUID() },
  });
  expect(reply.status, reply.text).toBe(status);
  return reply.json;
};
const tokenOf = (url: string) => new URL(url, 'https://relative.invalid').searchParams.get('token')!;
/** The code of the problem `promise` rejects with. */
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: unknown) => (error instanceof ProblemError ? error.code : String(error)),
  );

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  runtime.integrations = {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: 'http://127.0.0.1:9',
    stripeApiBaseUrl: 'http://127.0.0.1:9',
    publicBaseUrl: 'https://members.example',
    retry: { retries: 0, minTimeoutMs: 0 },
  };
  team = await seedTeam(runtime.store, clock);
  projectId = (await ok('POST', '/v1/projects', { name: 'Readers', platform_type: 'telegram' }, 201)).id;
  subscriberId = (
    await ok('POST', `/v1/projects/${projectId}/subscribers`, { display_name: 'Ada', consent: false }, 201)
  ).id;
});

describe('the portal-session operation', () => {
  it('answers 201 with a one-time link under the public base URL, valid 30 minutes', async () => {
    const reply = await ok('POST', `/v1/subscribers/${subscriberId}/portal-sessions`, undefined, 201);
    expect(Object.keys(reply).sort()).toEqual(['expires_at', 'url']);
    expect(reply.url).toMatch(
      new RegExp(`^https://members\\.example/portal/${projectId}/sign-in\\?token=ppl_[0-9A-Za-z]+$`),
    );
    expect(Date.parse(reply.expires_at)).toBe(clock.nowMs() + PORTAL_LINK_LIFETIME_MS);
    const { session } = await consumePortalLink(runtime, projectId, tokenOf(reply.url));
    expect(session).toMatchObject({ team_id: team.team.id, project_id: projectId, subscriber_id: subscriberId });
  });

  it('answers 404 for another team\u2019s subscriber, and a relative link without a public base URL', async () => {
    const other = await seedTeam(runtime.store, clock);
    expectRestProblem(
      await rest(runtime, {
        method: 'POST',
        path: `/v1/subscribers/${subscriberId}/portal-sessions`,
        token: other.token,
      }),
      'NOT_FOUND',
    );
    runtime.integrations = { ...runtime.integrations!, publicBaseUrl: undefined };
    const link = await createPortalLink(runtime, team.team.id, projectId, subscriberId);
    expect(link.url).toBe(link.path);
    expect(link.path).toMatch(new RegExp(`^/portal/${projectId}/sign-in\\?token=ppl_`));
    expect(await rejection(createPortalLink(runtime, team.team.id, projectId, randomUUID()))).toBe('NOT_FOUND');
  });
});

describe('portal links', () => {
  it('work once; a used, unknown, expired or other project\u2019s link gets the same NOT_FOUND', async () => {
    const link = await createPortalLink(runtime, team.team.id, projectId, subscriberId);
    const token = tokenOf(link.url);
    const otherProject = (await ok('POST', '/v1/projects', { name: 'Other', platform_type: 'telegram' }, 201)).id;
    const refusals = [
      await consumePortalLink(runtime, otherProject, token).catch((error: ProblemError) => error.detail),
    ];
    // The other project's refusal did not spend the link.
    expect((await consumePortalLink(runtime, projectId, token)).session.subscriber_id).toBe(subscriberId);
    refusals.push(await consumePortalLink(runtime, projectId, token).catch((error: ProblemError) => error.detail));
    refusals.push(
      await consumePortalLink(runtime, projectId, `ppl_${'x'.repeat(44)}`).catch((error: ProblemError) => error.detail),
    );
    refusals.push(await consumePortalLink(runtime, projectId, 'garbage').catch((error: ProblemError) => error.detail));
    const expiring = tokenOf((await createPortalLink(runtime, team.team.id, projectId, subscriberId)).url);
    clock.advance(PORTAL_LINK_LIFETIME_MS);
    refusals.push(await consumePortalLink(runtime, projectId, expiring).catch((error: ProblemError) => error.detail));
    expect(refusals).toHaveLength(5);
    expect(new Set(refusals).size).toBe(1);
    expect(refusals[0]).toContain('cannot be used');
  });

  it('make one session when used twice at once', async () => {
    const token = tokenOf((await createPortalLink(runtime, team.team.id, projectId, subscriberId)).url);
    const outcomes = await Promise.allSettled([
      consumePortalLink(runtime, projectId, token),
      consumePortalLink(runtime, projectId, token),
      consumePortalLink(runtime, projectId, token),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    for (const outcome of outcomes)
      if (outcome.status === 'rejected') expect((outcome.reason as ProblemError).code).toBe('NOT_FOUND');
    const sessions = (await scanTable(runtime.store)).filter((item) => item.entity === 'portal_session');
    expect(sessions).toHaveLength(1);
  });

  it('and sessions are stored only as hashes: the raw link token and cookie never appear in the table', async () => {
    const token = tokenOf((await createPortalLink(runtime, team.team.id, projectId, subscriberId)).url);
    const secretOf = (credential: string) => credential.slice(4);
    expect(JSON.stringify(await scanTable(runtime.store))).not.toContain(secretOf(token));
    const { cookieValue } = await consumePortalLink(runtime, projectId, token);
    const everything = JSON.stringify(await scanTable(runtime.store));
    for (const secret of [secretOf(token), secretOf(cookieValue)]) expect(everything).not.toContain(secret);
  });
});

describe('portal sessions', () => {
  it('end after an hour without a request, live on while used, and end at sign-out', async () => {
    const { cookieValue, session } = await consumePortalLink(
      runtime,
      projectId,
      tokenOf((await createPortalLink(runtime, team.team.id, projectId, subscriberId)).url),
    );
    expect(session.csrf_token).toMatch(/^[A-Za-z0-9_-]{32}$/);
    clock.advance(PORTAL_SESSION_IDLE_MS - 60_000);
    expect((await findPortalSession(runtime, projectId, cookieValue))?.id).toBe(session.id);
    clock.advance(PORTAL_SESSION_IDLE_MS - 60_000);
    expect((await findPortalSession(runtime, projectId, cookieValue))?.id).toBe(session.id);
    expect(await findPortalSession(runtime, randomUUID(), cookieValue)).toBeNull();
    expect(await findPortalSession(runtime, projectId, 'pps_forged')).toBeNull();
    expect(await findPortalSession(runtime, projectId, undefined)).toBeNull();
    clock.advance(PORTAL_SESSION_IDLE_MS + 1);
    expect(await findPortalSession(runtime, projectId, cookieValue)).toBeNull();

    const second = await consumePortalLink(
      runtime,
      projectId,
      tokenOf((await createPortalLink(runtime, team.team.id, projectId, subscriberId)).url),
    );
    expect(await findPortalSession(runtime, projectId, second.cookieValue)).not.toBeNull();
    await endPortalSession(runtime, second.cookieValue);
    expect(await findPortalSession(runtime, projectId, second.cookieValue)).toBeNull();
    await endPortalSession(runtime, second.cookieValue);
  });

  it('act as the subscriber: its own data, activity on the portal surface naming no token or member', async () => {
    const { session } = await consumePortalLink(
      runtime,
      projectId,
      tokenOf((await createPortalLink(runtime, team.team.id, projectId, subscriberId)).url),
    );
    const principal = subscriberPrincipal(session);
    expect(principal).toMatchObject({
      tokenId: `subscriber:${subscriberId}`,
      teamId: team.team.id,
      subscriberId,
      projectIds: [projectId],
    });
    const read = await runAnyOperation<{ id: string }>(
      runtime,
      principal,
      'getSubscriber',
      { id: subscriberId },
      { requestId: 'portal-read' },
    );
    expect(read.ok && read.result.id).toBe(subscriberId);
    const refused = await runAnyOperation(
      runtime,
      principal,
      'pauseSubscription',
      { id: randomUUID() },
      { requestId: 'portal-refused', surface: 'portal', idempotencyKey: randomUUID() },
    );
    expect(!refused.ok && refused.problem.code).toBe('TOKEN_MISSING_ABILITY');
    const activity = (await ok('GET', '/v1/activity', undefined, 200)).data as {
      operation: string;
      surface: string;
      token_id: string | null;
      member_id: string | null;
    }[];
    expect(activity.find((entry) => entry.surface === 'portal')).toMatchObject({
      operation: 'pauseSubscription',
      token_id: null,
      member_id: null,
    });
  });
});
