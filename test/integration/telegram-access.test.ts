/**
 * Telegram (DESIGN D16, D22) with grammy pointed at a loopback fake of the Bot API: connecting a bot with its token
 * (getMe, setWebhook with a secret token, the token stored encrypted and never returned), the inbound hook `POST
 * /hooks/telegram/{project_id}` (secret-token refusal with the same answer for an unknown project, chat_member →
 * member.* events, my_chat_member → bot permissions, a replayed update_id changes nothing), personal invite links on
 * access grants (a join through one links the member to the subscriber), ban / kick / unban reaching the fake, outages
 * recorded on the member, a revoked token, disconnection, the web access check, and the private `/account` command
 * answering with a portal link (D27). Against DynamoDB Local; every event is checked against its published schema.
 */

import { describe, expect, it, vi } from 'vitest';
import { isoTime } from '../../shared/clock.js';
import { PLATFORM_SYNC_FIRST_DELAY_MS } from '../../shared/domain/members/platform-retry.js';
import { checkProjectAccess } from '../../shared/domain/subscriptions/access.js';
import { logger } from '../../shared/logger.js';
import { countingStore } from '../support/store.js';
import {
  CHAT_ID,
  botToken,
  call,
  chatMember,
  clock,
  deliver,
  newEvents,
  projectId,
  runtime,
  setUp,
  team,
  telegram,
  types,
  useTelegramFixture,
} from '../support/fixtures/telegram.js';

useTelegramFixture();

describe('access through the adapter', () => {
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
      await call('GET', `/v1/projects/${projectId}/access`, undefined, { query: { subscriber_id: subscriberId } })
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
    expect(
      (await call('GET', `/v1/projects/${projectId}/access`, undefined, { query: { member_id: memberId } })).json,
    ).toEqual(bySubscriber);
    // One read by subscriber (the subscriber's partition holds its summary and its subscriptions'); by member, the
    // member's first.
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
      (await call('GET', `/v1/projects/${projectId}/access`, undefined, { query: { member_id: memberId } })).json,
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
});
