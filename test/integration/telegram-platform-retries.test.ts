/**
 * Telegram (DESIGN D16, D22) with grammy pointed at a loopback fake of the Bot API: connecting a bot with its token
 * (getMe, setWebhook with a secret token, the token stored encrypted and never returned), the inbound hook `POST
 * /hooks/telegram/{project_id}` (secret-token refusal with the same answer for an unknown project, chat_member →
 * member.* events, my_chat_member → bot permissions, a replayed update_id changes nothing), personal invite links on
 * access grants (a join through one links the member to the subscriber), ban / kick / unban reaching the fake, outages
 * recorded on the member, a revoked token, disconnection, the web access check, and the private `/account` command
 * answering with a portal link (D27). Against DynamoDB Local; every event is checked against its published schema.
 */

import { describe, expect, it } from 'vitest';
import { DAY_MS, isoTime } from '../../shared/clock.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import {
  MEMBER_PLATFORM_SYNC_DEADLINE_KIND,
  PLATFORM_SYNC_FIRST_DELAY_MS,
  PLATFORM_SYNC_MAX_ATTEMPTS,
  platformRetryDelayMs,
} from '../../shared/domain/members/platform-retry.js';
import { applyMemberPlatformSync } from '../../shared/domain/subscriptions/platform-sync.js';
import { keys } from '../../shared/store/keys.js';
import { domainSnapshot } from '../support/guarantees.js';
import {
  CHAT_ID,
  botCalls,
  botToken,
  call,
  chatMember,
  clock,
  deliver,
  member,
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

/** setUp with a subscriber whose person already joined the chat; returns its member id too. */
async function joinedSubscriber(platformUserId: number) {
  const ids = await setUp({ display_name: `Person ${platformUserId}`, platform_user_id: String(platformUserId) });
  await deliver(chatMember(platformUserId, 'left', 'member'), ids.secret);
  const memberId = (await call('GET', `/v1/subscribers/${ids.subscriberId}`)).json.member_id as string;
  expect(memberId).toEqual(expect.any(String));
  await newEvents();
  return { ...ids, memberId };
}

const syncDeadline = (memberId: string) =>
  runtime.store.get(keys.deadline(team.team.id, MEMBER_PLATFORM_SYNC_DEADLINE_KIND, memberId));

describe('access through the adapter', () => {
  describe('durable retries of failed platform calls', () => {
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

      // Due: reconciled (the subscriber has access: a grant), the error cleared, the deadline gone, the link on the
      // subscription.
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
      clock.advance(DAY_MS);
      expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 0, failed: 0 });
      expect(telegram.calls).toHaveLength(callsBefore);
      expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).json.status).toBe('canceled');
    });
  });
});
