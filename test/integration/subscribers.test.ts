/**
 * Subscribers (DESIGN D10, D14, D17, D22): create, read by id alone, list per project
 * (status, plan and e-mail prefix filters, paging, no contact data), update, export (NDJSON pages), and
 * ban / unban / kick through the platform adapter (`web`; failing adapters injected at the use case),
 * with the `member.*` events they emit read from the outbox and checked against their published JSON
 * Schema. Every operation over REST; the four subscriber tools over the tool server. Against DynamoDB
 * Local, with an injected clock.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { recordPlatformMembership } from '../../shared/domain/members/platform-updates.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { banSubscriber, kickSubscriber, unbanSubscriber } from '../../shared/domain/subscribers/moderation.js';
import { createSubscription } from '../../shared/domain/subscriptions/creation.js';
import { getSubscription } from '../../shared/domain/subscriptions/queries.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import type { PlatformAdapter } from '../../shared/platforms/platform-adapter.js';
import { webPlatformAdapter } from '../../shared/platforms/web.js';
import { domainSnapshot, expectRestProblem, expectToolProblem } from '../support/guarantees.js';
import { rest, tool } from '../support/calls.js';
import { TeamEventCursor } from '../support/events.js';
import { createTestRuntime, seedTeam, seedToken, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;
/** Events of the team already returned by {@link newEvents}. */
let eventCursor: TeamEventCursor;

/** The team's outbox events not returned before, oldest first, each checked against its published schema. */
function newEvents(): Promise<EventEnvelope[]> {
  return eventCursor.next();
}

const types = (events: EventEnvelope[]) => events.map((event) => event.type);
const call = (
  method: string,
  path: string,
  body?: unknown,
  token = team.token,
  extra: { headers?: Record<string, string>; query?: Record<string, string> } = {},
) => rest(runtime, { method, path, token, body, ...extra });
const ada = {
  display_name: 'Ada Lovelace',
  email: 'Ada@Example.com',
  phone: '+44 20 7946 0000',
  consent: true,
  platform_user_id: 'web-ada',
};
const createSubscriberOk = async (body: Record<string, unknown> = ada) => {
  const reply = await call('POST', `/v1/projects/${projectId}/subscribers`, body);
  expect(reply.status, reply.text).toBe(201);
  return reply.json;
};
const joined = (platformUserId: string, username: string | null = null) =>
  recordPlatformMembership(runtime, { teamId: team.team.id, projectId, platformUserId, change: 'joined', username });

/** An adapter whose every call fails with `reason` (or throws when `reason` is null). */
function failingAdapter(reason: string | null): PlatformAdapter {
  const fail = async () => {
    if (reason === null) throw new Error('socket hang up at internal-host-10.0.0.7');
    return { ok: false as const, reason };
  };
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

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  team = await seedTeam(runtime.store, clock);
  projectId = (await call('POST', '/v1/projects', { name: 'Site club', platform_type: 'web' })).json.id;
  eventCursor = new TeamEventCursor(runtime.store, team.team.id);
  await newEvents();
});

describe('create and read', () => {
  it('creates a subscriber over REST and reads it by id alone over REST and get_subscriber, with consented contact data', async () => {
    const subscriber = await createSubscriberOk();
    expect(subscriber).toEqual({
      id: expect.any(String),
      project_id: projectId,
      display_name: 'Ada Lovelace',
      platform_user_id: 'web-ada',
      email: 'Ada@Example.com',
      phone: '+44 20 7946 0000',
      consent: true,
      provider_customer_id: null,
      member_id: null,
      status: 'active',
      banned_at: null,
      created_at: subscriber.created_at,
      updated_at: subscriber.created_at,
    });
    expect((await call('GET', `/v1/subscribers/${subscriber.id}`)).json).toEqual(subscriber);
    const viaTool = await tool(runtime, team.principal, 'get_subscriber', { id: subscriber.id });
    expect(viaTool.isError).toBeFalsy();
    expect(viaTool.structuredContent).toEqual(subscriber);
    expect(types(await newEvents())).toEqual([]);
  });

  it('shows no e-mail or phone without consent, nor to a caller without project-user:view', async () => {
    const silent = await createSubscriberOk({ display_name: 'Quiet', email: 'quiet@example.com', phone: '+15550100' });
    expect(silent).not.toHaveProperty('email');
    expect(silent).not.toHaveProperty('phone');
    expect(silent.consent).toBe(false);
    const consented = await createSubscriberOk({ email: 'open@example.com', consent: true });
    const noView = await seedToken(runtime.store, clock, {
      teamId: team.team.id,
      abilities: ['project-user:update', 'project-user:view-any', 'mcp:full'],
    });
    const created = await call(
      'POST',
      `/v1/projects/${projectId}/subscribers`,
      { email: 'other@example.com', consent: true },
      noView.token,
    );
    expect(created.status).toBe(201);
    expect(created.json).not.toHaveProperty('email');
    expectRestProblem(
      await call('GET', `/v1/subscribers/${consented.id}`, undefined, noView.token),
      'TOKEN_MISSING_ABILITY',
    );
    // Consent given later shows the stored data.
    const updated = await call('POST', `/v1/subscribers/${silent.id}`, { consent: true });
    expect(updated.json).toMatchObject({ email: 'quiet@example.com', phone: '+15550100', consent: true });
  });

  it('refuses unknown fields, bad values and a platform user id another subscriber holds, writing nothing', async () => {
    await createSubscriberOk();
    const before = await domainSnapshot(runtime.store);
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscribers`, { display_name: 'X', card_number: '4242' }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscribers`, { email: 'not-an-email' }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscribers`, {
        display_name: 'Twin',
        platform_user_id: 'web-ada',
      }),
      'CONFLICT',
    );
    expectRestProblem(
      await call('POST', `/v1/projects/${randomUUID()}/subscribers`, { display_name: 'Lost' }),
      'NOT_FOUND',
    );
    expectRestProblem(await call('GET', `/v1/subscribers/${randomUUID()}`), 'NOT_FOUND');
    expectToolProblem(
      await tool(runtime, team.principal, 'get_subscriber', { id: randomUUID(), extra: 1 }),
      'VALIDATION_FAILED',
    );
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });

  it('keeps a project-scoped token to its project', async () => {
    const other = (await call('POST', '/v1/projects', { name: 'Other', platform_type: 'web' })).json.id;
    const subscriber = await createSubscriberOk();
    const scoped = await seedToken(runtime.store, clock, { teamId: team.team.id, projectIds: [other] });
    expectRestProblem(await call('GET', `/v1/subscribers/${subscriber.id}`, undefined, scoped.token), 'NOT_FOUND');
    expectToolProblem(await tool(runtime, scoped.principal, 'ban_subscriber', { id: subscriber.id }), 'NOT_FOUND');
    expectToolProblem(
      await tool(runtime, scoped.principal, 'list_subscribers', { project_id: projectId }),
      'NOT_FOUND',
    );
  });
});

describe('list and export', () => {
  it('lists without contact data over REST and list_subscribers, filtered by status, plan and e-mail prefix, paged', async () => {
    const a = await createSubscriberOk();
    const b = await createSubscriberOk({ display_name: 'Bob', email: 'bob@example.com', consent: true });
    const c = await createSubscriberOk({ display_name: 'Adam', email: 'adam@example.org' });
    const all = await call('GET', `/v1/projects/${projectId}/subscribers`);
    expect(all.status).toBe(200);
    expect(all.json.data.map((s: { id: string }) => s.id).sort()).toEqual([a.id, b.id, c.id].sort());
    for (const item of all.json.data) {
      expect(item).not.toHaveProperty('email');
      expect(item).not.toHaveProperty('phone');
    }
    const prefixed = await tool(runtime, team.principal, 'list_subscribers', {
      project_id: projectId,
      email_prefix: 'AD',
    });
    expect(prefixed.isError).toBeFalsy();
    expect((prefixed.structuredContent.data as { id: string }[]).map((s) => s.id).sort()).toEqual([a.id, c.id].sort());

    // The subscriptions use cases keep the subscriber's live plan counters in their transactions.
    const planId = (
      await createPlan(runtime, team.principal, projectId, {
        name: 'Gold',
        amount: 500,
        currency: 'USD',
        interval: 'month',
      })
    ).id;
    await createSubscription(runtime, team.principal, projectId, { subscriber_id: b.id, plan_id: planId });
    const byPlan = await call('GET', `/v1/projects/${projectId}/subscribers`, undefined, team.token, {
      query: { plan_id: planId },
    });
    expect(byPlan.json.data.map((s: { id: string }) => s.id)).toEqual([b.id]);

    await call('POST', `/v1/subscribers/${c.id}/ban`, {});
    const banned = await call('GET', `/v1/projects/${projectId}/subscribers`, undefined, team.token, {
      query: { status: 'banned' },
    });
    expect(banned.json.data.map((s: { id: string }) => s.id)).toEqual([c.id]);

    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call('GET', `/v1/projects/${projectId}/subscribers`, undefined, team.token, {
        query: { limit: '2', ...(cursor ? { cursor } : {}) },
      });
      expect(page.json.data.length).toBeLessThanOrEqual(2);
      ids.push(...page.json.data.map((s: { id: string }) => s.id));
      cursor = page.json.next_cursor ?? undefined;
    } while (cursor);
    expect(ids.sort()).toEqual([a.id, b.id, c.id].sort());

    expectRestProblem(
      await call('GET', `/v1/projects/${projectId}/subscribers`, undefined, team.token, { query: { search: 'x' } }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('GET', `/v1/projects/${projectId}/subscribers`, undefined, team.token, {
        query: { cursor: 'bm90LWEtY3Vyc29y' },
      }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(await call('GET', `/v1/projects/${randomUUID()}/subscribers`), 'NOT_FOUND');
  });

  it('exports NDJSON pages, with consented contact data only for callers holding project-user:view', async () => {
    const a = await createSubscriberOk();
    const b = await createSubscriberOk({ display_name: 'Bob', email: 'bob@example.com' });
    const c = await createSubscriberOk({ display_name: 'Cy', email: 'cy@example.com', consent: true });
    const lines: Record<string, unknown>[] = [];
    let cursor: string | undefined;
    do {
      const page = await call('GET', `/v1/projects/${projectId}/subscribers/export`, undefined, team.token, {
        query: { limit: '2', ...(cursor ? { cursor } : {}) },
      });
      expect(page.status, page.text).toBe(200);
      expect(page.json.lines === '' || page.json.lines.endsWith('\n')).toBe(true);
      const parsed = page.json.lines
        .split('\n')
        .filter(Boolean)
        .map((line: string) => JSON.parse(line));
      expect(parsed).toHaveLength(page.json.count);
      lines.push(...parsed);
      cursor = page.json.next_cursor ?? undefined;
    } while (cursor);
    const byId = new Map(lines.map((line) => [line.id, line]));
    expect([...byId.keys()].sort()).toEqual([a.id, b.id, c.id].sort());
    expect(byId.get(a.id)).toMatchObject({ email: 'Ada@Example.com' });
    expect(byId.get(b.id)).not.toHaveProperty('email');
    expect(byId.get(c.id)).toMatchObject({ email: 'cy@example.com' });

    const exportOnly = await seedToken(runtime.store, clock, {
      teamId: team.team.id,
      abilities: ['project-user:export'],
    });
    const blind = await call('GET', `/v1/projects/${projectId}/subscribers/export`, undefined, exportOnly.token);
    expect(blind.status).toBe(200);
    expect(blind.json.lines).not.toContain('@');
    expectRestProblem(
      await call('GET', `/v1/projects/${projectId}/subscribers/export`, undefined, team.token, {
        query: { limit: '5000' },
      }),
      'VALIDATION_FAILED',
    );
  });
});

describe('update', () => {
  it('changes name, contact data and consent; a request that changes nothing writes nothing', async () => {
    const subscriber = await createSubscriberOk();
    clock.advance(1_000);
    const updated = await call('POST', `/v1/subscribers/${subscriber.id}`, {
      display_name: 'Countess',
      email: null,
      provider_customer_id: 'cus_123',
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.json).toMatchObject({
      display_name: 'Countess',
      email: null,
      phone: '+44 20 7946 0000',
      provider_customer_id: 'cus_123',
    });
    expect(updated.json.updated_at).not.toBe(subscriber.updated_at);
    const prefixed = await call('GET', `/v1/projects/${projectId}/subscribers`, undefined, team.token, {
      query: { email_prefix: 'ada' },
    });
    expect(prefixed.json.data).toEqual([]);
    const before = await domainSnapshot(runtime.store);
    const same = await call('POST', `/v1/subscribers/${subscriber.id}`, { display_name: 'Countess' });
    expect(same.json).toEqual(updated.json);
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    expectRestProblem(await call('POST', `/v1/subscribers/${subscriber.id}`, { nickname: 'x' }), 'VALIDATION_FAILED');
    expectRestProblem(await call('POST', `/v1/subscribers/${randomUUID()}`, { display_name: 'x' }), 'NOT_FOUND');
    expect(types(await newEvents())).toEqual([]);
  });

  it('moves the platform user id: unlinks the old member, links the new one (member.updated each), refuses one held by another subscriber', async () => {
    const oldMember = await joined('web-ada', 'ada');
    const newMember = await joined('web-ada-2', 'ada2');
    await newEvents();
    const subscriber = await createSubscriberOk();
    expect(subscriber.member_id).toBe(oldMember!.id);
    const linkEvents = await newEvents();
    expect(types(linkEvents)).toEqual(['member.updated']);
    expect(linkEvents[0].data).toMatchObject({
      member: { id: oldMember!.id, subscriber_id: subscriber.id },
      subscriber: { id: subscriber.id, member_id: oldMember!.id },
    });

    const other = await createSubscriberOk({ display_name: 'Other', platform_user_id: 'web-other' });
    expectRestProblem(await call('POST', `/v1/subscribers/${other.id}`, { platform_user_id: 'web-ada' }), 'CONFLICT');

    const moved = await call('POST', `/v1/subscribers/${subscriber.id}`, { platform_user_id: 'web-ada-2' });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.json).toMatchObject({ platform_user_id: 'web-ada-2', member_id: newMember!.id });
    const events = await newEvents();
    expect(types(events)).toEqual(['member.updated', 'member.updated']);
    expect(events[0].data).toMatchObject({ member: { id: oldMember!.id, subscriber_id: null }, subscriber: null });
    expect(events[1].data).toMatchObject({ member: { id: newMember!.id, subscriber_id: subscriber.id } });
    expect((await call('GET', `/v1/members/${oldMember!.id}`)).json.subscriber_id).toBeNull();

    // The freed platform user id can be taken by another subscriber.
    const taken = await call('POST', `/v1/subscribers/${other.id}`, { platform_user_id: 'web-ada' });
    expect(taken.json).toMatchObject({ platform_user_id: 'web-ada', member_id: oldMember!.id });
    // A profile change of a subscriber with a member emits member.updated.
    await newEvents();
    await call('POST', `/v1/subscribers/${subscriber.id}`, { display_name: 'Ada L.' });
    expect(types(await newEvents())).toEqual(['member.updated']);
  });
});

describe('ban, unban and kick', () => {
  it('bans over ban_subscriber (member.banned), refuses a second ban, unbans over REST (member.unbanned)', async () => {
    const subscriber = await createSubscriberOk();
    clock.advance(1_000);
    const banned = await tool(runtime, team.principal, 'ban_subscriber', { id: subscriber.id, reason: 'spam' });
    expect(banned.isError, JSON.stringify(banned.structuredContent)).toBeFalsy();
    const result = banned.structuredContent as any;
    expect(result.subscriber).toMatchObject({ id: subscriber.id, status: 'banned', banned_at: expect.any(String) });
    // Never joined, but has a platform identity: the member is recorded as banned.
    expect(result.member).toMatchObject({
      platform_user_id: 'web-ada',
      subscriber_id: subscriber.id,
      status: 'banned',
      joined_at: null,
      platform_error: null,
    });
    expect(result.subscriber.member_id).toBe(result.member.id);
    const events = await newEvents();
    expect(types(events)).toEqual(['member.banned']);
    expect(events[0].project_id).toBe(projectId);
    expect(events[0].data).toEqual({ member: result.member, subscriber: result.subscriber, reason: 'spam' });

    expectToolProblem(await tool(runtime, team.principal, 'ban_subscriber', { id: subscriber.id }), 'CONFLICT');
    expectRestProblem(await call('POST', `/v1/subscribers/${subscriber.id}/kick`, {}), 'CONFLICT');

    const unbanned = await call('POST', `/v1/subscribers/${subscriber.id}/unban`);
    expect(unbanned.status, unbanned.text).toBe(200);
    expect(unbanned.json.subscriber).toMatchObject({ status: 'active', banned_at: null });
    expect(unbanned.json.member).toMatchObject({ status: 'left' });
    const after = await newEvents();
    expect(types(after)).toEqual(['member.unbanned']);
    expect(after[0].data).toEqual({ member: unbanned.json.member, subscriber: unbanned.json.subscriber });
    expectRestProblem(await call('POST', `/v1/subscribers/${subscriber.id}/unban`), 'CONFLICT');
  });

  it('bans a subscriber without a platform identity (member null) and replays a retried ban with the same Idempotency-Key', async () => {
    const subscriber = await createSubscriberOk({ display_name: 'Offline', email: 'offline@example.com' });
    const key = randomUUID();
    const first = await call('POST', `/v1/subscribers/${subscriber.id}/ban`, { reason: 'fraud' }, team.token, {
      headers: { 'Idempotency-Key': key },
    });
    const again = await call('POST', `/v1/subscribers/${subscriber.id}/ban`, { reason: 'fraud' }, team.token, {
      headers: { 'Idempotency-Key': key },
    });
    expect(first.status, first.text).toBe(200);
    expect(again.status).toBe(200);
    expect(again.json).toEqual(first.json);
    expect(first.json.member).toBeNull();
    expect(first.json.subscriber).not.toHaveProperty('email');
    const events = await newEvents();
    expect(types(events)).toEqual(['member.banned']);
    expect(events[0].data).toMatchObject({ member: null, reason: 'fraud' });
    expectRestProblem(
      await call('POST', `/v1/subscribers/${subscriber.id}/ban`, { reason: 'x'.repeat(501) }),
      'VALIDATION_FAILED',
    );

    // Unbanning them (no member either) emits member.unbanned with member null — it answered 500 before
    // (found by the property-based run of the OpenAPI document: the payload schema required a member).
    const unbanned = await call('POST', `/v1/subscribers/${subscriber.id}/unban`);
    expect(unbanned.status, unbanned.text).toBe(200);
    expect(unbanned.json).toMatchObject({
      member: null,
      subscriber: { id: subscriber.id, status: 'active', banned_at: null },
    });
    const after = await newEvents();
    expect(types(after)).toEqual(['member.unbanned']);
    expect(after[0].data).toMatchObject({ member: null, subscriber: { id: subscriber.id, status: 'active' } });
  });

  it('kicks a joined member over kick_subscriber (member.kicked); refuses a subscriber who never joined or was already kicked', async () => {
    const subscriber = await createSubscriberOk();
    const lonely = await createSubscriberOk({ display_name: 'Lonely', platform_user_id: 'web-lonely' });
    await joined('web-ada', 'ada');
    await newEvents();
    const kicked = await tool(runtime, team.principal, 'kick_subscriber', { id: subscriber.id, reason: 'rude' });
    expect(kicked.isError, JSON.stringify(kicked.structuredContent)).toBeFalsy();
    const result = kicked.structuredContent as any;
    expect(result.subscriber).toMatchObject({ status: 'active' });
    expect(result.member).toMatchObject({ status: 'kicked', username: 'ada' });
    const events = await newEvents();
    expect(types(events)).toEqual(['member.kicked']);
    expect(events[0].data).toMatchObject({
      reason: 'rude',
      member: { status: 'kicked' },
      subscriber: { id: subscriber.id },
    });
    expectToolProblem(await tool(runtime, team.principal, 'kick_subscriber', { id: subscriber.id }), 'CONFLICT');
    expectToolProblem(await tool(runtime, team.principal, 'kick_subscriber', { id: lonely.id }), 'CONFLICT');
    expectToolProblem(
      await tool(runtime, team.principal, 'kick_subscriber', { id: subscriber.id, unknown: true }),
      'VALIDATION_FAILED',
    );
    // A kicked member may come back.
    expect((await joined('web-ada'))!.status).toBe('joined');
  });

  it('records a failed platform call on the member without rolling back the state change; a later success clears it', async () => {
    const subscriber = await createSubscriberOk();
    await joined('web-ada');
    const banned = await banSubscriber(runtime, team.principal, subscriber.id, null, {
      adapters: { web: failingAdapter('The bot lacks the ban permission.') },
    });
    expect(banned.subscriber.status).toBe('banned');
    expect(banned.member).toMatchObject({
      status: 'banned',
      platform_error: { action: 'ban', message: 'The bot lacks the ban permission.', at: expect.any(String) },
    });
    expect((await call('GET', `/v1/members/${banned.member!.id}`)).json).toEqual(banned.member);

    const unbanned = await unbanSubscriber(runtime, team.principal, subscriber.id, {
      adapters: { web: failingAdapter(null) },
    });
    expect(unbanned.member).toMatchObject({
      status: 'left',
      platform_error: { action: 'unban', message: 'The platform call failed unexpectedly; retry later.' },
    });
    expect(JSON.stringify(unbanned)).not.toContain('internal-host');

    await joined('web-ada');
    const kicked = await kickSubscriber(runtime, team.principal, subscriber.id, null, {
      adapters: { web: webPlatformAdapter() },
    });
    expect(kicked.member).toMatchObject({ status: 'kicked', platform_error: null });
    expect(types(await newEvents())).toEqual([
      'member.joined',
      'member.banned',
      'member.unbanned',
      'member.joined',
      'member.kicked',
    ]);
  });

  it('suspends the banned subscriber’s live subscriptions (subscription.suspended)', async () => {
    const subscriber = await createSubscriberOk();
    const plan = await createPlan(runtime, team.principal, projectId, {
      name: 'Free',
      amount: 0,
      currency: 'EUR',
      interval: 'month',
    });
    const subscription = await createSubscription(runtime, team.principal, projectId, {
      subscriber_id: subscriber.id,
      plan_id: plan.id,
    });
    await newEvents();
    const banned = await call('POST', `/v1/subscribers/${subscriber.id}/ban`, {});
    expect(banned.status, banned.text).toBe(200);
    expect((await getSubscription(runtime.store, team.principal, subscription.id)).status).toBe('suspended');
    expect(types(await newEvents())).toEqual(['member.banned', 'subscription.suspended']);
  });

  it('answers NOT_FOUND for unknown ids and refuses callers without the ability', async () => {
    const subscriber = await createSubscriberOk();
    for (const action of ['ban', 'unban', 'kick'])
      expectRestProblem(await call('POST', `/v1/subscribers/${randomUUID()}/${action}`, {}), 'NOT_FOUND');
    const viewer = await seedToken(runtime.store, clock, {
      teamId: team.team.id,
      abilities: ['project-user:view', 'mcp:full'],
    });
    expectToolProblem(
      await tool(runtime, viewer.principal, 'ban_subscriber', { id: subscriber.id }),
      'TOKEN_MISSING_ABILITY',
    );
    expectRestProblem(
      await call('POST', `/v1/subscribers/${subscriber.id}/kick`, {}, viewer.token),
      'TOKEN_MISSING_ABILITY',
    );
  });
});
