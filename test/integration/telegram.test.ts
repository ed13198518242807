/**
 * Telegram (DESIGN D16, D22) with grammy pointed at a loopback fake of the Bot API: connecting
 * a bot with its token (getMe, setWebhook with a secret token, the token stored encrypted and never
 * returned), the inbound hook `POST /hooks/telegram/{project_id}` (secret-token refusal with the same answer
 * for an unknown project, chat_member → member.* events, my_chat_member → bot permissions, a replayed
 * update_id changes nothing), personal invite links on access grants (a join through one links the member
 * to the subscriber), ban / kick / unban reaching the fake, outages recorded on the member, a revoked token,
 * disconnection, the web access check, and the private `/account` command answering with a portal link (D27). Against DynamoDB Local; every event is checked against its
 * published schema.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { isoTime, type ManualClock } from '../../shared/clock.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import {
  MEMBER_PLATFORM_SYNC_DEADLINE_KIND,
  PLATFORM_SYNC_FIRST_DELAY_MS,
  PLATFORM_SYNC_MAX_ATTEMPTS,
  platformRetryDelayMs,
} from '../../shared/domain/members/platform-retry.js';
import { consumePortalLink } from '../../shared/domain/portal-sessions/links.js';
import { checkProjectAccess } from '../../shared/domain/subscriptions/access.js';
import { SUBSCRIPTION_INVITE_LINKS_DEADLINE_KIND } from '../../shared/domain/subscriptions/invite-link-retry.js';
import {
  applyMemberPlatformSync,
  applySubscriptionInviteLinks,
} from '../../shared/domain/subscriptions/platform-sync.js';
import { serveHookRequest } from '../../shared/hooks/dispatcher.js';
import { logger } from '../../shared/logger.js';
import type { IntegrationSettings } from '../../shared/integrations.js';
import { keys } from '../../shared/store/keys.js';
import { domainSnapshot, expectRestProblem } from '../support/guarantees.js';
import { rest } from '../support/calls.js';
import { expectPublishedEvent, TeamEventCursor } from '../support/events.js';
import { countingStore, createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';
import { startFakeBotApi, type FakeBotApi } from '../support/telegram-bot-api.js';

const BOT = { id: 700100, username: 'club_bot' };
const CHAT_ID = '-1001234567890';
const PUBLIC_BASE_URL = 'https://members.example';

let telegram: FakeBotApi;
let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;
let botToken: string;
let eventCursor: TeamEventCursor;
let nextUpdateId = 5000;

beforeAll(async () => {
  telegram = await startFakeBotApi();
});
afterAll(async () => {
  await telegram.stop();
});

/** The team's outbox events not returned before, oldest first, each checked against its published schema. */
function newEvents(): Promise<EventEnvelope[]> {
  return eventCursor.next();
}
const types = (events: EventEnvelope[]) => events.map((event) => event.type);
const call = (method: string, path: string, body?: unknown, query?: Record<string, string>) =>
  rest(runtime, { method, path, token: team.token, body, query });

function settings(overrides: Partial<IntegrationSettings> = {}): IntegrationSettings {
  return {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: telegram.url,
    stripeApiBaseUrl: 'http://127.0.0.1:9',
    publicBaseUrl: PUBLIC_BASE_URL,
    retry: { retries: 2, minTimeoutMs: 0 },
    ...overrides,
  };
}

/** Connects the project's bot and returns the webhook secret Telegram was given. */
async function connect(): Promise<string> {
  const reply = await call('PUT', `/v1/projects/${projectId}/bot`, { token: botToken });
  expect(reply.status).toBe(200);
  const registration = telegram
    .callsOf('setWebhook')
    .filter((entry) => entry.token === botToken)
    .at(-1)!;
  return registration.payload.secret_token as string;
}

/** Sends an update to the hook as Telegram would. */
async function deliver(update: Record<string, unknown>, secret: string | undefined, project = projectId) {
  const body = JSON.stringify(update);
  const result = await serveHookRequest(runtime, {
    version: '2.0',
    routeKey: '$default',
    rawPath: `/hooks/telegram/${project}`,
    rawQueryString: '',
    headers: {
      'content-type': 'application/json',
      ...(secret === undefined ? {} : { 'x-telegram-bot-api-secret-token': secret }),
    },
    requestContext: {
      requestId: randomUUID(),
      http: {
        method: 'POST',
        path: `/hooks/telegram/${project}`,
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: 'test',
      },
    },
    body,
    isBase64Encoded: false,
  } as never);
  return { status: result.statusCode, body: JSON.parse(result.body) as Record<string, unknown> };
}

const user = (id: number, username = `user${id}`) => ({ id, is_bot: false, first_name: `User ${id}`, username });

/** A `chat_member` update: `who` went from `from` to `to`, done by `by` (default themselves). */
function chatMember(
  who: number,
  from: string,
  to: string,
  options: { by?: number; inviteLink?: string; chat?: string } = {},
) {
  return {
    update_id: nextUpdateId++,
    chat_member: {
      chat: { id: Number(options.chat ?? CHAT_ID), type: 'supergroup', title: 'Readers' },
      from: user(options.by ?? who),
      date: Math.floor(clock.nowMs() / 1000),
      old_chat_member: { status: from, user: user(who) },
      new_chat_member: { status: to, user: user(who), ...(to === 'kicked' ? { until_date: 0 } : {}) },
      ...(options.inviteLink
        ? {
            invite_link: {
              invite_link: options.inviteLink,
              creator: user(BOT.id),
              creates_join_request: false,
              is_primary: false,
              is_revoked: false,
            },
          }
        : {}),
    },
  };
}

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  runtime.integrations = settings();
  team = await seedTeam(runtime.store, clock);
  projectId = (await call('POST', '/v1/projects', { name: 'Readers', platform_type: 'telegram' })).json.id;
  botToken = `${BOT.id}:${randomBytes(24).toString('base64url')}`;
  telegram.addBot(botToken, BOT);
  eventCursor = new TeamEventCursor(runtime.store, team.team.id);
  await newEvents();
});

describe('connecting a bot', () => {
  it('checks the token with getMe, registers the webhook with a random secret, stores the token encrypted and never returns it', async () => {
    const reply = await call('PUT', `/v1/projects/${projectId}/bot`, { token: botToken });
    expect(reply.status).toBe(200);
    expect(reply.json.bot).toEqual({
      platform_type: 'telegram',
      platform_bot_id: String(BOT.id),
      username: BOT.username,
      permissions: [],
      connected_at: expect.any(String),
    });
    expect(reply.text).not.toContain(botToken.split(':')[1]);
    expect(telegram.callsOf('getMe').filter((entry) => entry.token === botToken)).toHaveLength(1);
    const [registration] = telegram.callsOf('setWebhook').filter((entry) => entry.token === botToken);
    expect(registration.payload).toMatchObject({
      url: `${PUBLIC_BASE_URL}/hooks/telegram/${projectId}`,
      allowed_updates: ['chat_member', 'my_chat_member', 'message'],
    });
    expect(registration.payload.secret_token).toMatch(/^[A-Za-z0-9_-]{40,}$/);

    const events = await newEvents();
    expect(types(events)).toEqual(['project.bot_connected']);
    // Nothing stored, returned or sent carries the token or the secret in clear.
    const everything =
      JSON.stringify(await domainSnapshot(runtime.store)) +
      JSON.stringify(events) +
      (await call('GET', `/v1/projects/${projectId}`)).text;
    expect(everything).not.toContain(botToken.split(':')[1]);
    expect(everything).not.toContain(registration.payload.secret_token as string);
    const stored = await runtime.store.get(keys.credential(projectId, 'telegram_bot'));
    expect(stored).toMatchObject({
      team_id: team.team.id,
      project_id: projectId,
      kind: 'telegram_bot',
      public: { platform_bot_id: String(BOT.id) },
      secret_names: ['bot_token', 'webhook_secret'],
      sealed: { v: 1, kek: 'local' },
    });

    // The same bot again (a new token after a revocation at @BotFather): a new credential, no event.
    const rotated = `${BOT.id}:${randomBytes(24).toString('base64url')}`;
    telegram.addBot(rotated, BOT);
    expect((await call('PUT', `/v1/projects/${projectId}/bot`, { token: rotated })).json.bot.platform_bot_id).toBe(
      String(BOT.id),
    );
    expect(await newEvents()).toEqual([]);
  });

  it('refuses a token Telegram rejects, a platform whose bot cannot be connected, and a malformed token, changing nothing', async () => {
    const slack = (await call('POST', '/v1/projects', { name: 'Workspace', platform_type: 'slack' })).json.id;
    await newEvents();
    const before = await domainSnapshot(runtime.store);
    const refused = expectRestProblem(
      await call('PUT', `/v1/projects/${projectId}/bot`, { token: `999:${randomBytes(24).toString('base64url')}` }),
      'VALIDATION_FAILED',
    );
    expect(refused.errors).toEqual([{ path: 'token', message: 'Telegram refused this token' }]);
    const notConnectable = expectRestProblem(
      await call('PUT', `/v1/projects/${slack}/bot`, { token: botToken }),
      'VALIDATION_FAILED',
    );
    expect(notConnectable.detail).toContain('connectable platforms: telegram, discord');
    expectRestProblem(
      await call('PUT', `/v1/projects/${projectId}/bot`, { token: 'not a token' }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('PUT', `/v1/projects/${projectId}/bot`, { platform_bot_id: '1', permissions: [] }),
      'VALIDATION_FAILED',
    );
    expect(await newEvents()).toEqual([]);
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    expect(await runtime.store.get(keys.credential(projectId, 'telegram_bot'))).toBeUndefined();
  });

  it('disconnects: deletes the webhook at Telegram and the stored credential; the old secret is refused afterwards', async () => {
    const secret = await connect();
    await newEvents();
    const reply = await call('DELETE', `/v1/projects/${projectId}/bot`);
    expect(reply.json.bot).toBeNull();
    expect(telegram.callsOf('deleteWebhook').filter((entry) => entry.token === botToken)).toHaveLength(1);
    expect(types(await newEvents())).toEqual(['project.bot_disconnected']);
    expect(await runtime.store.get(keys.credential(projectId, 'telegram_bot'))).toBeUndefined();
    expect((await deliver(chatMember(1, 'left', 'member'), secret)).status).toBe(401);
  });
});

describe('the inbound hook', () => {
  it('refuses a missing or wrong secret token, with the same answer for a project that does not exist', async () => {
    const secret = await connect();
    await newEvents();
    const before = await domainSnapshot(runtime.store);
    const wrong = await deliver(chatMember(1, 'left', 'member'), `${secret}x`);
    const missing = await deliver(chatMember(1, 'left', 'member'), undefined);
    const unknownProject = await deliver(chatMember(1, 'left', 'member'), secret, randomUUID());
    const notAnId = await deliver(chatMember(1, 'left', 'member'), secret, 'not-a-project');
    for (const answer of [wrong, missing, unknownProject, notAnId])
      expect(answer).toEqual({ status: 401, body: { error: 'The secret token is missing or wrong.' } });
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });

  it('maps chat_member updates in a linked chat to member.joined, left, kicked and banned; a replayed update_id changes nothing', async () => {
    await call('POST', `/v1/projects/${projectId}/resources`, {
      kind: 'group',
      platform_resource_id: CHAT_ID,
      name: 'Readers',
    });
    const secret = await connect();
    await newEvents();

    const join = chatMember(42, 'left', 'member');
    expect(await deliver(join, secret)).toEqual({ status: 200, body: { ok: true } });
    const joined = await newEvents();
    expect(types(joined)).toEqual(['member.joined']);
    expect(joined[0].data).toMatchObject({
      member: {
        platform_user_id: '42',
        username: 'user42',
        display_name: 'User 42',
        status: 'joined',
        subscriber_id: null,
      },
      subscriber: null,
    });

    // The same update again (Telegram retrying): acknowledged, nothing changes.
    const before = await domainSnapshot(runtime.store);
    expect(await deliver(join, secret)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    expect(await domainSnapshot(runtime.store)).toEqual(before);

    expect((await deliver(chatMember(42, 'member', 'left'), secret)).status).toBe(200);
    expect((await deliver(chatMember(42, 'left', 'member'), secret)).status).toBe(200);
    expect((await deliver(chatMember(42, 'member', 'left', { by: 9001 }), secret)).status).toBe(200);
    expect((await deliver(chatMember(43, 'left', 'member'), secret)).status).toBe(200);
    expect((await deliver(chatMember(43, 'member', 'kicked', { by: 9001 }), secret)).status).toBe(200);
    // Another chat (not linked) and the bot's own actions change nothing.
    expect((await deliver(chatMember(44, 'left', 'member', { chat: '-100999' }), secret)).status).toBe(200);
    expect((await deliver(chatMember(42, 'kicked', 'left', { by: BOT.id }), secret)).status).toBe(200);
    const events = await newEvents();
    expect(types(events)).toEqual(['member.left', 'member.joined', 'member.kicked', 'member.joined', 'member.banned']);
    expect(events[2].data).toMatchObject({ member: { platform_user_id: '42', status: 'kicked' }, reason: null });
    expect(events[4].data).toMatchObject({ member: { platform_user_id: '43', status: 'banned' } });
    for (const event of events) expectPublishedEvent(event);
  });

  it('maps my_chat_member to project.bot_permissions_changed', async () => {
    const secret = await connect();
    await newEvents();
    const promoted = {
      update_id: nextUpdateId++,
      my_chat_member: {
        chat: { id: Number(CHAT_ID), type: 'supergroup', title: 'Readers' },
        from: user(9001),
        date: Math.floor(clock.nowMs() / 1000),
        old_chat_member: { status: 'member', user: { ...user(BOT.id, BOT.username), is_bot: true } },
        new_chat_member: {
          status: 'administrator',
          user: { ...user(BOT.id, BOT.username), is_bot: true },
          can_invite_users: true,
          can_restrict_members: true,
          can_delete_messages: false,
          can_be_edited: false,
        },
      },
    };
    expect((await deliver(promoted, secret)).status).toBe(200);
    const events = await newEvents();
    expect(types(events)).toEqual(['project.bot_permissions_changed']);
    expect(events[0].data).toMatchObject({
      bot: { platform_bot_id: String(BOT.id), permissions: ['can_invite_users', 'can_restrict_members'] },
    });
    expect((await call('GET', `/v1/projects/${projectId}`)).json.bot.permissions).toEqual([
      'can_invite_users',
      'can_restrict_members',
    ]);
  });
});

describe('access through the adapter', () => {
  /** A linked chat, a connected bot, a plan and a subscriber; returns their ids and the webhook secret. */
  async function setUp(subscriber: Record<string, unknown> = { display_name: 'Ada' }) {
    await call('POST', `/v1/projects/${projectId}/resources`, {
      kind: 'group',
      platform_resource_id: CHAT_ID,
      name: 'Readers',
    });
    const secret = await connect();
    const plan = (
      await call('POST', `/v1/projects/${projectId}/plans`, {
        name: 'Monthly',
        amount: 900,
        currency: 'EUR',
        interval: 'month',
      })
    ).json;
    const created = (await call('POST', `/v1/projects/${projectId}/subscribers`, subscriber)).json;
    await newEvents();
    return { secret, planId: plan.id as string, subscriberId: created.id as string };
  }

  it('grants with a personal single-use invite link (in member.access_granted); joining through it links the member to the subscriber', async () => {
    const { secret, planId, subscriberId } = await setUp();
    const subscription = await call('POST', `/v1/projects/${projectId}/subscriptions`, {
      subscriber_id: subscriberId,
      plan_id: planId,
    });
    expect(subscription.status).toBe(201);
    const [invite] = telegram.callsOf('createChatInviteLink').filter((entry) => entry.token === botToken);
    expect(invite.payload).toMatchObject({
      chat_id: Number(CHAT_ID),
      member_limit: 1,
      name: `subscriber ${subscriberId.slice(0, 8)}`,
    });
    const events = await newEvents();
    expect(types(events)).toEqual(['subscription.created', 'member.access_granted', 'member.converted']);
    const link = (events[1].data as { invite_link: { url: string; expires_at: string } }).invite_link;
    expect(link).toEqual({
      url: expect.stringMatching(/^https:\/\/t\.me\/\+fakeInvite\d+$/),
      expires_at: new Date((invite.payload.expire_date as number) * 1000).toISOString(),
    });
    // The link is on the subscription too: in the creation's answer, its event and every read.
    expect(subscription.json.invite_links).toEqual([link]);
    expect((events[0].data as { subscription: { invite_links: unknown } }).subscription.invite_links).toEqual([link]);
    expect((await call('GET', `/v1/subscriptions/${subscription.json.id}`)).json.invite_links).toEqual([link]);

    expect((await deliver(chatMember(77, 'left', 'member', { inviteLink: link.url }), secret)).status).toBe(200);
    const joined = await newEvents();
    expect(types(joined)).toEqual(['member.joined']);
    expect(joined[0].data).toMatchObject({
      member: { platform_user_id: '77', subscriber_id: subscriberId },
      subscriber: { id: subscriberId, platform_user_id: '77' },
    });
    expect((await call('GET', `/v1/subscribers/${subscriberId}`)).json).toMatchObject({
      platform_user_id: '77',
      member_id: (joined[0].data as { member: { id: string } }).member.id,
    });

    // The web access check answers from the subscription, for the subscriber and for the member.
    const memberId = (joined[0].data as { member: { id: string } }).member.id;
    const bySubscriber = (
      await call('GET', `/v1/projects/${projectId}/access`, undefined, { subscriber_id: subscriberId })
    ).json;
    expect(bySubscriber).toEqual({
      granted: true,
      status: 'active',
      ends_at: subscription.json.current_period_end,
      plan_id: planId,
      subscription_id: subscription.json.id,
      subscriber_id: subscriberId,
      member_id: memberId,
    });
    expect((await call('GET', `/v1/projects/${projectId}/access`, undefined, { member_id: memberId })).json).toEqual(
      bySubscriber,
    );
    // One read by subscriber (the subscriber's partition holds its summary and its subscriptions'); by member, the member's first.
    const counting = countingStore(runtime.store);
    expect(
      await checkProjectAccess(counting.store, team.principal, projectId, { subscriber_id: subscriberId }),
    ).toEqual(bySubscriber);
    expect(counting.requests()).toBe(1);
    counting.reset();
    expect(await checkProjectAccess(counting.store, team.principal, projectId, { member_id: memberId })).toEqual(
      bySubscriber,
    );
    expect(counting.requests()).toBe(2);

    // Canceling removes the member from the chat without a lasting ban; the check says so.
    await call('POST', `/v1/subscriptions/${subscription.json.id}/cancel`, { at_period_end: false });
    const removals = telegram.calls
      .filter((entry) => entry.token === botToken && ['banChatMember', 'unbanChatMember'].includes(entry.method))
      .slice(-2);
    expect(removals.map((entry) => [entry.method, entry.payload.chat_id, entry.payload.user_id])).toEqual([
      ['banChatMember', Number(CHAT_ID), 77],
      ['unbanChatMember', Number(CHAT_ID), 77],
    ]);
    expect(
      (await call('GET', `/v1/projects/${projectId}/access`, undefined, { member_id: memberId })).json,
    ).toMatchObject({ granted: false, status: 'canceled', plan_id: planId });
    // Access ended: the subscription no longer offers the link, and Telegram was told to revoke it.
    expect((await call('GET', `/v1/subscriptions/${subscription.json.id}`)).json.invite_links).toEqual([]);
    expect(
      telegram
        .callsOf('revokeChatInviteLink')
        .filter((entry) => entry.token === botToken)
        .map((entry) => entry.payload),
    ).toEqual([{ chat_id: Number(CHAT_ID), invite_link: link.url }]);
  });

  it('revokes the invite link of a subscriber who never joined when access ends; a join through it afterwards links no one; the link is never logged', async () => {
    const { secret, planId, subscriberId } = await setUp();
    const subscription = (
      await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriberId, plan_id: planId })
    ).json;
    const [link] = subscription.invite_links as { url: string }[];
    await newEvents();
    const warn = vi.spyOn(logger, 'warn');
    const error = vi.spyOn(logger, 'error');
    try {
      const canceled = await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: false });
      expect(canceled.json).toMatchObject({ status: 'canceled', invite_links: [] });
      expect(
        telegram
          .callsOf('revokeChatInviteLink')
          .filter((entry) => entry.token === botToken)
          .map((entry) => entry.payload),
      ).toEqual([{ chat_id: Number(CHAT_ID), invite_link: link.url }]);
      const ended = await newEvents();
      expect(types(ended)).toEqual(['subscription.canceled', 'member.access_revoked', 'member.churned']);
      expect(JSON.stringify(ended)).not.toContain(link.url);
      // The link's item is marked revoked: a join through it (had Telegram let one through) is a free member.
      expect((await deliver(chatMember(81, 'left', 'member', { inviteLink: link.url }), secret)).status).toBe(200);
      const joined = await newEvents();
      expect(types(joined)).toEqual(['member.joined']);
      expect(joined[0].data).toMatchObject({
        member: { platform_user_id: '81', subscriber_id: null },
        subscriber: null,
      });
      expect((await call('GET', `/v1/subscribers/${subscriberId}`)).json).toMatchObject({
        platform_user_id: null,
        member_id: null,
      });
      expect(JSON.stringify([...warn.mock.calls, ...error.mock.calls])).not.toContain(link.url);
    } finally {
      warn.mockRestore();
      error.mockRestore();
    }
  });

  it('logs a failed revocation of a subscriber who never joined by subscription (never the link) and keeps the cancellation', async () => {
    const { planId, subscriberId } = await setUp();
    const subscription = (
      await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriberId, plan_id: planId })
    ).json;
    const [link] = subscription.invite_links as { url: string }[];
    telegram.failNext('revokeChatInviteLink', {
      error_code: 400,
      description: 'Bad Request: not enough rights to manage chat invite links',
    });
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    try {
      const canceled = await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: false });
      expect(canceled.status).toBe(200);
      expect(canceled.json).toMatchObject({ status: 'canceled', invite_links: [] });
      expect(warn).toHaveBeenCalledWith('invite links not revoked; they stop working when they expire', {
        subscription_id: subscription.id,
        project_id: projectId,
        links: 1,
        reason:
          'Telegram refused revokeChatInviteLink: Bad Request: not enough rights to manage chat invite links (400).',
      });
      expect(JSON.stringify(warn.mock.calls)).not.toContain(link.url);
    } finally {
      warn.mockRestore();
    }
  });

  it('bans, unbans and kicks through the Bot API', async () => {
    const { subscriberId } = await setUp({ display_name: 'Grace', platform_user_id: '88' });
    const secret = telegram.callsOf('setWebhook').at(-1)!.payload.secret_token as string;
    await deliver(chatMember(88, 'left', 'member'), secret);
    await newEvents();
    const since = telegram.calls.length;
    const moderation = (entries: typeof telegram.calls) =>
      entries
        .filter((entry) => entry.token === botToken)
        .map((entry) => [
          entry.method,
          entry.payload.chat_id,
          entry.payload.user_id,
          entry.payload.only_if_banned ?? null,
        ]);

    expect((await call('POST', `/v1/subscribers/${subscriberId}/ban`, { reason: 'spam' })).json.member).toMatchObject({
      status: 'banned',
      platform_error: null,
    });
    expect((await call('POST', `/v1/subscribers/${subscriberId}/unban`, {})).json.member).toMatchObject({
      status: 'left',
      platform_error: null,
    });
    await deliver(chatMember(88, 'left', 'member'), secret);
    expect((await call('POST', `/v1/subscribers/${subscriberId}/kick`, {})).json.member).toMatchObject({
      status: 'kicked',
      platform_error: null,
    });
    expect(moderation(telegram.calls.slice(since))).toEqual([
      ['banChatMember', Number(CHAT_ID), 88, null],
      ['unbanChatMember', Number(CHAT_ID), 88, true],
      ['banChatMember', Number(CHAT_ID), 88, null],
      ['unbanChatMember', Number(CHAT_ID), 88, true],
    ]);
    expect(types(await newEvents())).toEqual(['member.banned', 'member.unbanned', 'member.joined', 'member.kicked']);
  });

  it('retries an outage, records a lasting failure on the member without undoing the change, and reports a revoked token', async () => {
    const { subscriberId } = await setUp({ display_name: 'Lin', platform_user_id: '99' });
    const secret = telegram.callsOf('setWebhook').at(-1)!.payload.secret_token as string;
    await deliver(chatMember(99, 'left', 'member'), secret);
    await newEvents();

    // Two 500s, then success: retried, nothing recorded.
    telegram.failNext('banChatMember', { error_code: 500, description: 'Internal Server Error', times: 2 });
    const banned = (await call('POST', `/v1/subscribers/${subscriberId}/ban`, {})).json;
    expect(banned.member).toMatchObject({ status: 'banned', platform_error: null });
    expect(telegram.callsOf('banChatMember').filter((entry) => entry.token === botToken)).toHaveLength(3);

    // A refusal is not retried: recorded on the member, the unban stands.
    telegram.failNext('unbanChatMember', {
      error_code: 400,
      description: 'Bad Request: not enough rights to restrict/unrestrict chat member',
    });
    const unbanned = (await call('POST', `/v1/subscribers/${subscriberId}/unban`, {})).json;
    expect(unbanned.member).toMatchObject({
      status: 'left',
      platform_error: {
        action: 'unban',
        message:
          'Telegram refused unbanChatMember: Bad Request: not enough rights to restrict/unrestrict chat member (400).',
      },
    });
    expect((await call('GET', `/v1/members/${unbanned.member.id}`)).json.platform_error.action).toBe('unban');

    // A revoked token: every call is refused (401) and recorded; the token never shows.
    telegram.revoke(botToken);
    const again = (await call('POST', `/v1/subscribers/${subscriberId}/ban`, {})).json;
    expect(again.member.platform_error).toEqual({
      action: 'ban',
      message: 'Telegram refused banChatMember: Unauthorized (401).',
      at: expect.any(String),
      attempts: 1,
      next_attempt_at: isoTime(clock.nowMs() + PLATFORM_SYNC_FIRST_DELAY_MS),
    });
    expect(JSON.stringify(again)).not.toContain(botToken);
    expect(types(await newEvents())).toEqual(['member.banned', 'member.unbanned', 'member.banned']);
  });
  describe('durable retries of failed platform calls', () => {
    /** setUp with a subscriber whose person already joined the chat; returns its member id too. */
    async function joinedSubscriber(platformUserId: number) {
      const ids = await setUp({ display_name: `Person ${platformUserId}`, platform_user_id: String(platformUserId) });
      await deliver(chatMember(platformUserId, 'left', 'member'), ids.secret);
      const memberId = (await call('GET', `/v1/subscribers/${ids.subscriberId}`)).json.member_id as string;
      expect(memberId).toEqual(expect.any(String));
      await newEvents();
      return { ...ids, memberId };
    }
    const member = async (memberId: string) => (await call('GET', `/v1/members/${memberId}`)).json;
    const syncDeadline = (memberId: string) =>
      runtime.store.get(keys.deadline(team.team.id, MEMBER_PLATFORM_SYNC_DEADLINE_KIND, memberId));
    const botCalls = (method: string) => telegram.callsOf(method).filter((entry) => entry.token === botToken);

    it('records a failed grant with its next attempt, then the deadline worker retries it after the backoff, clears the error and puts the new invite link on the subscription', async () => {
      const { planId, subscriberId, memberId } = await joinedSubscriber(55);
      telegram.failNext('createChatInviteLink', {
        error_code: 400,
        description: 'Bad Request: not enough rights to manage chat invite links',
      });
      const created = await call('POST', `/v1/projects/${projectId}/subscriptions`, {
        subscriber_id: subscriberId,
        plan_id: planId,
      });
      // The subscription stands; the failure is on the member, with its retry in the same write.
      expect(created.status).toBe(201);
      expect(created.json).toMatchObject({ status: 'active', has_access: true, invite_links: [] });
      const failedAt = clock.nowMs();
      expect((await member(memberId)).platform_error).toEqual({
        action: 'grant_access',
        message:
          'Telegram refused createChatInviteLink: Bad Request: not enough rights to manage chat invite links (400).',
        at: isoTime(failedAt),
        attempts: 1,
        next_attempt_at: isoTime(failedAt + PLATFORM_SYNC_FIRST_DELAY_MS),
      });
      expect(await syncDeadline(memberId)).toMatchObject({
        due_at: isoTime(failedAt + PLATFORM_SYNC_FIRST_DELAY_MS),
        project_id: projectId,
      });
      const events = await newEvents();
      expect(types(events)).toEqual(['subscription.created', 'member.access_granted', 'member.converted']);
      expect(events[1].data).toMatchObject({ invite_link: null });

      // Not due yet: the worker leaves it.
      const invitesBefore = botCalls('createChatInviteLink').length;
      clock.advance(PLATFORM_SYNC_FIRST_DELAY_MS - 1000);
      await applyDueDeadlines(runtime, clock.nowMs());
      expect(botCalls('createChatInviteLink')).toHaveLength(invitesBefore);

      // Due: reconciled (the subscriber has access: a grant), the error cleared, the deadline gone, the link on the subscription.
      clock.advance(1000);
      expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 1, failed: 0 });
      expect(botCalls('createChatInviteLink')).toHaveLength(invitesBefore + 1);
      expect(botCalls('createChatInviteLink').at(-1)!.payload).toMatchObject({
        chat_id: Number(CHAT_ID),
        member_limit: 1,
      });
      expect((await member(memberId)).platform_error).toBeNull();
      expect(await syncDeadline(memberId)).toBeUndefined();
      const links = (await call('GET', `/v1/subscriptions/${created.json.id}`)).json.invite_links;
      expect(links).toEqual([
        { url: expect.stringMatching(/^https:\/\/t\.me\/\+fakeInvite\d+$/), expires_at: expect.any(String) },
      ]);
      expect(await newEvents()).toEqual([]);

      // Applying it again, through the worker or the handler with the old deadline, changes nothing and calls nothing.
      const before = await domainSnapshot(runtime.store);
      const callsBefore = telegram.calls.length;
      expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 0, failed: 0 });
      await applyMemberPlatformSync(runtime, {
        teamId: team.team.id,
        kind: MEMBER_PLATFORM_SYNC_DEADLINE_KIND,
        subjectId: memberId,
        projectId,
        dueAt: isoTime(failedAt + PLATFORM_SYNC_FIRST_DELAY_MS),
      });
      expect(await domainSnapshot(runtime.store)).toEqual(before);
      expect(telegram.calls).toHaveLength(callsBefore);
    });

    it('retries a failed removal of a canceled subscriber and removes the member (banChatMember then unbanChatMember)', async () => {
      const { planId, subscriberId, memberId } = await joinedSubscriber(66);
      const subscription = (
        await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriberId, plan_id: planId })
      ).json;
      expect(subscription.invite_links).toHaveLength(1);
      telegram.failNext('banChatMember', {
        error_code: 400,
        description: 'Bad Request: not enough rights to restrict/unrestrict chat member',
      });
      const canceled = await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: false });
      expect(canceled.json).toMatchObject({ status: 'canceled', has_access: false, invite_links: [] });
      expect((await member(memberId)).platform_error).toMatchObject({ action: 'revoke_access', attempts: 1 });

      const since = telegram.calls.length;
      clock.advance(PLATFORM_SYNC_FIRST_DELAY_MS);
      expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 1, failed: 0 });
      const removals = telegram.calls.slice(since).filter((entry) => entry.token === botToken);
      expect(removals.map((entry) => [entry.method, entry.payload.chat_id, entry.payload.user_id])).toEqual([
        ['banChatMember', Number(CHAT_ID), 66],
        ['unbanChatMember', Number(CHAT_ID), 66],
      ]);
      expect((await member(memberId)).platform_error).toBeNull();
      expect(await syncDeadline(memberId)).toBeUndefined();
      expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).json.status).toBe('canceled');
    });

    it('records a failed invite-link revocation on the member and the deadline worker revokes the link (and removes the member again)', async () => {
      const { planId, subscriberId, memberId } = await joinedSubscriber(65);
      const subscription = (
        await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriberId, plan_id: planId })
      ).json;
      const [link] = subscription.invite_links as { url: string }[];
      await newEvents();
      telegram.failNext('revokeChatInviteLink', { error_code: 500, description: 'Internal Server Error', times: 3 });
      const since = telegram.calls.length;
      const canceled = await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: false });
      expect(canceled.json).toMatchObject({ status: 'canceled', has_access: false, invite_links: [] });
      // Removal done; the revocation retried by callTelegram (3 attempts), then recorded with its durable retry.
      expect(
        telegram.calls
          .slice(since)
          .filter((entry) => entry.token === botToken)
          .map((entry) => entry.method),
      ).toEqual([
        'banChatMember',
        'unbanChatMember',
        'revokeChatInviteLink',
        'revokeChatInviteLink',
        'revokeChatInviteLink',
      ]);
      const recorded = await member(memberId);
      expect(recorded.platform_error).toMatchObject({
        action: 'revoke_access',
        attempts: 1,
        message: 'Telegram refused revokeChatInviteLink: Internal Server Error (500).',
      });
      expect(JSON.stringify(recorded)).not.toContain(link.url);
      expect(await syncDeadline(memberId)).toMatchObject({ project_id: projectId });
      expect(JSON.stringify(await newEvents())).not.toContain(link.url);

      const retried = telegram.calls.length;
      clock.advance(PLATFORM_SYNC_FIRST_DELAY_MS);
      expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 1, failed: 0 });
      const calls = telegram.calls.slice(retried).filter((entry) => entry.token === botToken);
      expect(calls.map((entry) => entry.method)).toEqual(['banChatMember', 'unbanChatMember', 'revokeChatInviteLink']);
      expect(calls[2].payload).toEqual({ chat_id: Number(CHAT_ID), invite_link: link.url });
      expect((await member(memberId)).platform_error).toBeNull();
      expect(await syncDeadline(memberId)).toBeUndefined();
      // Revoked: nothing of the link is left on the member item.
      const item = await runtime.store.get(keys.member(team.team.id, projectId, memberId));
      expect(JSON.stringify(item)).not.toContain(link.url);
    });

    it('retries a failed ban as a ban: a banned member stays banned', async () => {
      const { subscriberId, memberId } = await joinedSubscriber(68);
      telegram.failNext('banChatMember', {
        error_code: 400,
        description: 'Bad Request: not enough rights to restrict/unrestrict chat member',
      });
      expect((await call('POST', `/v1/subscribers/${subscriberId}/ban`, {})).json.member).toMatchObject({
        status: 'banned',
        platform_error: { action: 'ban', attempts: 1 },
      });
      const since = telegram.calls.length;
      clock.advance(PLATFORM_SYNC_FIRST_DELAY_MS);
      await applyDueDeadlines(runtime, clock.nowMs());
      expect(
        telegram.calls
          .slice(since)
          .filter((entry) => entry.token === botToken)
          .map((entry) => entry.method),
      ).toEqual(['banChatMember']);
      expect(await member(memberId)).toMatchObject({ status: 'banned', platform_error: null });
    });

    it('keeps a banned subscriber with a live subscription banned: the suspension that follows the ban removes nothing more', async () => {
      const { planId, subscriberId, memberId } = await joinedSubscriber(69);
      await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriberId, plan_id: planId });
      const since = telegram.calls.length;
      expect((await call('POST', `/v1/subscribers/${subscriberId}/ban`, {})).json.member).toMatchObject({
        status: 'banned',
        platform_error: null,
      });
      // banChatMember alone: an access removal (ban then unban) would lift the ban again. The suspension's
      // ended access still revokes its unused invite link.
      expect(
        telegram.calls
          .slice(since)
          .filter((entry) => entry.token === botToken)
          .map((entry) => entry.method),
      ).toEqual(['banChatMember', 'revokeChatInviteLink']);
      expect(await member(memberId)).toMatchObject({ status: 'banned', platform_error: null });
      expect(await syncDeadline(memberId)).toBeUndefined();
    });

    describe('for a subscriber who never joined (no member)', () => {
      const linksDeadline = (subscriptionId: string) =>
        runtime.store.get(keys.deadline(team.team.id, SUBSCRIPTION_INVITE_LINKS_DEADLINE_KIND, subscriptionId));
      /** A subscription whose grant failed (createChatInviteLink 500, three times: the adapter's retries too). */
      async function failedGrant(subscriber: Record<string, unknown> = { display_name: 'Nadia' }) {
        const ids = await setUp(subscriber);
        telegram.failNext('createChatInviteLink', { error_code: 500, description: 'Internal Server Error', times: 3 });
        const created = await call('POST', `/v1/projects/${projectId}/subscriptions`, {
          subscriber_id: ids.subscriberId,
          plan_id: ids.planId,
        });
        expect(created.status).toBe(201);
        return { ...ids, subscription: created.json, failedAt: clock.nowMs() };
      }

      it('schedules a durable retry in the creation; the worker makes the link after the backoff, puts it on the subscription and sends it in member.access_granted; twice does nothing', async () => {
        const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
        try {
          const { secret, subscriberId, subscription, failedAt } = await failedGrant();
          // The subscription stands without a link; the failure and its retry are on the deadline item.
          expect(subscription).toMatchObject({ status: 'active', has_access: true, invite_links: [] });
          expect((await call('GET', `/v1/subscribers/${subscriberId}`)).json.member_id).toBeNull();
          const message = 'Telegram refused createChatInviteLink: Internal Server Error (500).';
          expect(await linksDeadline(subscription.id)).toMatchObject({
            due_at: isoTime(failedAt + PLATFORM_SYNC_FIRST_DELAY_MS),
            project_id: projectId,
            platform_error: {
              action: 'grant_access',
              message,
              at: isoTime(failedAt),
              attempts: 1,
              next_attempt_at: isoTime(failedAt + PLATFORM_SYNC_FIRST_DELAY_MS),
            },
          });
          expect(warn).toHaveBeenCalledWith('invite links not made; retried later', {
            subscription_id: subscription.id,
            project_id: projectId,
            reason: message,
          });
          const events = await newEvents();
          expect(types(events)).toEqual(['subscription.created', 'member.access_granted', 'member.converted']);
          expect(events[1].data).toMatchObject({ member: null, invite_link: null });

          // Not due yet: nothing is asked.
          const invitesBefore = botCalls('createChatInviteLink').length;
          clock.advance(PLATFORM_SYNC_FIRST_DELAY_MS - 1000);
          expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 0, failed: 0 });
          expect(botCalls('createChatInviteLink')).toHaveLength(invitesBefore);

          // Due: the link is made, stored on the subscription and sent again in member.access_granted.
          clock.advance(1000);
          expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 1, failed: 0 });
          expect(botCalls('createChatInviteLink')).toHaveLength(invitesBefore + 1);
          expect(botCalls('createChatInviteLink').at(-1)!.payload).toMatchObject({
            chat_id: Number(CHAT_ID),
            member_limit: 1,
            name: `subscriber ${subscriberId.slice(0, 8)}`,
          });
          const read = (await call('GET', `/v1/subscriptions/${subscription.id}`)).json;
          expect(read.invite_links).toEqual([
            { url: expect.stringMatching(/^https:\/\/t\.me\/\+fakeInvite\d+$/), expires_at: expect.any(String) },
          ]);
          const [link] = read.invite_links as { url: string }[];
          expect(read.updated_at).toBe(isoTime(clock.nowMs()));
          const granted = await newEvents();
          expect(types(granted)).toEqual(['member.access_granted']);
          expect(granted[0].data).toMatchObject({
            member: null,
            subscriber: { id: subscriberId },
            resource: { platform_resource_id: CHAT_ID },
            invite_link: read.invite_links[0],
          });
          expect(await linksDeadline(subscription.id)).toBeUndefined();
          expect(JSON.stringify(warn.mock.calls)).not.toContain(link.url);

          // Applying it again, through the worker or the handler with the old deadline, changes nothing and calls nothing.
          const before = await domainSnapshot(runtime.store);
          const callsBefore = telegram.calls.length;
          expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 0, failed: 0 });
          await applySubscriptionInviteLinks(runtime, {
            teamId: team.team.id,
            kind: SUBSCRIPTION_INVITE_LINKS_DEADLINE_KIND,
            subjectId: subscription.id,
            projectId,
            dueAt: isoTime(failedAt + PLATFORM_SYNC_FIRST_DELAY_MS),
          });
          expect(await domainSnapshot(runtime.store)).toEqual(before);
          expect(telegram.calls).toHaveLength(callsBefore);
          expect(await newEvents()).toEqual([]);

          // The retried link is the subscriber's: joining through it links the member.
          expect((await deliver(chatMember(93, 'left', 'member', { inviteLink: link.url }), secret)).status).toBe(200);
          expect((await newEvents())[0].data).toMatchObject({
            member: { platform_user_id: '93', subscriber_id: subscriberId },
          });
        } finally {
          warn.mockRestore();
        }
      });

      it('retries only the chat whose link failed when another chat got its link, keeping the live one', async () => {
        const OTHER_CHAT = '-1009876543210';
        const ids = await setUp({ display_name: 'Quinn' });
        await call('POST', `/v1/projects/${projectId}/resources`, {
          kind: 'channel',
          platform_resource_id: OTHER_CHAT,
          name: 'News',
        });
        await newEvents();
        telegram.failNext('createChatInviteLink', { error_code: 500, description: 'Internal Server Error', times: 3 });
        const subscription = (
          await call('POST', `/v1/projects/${projectId}/subscriptions`, {
            subscriber_id: ids.subscriberId,
            plan_id: ids.planId,
          })
        ).json;
        expect(subscription.invite_links).toHaveLength(1);
        expect(await linksDeadline(subscription.id)).toMatchObject({ platform_error: { attempts: 1 } });
        await newEvents();

        const since = botCalls('createChatInviteLink').length;
        clock.advance(PLATFORM_SYNC_FIRST_DELAY_MS);
        expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 1, failed: 0 });
        expect(
          botCalls('createChatInviteLink')
            .slice(since)
            .map((entry) => entry.payload.chat_id),
        ).toEqual([Number(CHAT_ID)]);
        const links = (await call('GET', `/v1/subscriptions/${subscription.id}`)).json.invite_links as {
          url: string;
        }[];
        expect(links).toHaveLength(2);
        expect(links[0]).toEqual(subscription.invite_links[0]);
        const granted = await newEvents();
        expect(types(granted)).toEqual(['member.access_granted']);
        expect(granted[0].data).toMatchObject({
          member: null,
          resource: { platform_resource_id: CHAT_ID },
          invite_link: links[1],
        });
        expect(await linksDeadline(subscription.id)).toBeUndefined();
      });

      /** Runs the retry once it is due and checks it was dropped: no Bot API call, the deadline gone. */
      async function expectRetryDropped(subscriptionId: string): Promise<void> {
        const callsBefore = telegram.calls.length;
        clock.advance(PLATFORM_SYNC_FIRST_DELAY_MS);
        expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 1, failed: 0 });
        expect(telegram.calls).toHaveLength(callsBefore);
        expect(await linksDeadline(subscriptionId)).toBeUndefined();
      }

      it('drops the retry of a subscription canceled meanwhile: no call, no link, no event', async () => {
        const { subscription } = await failedGrant();
        expect(
          (await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: false })).json,
        ).toMatchObject({ status: 'canceled', invite_links: [] });
        await newEvents();
        await expectRetryDropped(subscription.id);
        expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).json).toMatchObject({
          status: 'canceled',
          invite_links: [],
        });
        expect(await newEvents()).toEqual([]);
      });

      it("lets a transition between the retry's read and its write win: nothing written, the next run drops the retry", async () => {
        const { subscription } = await failedGrant();
        await newEvents();
        clock.advance(PLATFORM_SYNC_FIRST_DELAY_MS);
        const dueAt = (await linksDeadline(subscription.id))!.due_at as string;
        // The cancellation lands just after the handler read the subscription (still active).
        const subscriptionPk = keys.subscription(team.team.id, subscription.id).pk;
        let raced = false;
        const store = runtime.store;
        const racingStore = Object.create(store, {
          get: {
            value: async (key: { pk: string; sk: string }, options?: never) => {
              const item = await store.get(key, options);
              if (key.pk === subscriptionPk && !raced) {
                raced = true;
                expect(
                  (await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: false })).json
                    .status,
                ).toBe('canceled');
              }
              return item;
            },
          },
        });
        const invitesBefore = botCalls('createChatInviteLink').length;
        await applySubscriptionInviteLinks(
          { ...runtime, store: racingStore },
          {
            teamId: team.team.id,
            kind: SUBSCRIPTION_INVITE_LINKS_DEADLINE_KIND,
            subjectId: subscription.id,
            projectId,
            dueAt,
          },
        );
        expect(raced).toBe(true);
        // The link made before the lost write is nobody's: revoked at once.
        const [orphan] = botCalls('createChatInviteLink').slice(invitesBefore);
        expect(orphan).toBeDefined();
        expect(botCalls('revokeChatInviteLink').at(-1)!.payload).toMatchObject({
          chat_id: Number(CHAT_ID),
          invite_link: expect.stringMatching(/^https:\/\/t\.me\/\+fakeInvite\d+$/),
        });
        expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).json).toMatchObject({
          status: 'canceled',
          invite_links: [],
        });
        expect(types(await newEvents())).toEqual(['subscription.canceled', 'member.access_revoked', 'member.churned']);
        expect(await linksDeadline(subscription.id)).toMatchObject({ due_at: dueAt });
        const callsBefore = telegram.calls.length;
        expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 1, failed: 0 });
        expect(telegram.calls).toHaveLength(callsBefore);
        expect(await linksDeadline(subscription.id)).toBeUndefined();
        expect(await newEvents()).toEqual([]);
      });

      it('drops the retry when the subscriber joined meanwhile (their member then holds the access)', async () => {
        const { secret, subscription } = await failedGrant({ display_name: 'Olga', platform_user_id: '94' });
        await deliver(chatMember(94, 'left', 'member'), secret);
        await newEvents();
        await expectRetryDropped(subscription.id);
        expect(await newEvents()).toEqual([]);
      });

      it('backs off like the member retries and gives up after the last attempt with a warning (no link made, the subscription stands)', async () => {
        const { subscriberId, planId } = await setUp({ display_name: 'Petra' });
        telegram.revoke(botToken); // every call is refused from now on (401)
        const subscription = (
          await call('POST', `/v1/projects/${projectId}/subscriptions`, {
            subscriber_id: subscriberId,
            plan_id: planId,
          })
        ).json;
        expect(subscription.invite_links).toEqual([]);
        const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
        try {
          const waits: number[] = [];
          let deadline = await linksDeadline(subscription.id);
          let error = deadline!.platform_error as { attempts: number; at: string; next_attempt_at: string | null };
          expect(error).toMatchObject({
            action: 'grant_access',
            attempts: 1,
            message: 'Telegram refused createChatInviteLink: Unauthorized (401).',
          });
          while (deadline) {
            waits.push(Date.parse(deadline.due_at as string) - Date.parse(error.at));
            clock.set(Date.parse(deadline.due_at as string));
            expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 1, failed: 0 });
            deadline = await linksDeadline(subscription.id);
            if (deadline) {
              expect(deadline.platform_error).toMatchObject({
                attempts: error.attempts + 1,
                at: isoTime(clock.nowMs()),
              });
              error = deadline.platform_error as typeof error;
            }
          }
          expect(waits).toEqual(
            Array.from({ length: PLATFORM_SYNC_MAX_ATTEMPTS - 1 }, (_, index) => platformRetryDelayMs(index + 1)),
          );
          expect(warn).toHaveBeenCalledWith('invite-link retries exhausted; the subscriber has no invite link', {
            subscription_id: subscription.id,
            project_id: projectId,
            attempts: PLATFORM_SYNC_MAX_ATTEMPTS,
            reason: 'Telegram refused createChatInviteLink: Unauthorized (401).',
          });
          // Given up: later runs call nothing; the subscription stood throughout.
          const callsBefore = telegram.calls.length;
          clock.advance(24 * 3600 * 1000);
          expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 0, failed: 0 });
          expect(telegram.calls).toHaveLength(callsBefore);
          expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).json).toMatchObject({
            status: 'active',
            invite_links: [],
          });
        } finally {
          warn.mockRestore();
        }
      });
    });

    it('backs off exponentially and gives up after the last attempt, leaving platform_error set', async () => {
      const { planId, subscriberId, memberId } = await joinedSubscriber(67);
      const subscription = (
        await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriberId, plan_id: planId })
      ).json;
      telegram.revoke(botToken); // every call is refused from now on (401)
      await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: false });

      const waits: number[] = [];
      let error = (await member(memberId)).platform_error;
      expect(error).toMatchObject({
        action: 'revoke_access',
        attempts: 1,
        message: 'Telegram refused banChatMember: Unauthorized (401).',
      });
      while (error.next_attempt_at !== null) {
        waits.push(Date.parse(error.next_attempt_at) - Date.parse(error.at));
        clock.set(Date.parse(error.next_attempt_at));
        const attempts = error.attempts;
        expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 1, failed: 0 });
        error = (await member(memberId)).platform_error;
        expect(error).toMatchObject({ action: 'revoke_access', attempts: attempts + 1, at: isoTime(clock.nowMs()) });
      }
      const minute = 60 * 1000;
      expect(waits).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 360, 360].map((minutes) => minutes * minute));
      expect(waits).toEqual(
        Array.from({ length: PLATFORM_SYNC_MAX_ATTEMPTS - 1 }, (_, index) => platformRetryDelayMs(index + 1)),
      );
      expect(error).toEqual({
        action: 'revoke_access',
        message: 'Telegram refused banChatMember: Unauthorized (401).',
        at: isoTime(clock.nowMs()),
        attempts: PLATFORM_SYNC_MAX_ATTEMPTS,
        next_attempt_at: null,
      });
      expect(await syncDeadline(memberId)).toBeUndefined();

      // Given up: later runs call nothing; the subscription's cancellation stood throughout.
      const callsBefore = telegram.calls.length;
      clock.advance(24 * 3600 * 1000);
      expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 0, failed: 0 });
      expect(telegram.calls).toHaveLength(callsBefore);
      expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).json.status).toBe('canceled');
    });
  });
});

describe('the /account command (D27)', () => {
  /** A private message `text` from Telegram user `from`. */
  const privateMessage = (from: number, text: string, chatType = 'private') => ({
    update_id: nextUpdateId++,
    message: {
      message_id: nextUpdateId,
      date: Math.floor(clock.nowMs() / 1000),
      chat: { id: chatType === 'private' ? from : Number(CHAT_ID), type: chatType },
      from: user(from),
      text,
    },
  });
  const repliesTo = (chatId: number) =>
    telegram.callsOf('sendMessage').filter((entry) => entry.token === botToken && entry.payload.chat_id === chatId);

  it('answers a linked subscriber with a fresh one-time portal link, and anyone else without revealing anything', async () => {
    const secret = await connect();
    const subscriber = await call('POST', `/v1/projects/${projectId}/subscribers`, {
      display_name: 'Linked reader',
      platform_user_id: '88',
      consent: false,
    });
    expect(subscriber.status, subscriber.text).toBe(201);

    expect((await deliver(privateMessage(88, '/account'), secret)).status).toBe(200);
    const [reply] = repliesTo(88);
    const url = /https:\/\/members\.example\/portal\/[0-9a-f-]+\/sign-in\?token=ppl_\w+/.exec(
      String(reply.payload.text),
    )?.[0];
    expect(url).toContain(`/portal/${projectId}/sign-in`);
    const { session } = await consumePortalLink(runtime, projectId, new URL(url!).searchParams.get('token')!);
    expect(session.subscriber_id).toBe(subscriber.json.id);

    expect((await deliver(privateMessage(99, '/account@club_bot'), secret)).status).toBe(200);
    const [unknown] = repliesTo(99);
    expect(unknown.payload.text).toContain('No membership was found');
    expect(String(unknown.payload.text)).not.toMatch(/portal|subscriber|[0-9a-f]{8}-/);

    // Other messages and group chats get no reply; a re-sent update is not answered twice.
    const before = telegram.callsOf('sendMessage').length;
    await deliver(privateMessage(88, 'hello'), secret);
    await deliver(privateMessage(88, '/account', 'supergroup'), secret);
    const update = privateMessage(88, '/account');
    await deliver(update, secret);
    expect((await deliver(update, secret)).body).toEqual({ ok: true, duplicate: true });
    expect(telegram.callsOf('sendMessage').length).toBe(before + 1);
  });
});
