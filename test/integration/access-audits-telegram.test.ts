/**
 * Access audits on Telegram (DESIGN D34), against the loopback Bot API: Telegram cannot list a chat's members, so the
 * audit counts the members the bot recorded that no subscriber is linked to, and asks `getChatMember` about each
 * entitled member; one gone from the chat without the bot seeing it is `member_left`, repaired with a new personal
 * invite link sent as any grant's (on the subscription, in `member.access_granted`). A member seen only because they
 * post in the linked group is recorded once, and counted; one held as left who posts again is joined again.
 */
import { describe, expect, it } from 'vitest';
import { processAccessAuditPage } from '../../shared/domain/access-audits/worker.js';
import { platformUserKey } from '../../shared/store/members.js';
import { countingStore } from '../support/store.js';
import {
  CHAT_ID,
  botCalls,
  call,
  chatMember,
  clock,
  deliver,
  newEvents,
  projectId,
  runtime,
  setUp,
  takeUpdateId,
  team,
  telegram,
  types,
  useTelegramFixture,
  user,
} from '../support/fixtures/telegram.js';

useTelegramFixture();

const audits = () => `/v1/projects/${projectId}/access-audits`;

/** A message `text` from `from` in chat `chat` (the linked group by default), with `extra` message fields. */
const message = (from: Record<string, unknown>, text: string, chat = CHAT_ID, extra: Record<string, unknown> = {}) => ({
  update_id: takeUpdateId(),
  message: {
    message_id: takeUpdateId(),
    date: 1_700_000_000,
    chat: { id: Number(chat), type: 'supergroup' },
    from,
    text,
    ...extra,
  },
});

/** Runs an audit to its end; answers the latest audit. */
async function runAudit() {
  expect((await call('POST', audits(), {})).status).toBe(202);
  while (runtime.auditPages.length) await processAccessAuditPage(runtime, runtime.auditPages.shift()!);
  const latest = (await call('GET', `${audits()}/latest`)).json;
  expect(latest.status).toBe('succeeded');
  return latest;
}

describe('access audits: Telegram', () => {
  it('counts unlinked members seen, finds an entitled member who left unseen, and repairs with a new invite link', async () => {
    const { secret, planId, subscriberId } = await setUp();
    const subscription = (
      await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriberId, plan_id: planId })
    ).json;
    const [link] = subscription.invite_links as { url: string }[];
    expect((await deliver(chatMember(77, 'left', 'member', { inviteLink: link.url }), secret)).status).toBe(200);
    expect((await deliver(chatMember(88, 'left', 'member'), secret)).status).toBe(200);

    const clean = await runAudit();
    expect(clean).toMatchObject({ open_findings: 0, unlinked_members: 1, audited: { platform_members: 2 } });
    expect(botCalls('getChatMember').map((entry) => [entry.payload.chat_id, entry.payload.user_id])).toEqual([
      [Number(CHAT_ID), 77],
    ]);

    telegram.setChatMemberStatus(CHAT_ID, 77, 'left');
    const latest = await runAudit();
    expect(latest.counts).toMatchObject({ member_left: 1 });
    const [left] = latest.findings;
    expect(left).toMatchObject({
      kind: 'member_left',
      objects: { platform_user_id: '77', subscription_id: subscription.id, subscriber_id: subscriberId },
      repair: { action: 'grant_access' },
    });
    const invites = botCalls('createChatInviteLink').length;
    await newEvents();
    expect((await call('POST', `${audits()}/findings/${left.id}/repair`)).json).toMatchObject({ status: 'repaired' });
    expect(botCalls('createChatInviteLink')).toHaveLength(invites + 1);
    // The new link reaches the subscriber as any grant's does: on the subscription and in member.access_granted.
    const [granted] = await newEvents();
    expect(granted).toMatchObject({
      type: 'member.access_granted',
      data: { subscriber: { id: subscriberId }, member: { platform_user_id: '77' } },
    });
    const newLink = (granted.data as { invite_link: { url: string } }).invite_link;
    expect(newLink.url).not.toBe(link.url);
    const links = (await call('GET', `/v1/subscriptions/${subscription.id}`)).json.invite_links as { url: string }[];
    expect(links.map((entry) => entry.url)).toContain(newLink.url);
  });

  it('records a member seen only posting in the linked group once, and counts them unlinked', async () => {
    const { secret } = await setUp();
    expect((await deliver(message(user(91), 'hello'), secret)).status).toBe(200);
    const [joined, ...others] = await newEvents();
    expect(others).toEqual([]);
    expect(joined).toMatchObject({
      type: 'member.joined',
      data: { member: { platform_user_id: '91', status: 'joined', username: 'user91' }, subscriber: null },
    });
    // Seen again, a bot, someone leaving (the service message's sender), another chat: nothing more is recorded.
    await deliver(message(user(91), 'again'), secret);
    await deliver(message({ ...user(92), is_bot: true }, 'beep'), secret);
    await deliver(message(user(93), '', CHAT_ID, { left_chat_member: user(93) }), secret);
    await deliver(message(user(94), 'elsewhere', '-1009999999999'), secret);
    expect(types(await newEvents())).toEqual([]);

    expect(await runAudit()).toMatchObject({ unlinked_members: 1, audited: { platform_members: 1 } });
  });

  it('records a member held as left who writes in the group again as joined, once, and not for a late message', async () => {
    const { secret } = await setUp();
    const nowSeconds = () => Math.floor(clock.nowMs() / 1000);
    await deliver(message(user(95), 'hello'), secret);
    await deliver(chatMember(95, 'member', 'left'), secret);
    expect(types(await newEvents())).toEqual(['member.joined', 'member.left']);
    // Sent before they left, delivered late: they stay left.
    await deliver(message(user(95), 'late', CHAT_ID, { date: nowSeconds() - 60 }), secret);
    expect(await newEvents()).toEqual([]);

    clock.advance(60_000);
    await deliver(message(user(95), 'back', CHAT_ID, { date: nowSeconds() }), secret);
    const [joined, ...others] = await newEvents();
    expect(others).toEqual([]);
    const now = new Date(clock.nowMs()).toISOString();
    expect(joined).toMatchObject({
      type: 'member.joined',
      data: { member: { platform_user_id: '95', status: 'joined', joined_at: now, status_changed_at: now } },
    });
    // Joined already: writing again records nothing.
    await deliver(message(user(95), 'again', CHAT_ID, { date: nowSeconds() }), secret);
    expect(await newEvents()).toEqual([]);
  });

  it('reads only the platform-user claim for a known sender’s message, whatever their status', async () => {
    const { secret } = await setUp();
    const nowSeconds = () => Math.floor(clock.nowMs() / 1000);
    const counting = countingStore(runtime.store);
    const store = runtime.store;
    const claimKey = platformUserKey(team.team.id, projectId, '96');
    /** The DynamoDB requests of delivering `update`, after the credential's (the same for any update). */
    const requestsOf = async (update: Record<string, unknown>) => {
      runtime.store = counting.store;
      counting.reset();
      try {
        expect((await deliver(update, secret)).status).toBe(200);
      } finally {
        runtime.store = store;
      }
      const sent = counting.sent();
      const claimRead = sent.findIndex((request) => JSON.stringify(request.input.Key) === JSON.stringify(claimKey));
      expect(claimRead).toBeGreaterThanOrEqual(0);
      return sent.slice(claimRead).map((request) => request.command);
    };
    await deliver(message(user(96), 'hello'), secret);
    expect(await requestsOf(message(user(96), 'again', CHAT_ID, { date: nowSeconds() }))).toEqual(['GetCommand']);

    await deliver(chatMember(96, 'member', 'left'), secret);
    clock.advance(60_000);
    // Held as left: a message sent before that reads the claim alone; one sent after makes them joined.
    expect(await requestsOf(message(user(96), 'late', CHAT_ID, { date: nowSeconds() - 120 }))).toEqual(['GetCommand']);
    await newEvents();
    await deliver(message(user(96), 'back', CHAT_ID, { date: nowSeconds() }), secret);
    expect(types(await newEvents())).toEqual(['member.joined']);
    expect(await requestsOf(message(user(96), 'again', CHAT_ID, { date: nowSeconds() }))).toEqual(['GetCommand']);

    await deliver(chatMember(96, 'member', 'kicked'), secret);
    expect(types(await newEvents())).toEqual(['member.banned']);
    expect(await requestsOf(message(user(96), 'banned', CHAT_ID, { date: nowSeconds() + 60 }))).toEqual(['GetCommand']);
    expect(await newEvents()).toEqual([]);
  });
});
