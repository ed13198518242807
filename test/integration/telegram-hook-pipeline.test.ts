/**
 * Telegram's updates run through the one pipeline (DESIGN D22, D35) as internal operations: a membership change or a
 * group message's new sender as `recordPlatformMembership`, the bot's rights as `recordBotPermissions`. One activity
 * entry per applied update (surface `hook`, no token, the update id as `request_id`); a re-sent update writes none; a
 * locked team's members are still recorded (the platform changed already, D20). Against DynamoDB Local, with grammy
 * pointed at a loopback fake of the Bot API.
 */
import { describe, expect, it } from 'vitest';
import { changeTier } from '../../shared/domain/billing/changes.js';
import { lockTeam } from '../support/billing.js';
import {
  activityOf,
  botPromoted,
  CHAT_ID,
  chatMember,
  clock,
  deliver,
  newEvents,
  runtime,
  setUp,
  takeUpdateId,
  team,
  types,
  useTelegramFixture,
  user,
} from '../support/fixtures/telegram.js';

useTelegramFixture();

/** The team's activity entries of surface `hook`, oldest first, in the fields the test reads. */
const hookEntries = async () =>
  (await activityOf('hook')).map(({ token_id, operation, outcome, request_id }) => ({
    token_id,
    operation,
    outcome,
    request_id,
  }));

const entryOf = (operation: string, updateId: number) => ({
  token_id: null,
  operation,
  outcome: 'ok',
  request_id: `telegram:${updateId}`,
});

describe('Telegram updates through the pipeline', () => {
  it('logs each applied update once: a join, the bot’s new rights and a new sender in the group; a re-sent one not', async () => {
    const { secret } = await setUp();
    const joined = chatMember(77, 'left', 'member');
    expect(await deliver(joined, secret)).toEqual({ status: 200, body: { ok: true } });
    expect(await deliver(joined, secret)).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    const promoted = botPromoted({ can_invite_users: true });
    expect((await deliver(promoted, secret)).status).toBe(200);
    const message = {
      update_id: takeUpdateId(),
      message: {
        message_id: 1,
        chat: { id: Number(CHAT_ID), type: 'supergroup' },
        from: user(88),
        date: Math.floor(clock.nowMs() / 1000),
        text: 'hello',
      },
    };
    expect((await deliver(message, secret)).status).toBe(200);
    expect(types(await newEvents())).toEqual(['member.joined', 'project.bot_permissions_changed', 'member.joined']);

    expect(await hookEntries()).toEqual([
      entryOf('recordPlatformMembership', joined.update_id),
      entryOf('recordBotPermissions', promoted.update_id),
      entryOf('recordPlatformMembership', message.update_id),
    ]);
  });

  it('records a locked team’s members: the lockdown holds back creator writes, never what the platform reports', async () => {
    const { secret } = await setUp();
    await changeTier(runtime, team.team.id, 'free'); // locked from a paid tier's unpaid first invoice
    await lockTeam(runtime, team.team.id);
    const joined = chatMember(78, 'left', 'member');
    expect(await deliver(joined, secret)).toEqual({ status: 200, body: { ok: true } });
    expect(types(await newEvents())).toContain('member.joined');
    expect(await hookEntries()).toEqual([entryOf('recordPlatformMembership', joined.update_id)]);
  });

  it('validates what an update asks of the operation: a user name longer than any Telegram allows is refused, logged, not stored', async () => {
    const { secret } = await setUp();
    const joined = chatMember(79, 'left', 'member');
    joined.chat_member.new_chat_member.user.username = 'x'.repeat(300);
    expect(await deliver(joined, secret)).toEqual({
      status: 400,
      body: { error: 'The update does not fit the operation’s input.' },
    });
    expect(await newEvents()).toEqual([]);
    expect(await hookEntries()).toEqual([
      { ...entryOf('recordPlatformMembership', joined.update_id), outcome: 'VALIDATION_FAILED' },
    ]);
  });
});
