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
import { DAY_MS, isoTime } from '../../shared/clock.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import {
  PLATFORM_SYNC_FIRST_DELAY_MS,
  PLATFORM_SYNC_MAX_ATTEMPTS,
  platformRetryDelayMs,
} from '../../shared/domain/members/platform-retry.js';
import { SUBSCRIPTION_INVITE_LINKS_DEADLINE_KIND } from '../../shared/domain/subscriptions/invite-link-retry.js';
import { applySubscriptionInviteLinks } from '../../shared/domain/subscriptions/platform-sync.js';
import { logger } from '../../shared/logger.js';
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
  describe('durable retries of failed platform calls', () => {
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

          // Applying it again, through the worker or the handler with the old deadline, changes nothing and calls
          // nothing.
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
          clock.advance(DAY_MS);
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
  });
});
