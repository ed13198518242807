/**
 * Telegram (DESIGN D16, D22) with grammy pointed at a loopback fake of the Bot API: connecting a bot with its token
 * (getMe, setWebhook with a secret token, the token stored encrypted and never returned), the inbound hook `POST
 * /hooks/telegram/{project_id}` (secret-token refusal with the same answer for an unknown project, chat_member →
 * member.* events, my_chat_member → bot permissions, a replayed update_id changes nothing), personal invite links on
 * access grants (a join through one links the member to the subscriber), ban / kick / unban reaching the fake, outages
 * recorded on the member, a revoked token, disconnection, the web access check, and the private `/account` command
 * answering with a portal link (D27). Against DynamoDB Local; every event is checked against its published schema.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { consumePortalLink } from '../../shared/domain/portal-sessions/links.js';
import { keys } from '../../shared/store/keys.js';
import { domainSnapshot, expectRestProblem } from '../support/guarantees.js';
import { expectPublishedEvent } from '../support/events.js';
import {
  BOT,
  CHAT_ID,
  PUBLIC_BASE_URL,
  botPromoted,
  botToken,
  call,
  chatMember,
  clock,
  connect,
  deliver,
  newEvents,
  nextUpdateId,
  takeUpdateId,
  projectId,
  runtime,
  team,
  telegram,
  types,
  user,
  useTelegramFixture,
} from '../support/fixtures/telegram.js';

useTelegramFixture();

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
    const promoted = botPromoted({
      can_invite_users: true,
      can_restrict_members: true,
      can_delete_messages: false,
      can_be_edited: false,
    });
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

describe('the /account command (D27)', () => {
  /** A private message `text` from Telegram user `from`. */
  const privateMessage = (from: number, text: string, chatType = 'private') => ({
    update_id: takeUpdateId(),
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
