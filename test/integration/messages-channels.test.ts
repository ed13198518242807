/**
 * Messages through real channels (DESIGN D32) against DynamoDB Local: e-mail over SMTP to a capturing server (read back
 * with mailparser) and DMs through the Telegram Bot API fake. A member who sent `/start` gets the payment-failed notice
 * both ways when the template asks for both; `/stop` opts out of non-essential kinds; a 403 from Telegram (the member
 * blocked the bot) is recorded and the bot is not tried again; a DM over the bot's 30 messages a second waits, without
 * using up an attempt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { processJobMessage } from '../../shared/domain/job-worker.js';
import { relayOutbox } from '../../shared/domain/webhook-deliveries/sweeper.js';
import { consumeRateLimit } from '../../shared/limits/rate-limit.js';
import { smtpMailSender } from '../../shared/mail/nodemailer.js';
import { startCapturingSmtpServer, type CapturingSmtpServer } from '../support/mail.js';
import {
  botCalls,
  call,
  clock,
  deliver,
  projectId,
  runtime,
  setUp,
  takeUpdateId,
  telegram,
  useTelegramFixture,
  user,
} from '../support/fixtures/telegram.js';
import { DAY_MS } from '../../shared/clock.js';

useTelegramFixture();

let smtp: CapturingSmtpServer;
beforeAll(async () => {
  smtp = await startCapturingSmtpServer();
});
afterAll(async () => {
  await smtp.close();
});
const TELEGRAM_USER = 4242;

/** Fans out the outbox, then runs every queued message-send once. */
async function send(): Promise<void> {
  await relayOutbox(runtime, clock.nowMs());
  for (const { message } of runtime.messageSends.splice(0)) await processJobMessage(runtime, message);
}

/** A private message to the bot from the member. */
const privateMessage = (text: string) => ({
  update_id: takeUpdateId(),
  message: {
    message_id: 1,
    date: Math.floor(clock.nowMs() / 1000),
    chat: { id: TELEGRAM_USER, type: 'private' },
    from: user(TELEGRAM_USER),
    text,
  },
});

const dmsTo = () => botCalls('sendMessage').filter((entry) => entry.payload.chat_id === TELEGRAM_USER);

/** A member with an address and a Telegram account, on a monthly plan, who started the bot. */
async function member(address: string) {
  runtime.mail = smtpMailSender(smtp.url, 'members@club.example');
  const { secret, planId, subscriberId } = await setUp({
    display_name: 'Ada',
    email: address,
    platform_user_id: String(TELEGRAM_USER),
    consent: true,
  });
  expect((await deliver(privateMessage('/start'), secret)).status).toBe(200);
  await call('PUT', `/v1/projects/${projectId}/payment-provider`, { provider: 'manual' });
  const subscription = (
    await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriberId, plan_id: planId })
  ).json;
  await send();
  return { secret, subscriberId, subscription };
}

describe('messages through e-mail and Telegram', () => {
  it('sends the payment-failed notice by e-mail and DM, then day 3 and the last day, then access removed', async () => {
    const { subscriberId, subscription } = await member('ada@example.test');
    const template = (await call('GET', `/v1/projects/${projectId}/message-templates/payment_failed`)).json;
    const put = await call('PUT', `/v1/projects/${projectId}/message-templates/payment_failed`, {
      delivery: 'both',
      email: template.email,
      bot: template.bot,
    });
    expect(put.status, put.text).toBe(200);
    // The welcome went to the bot only (preferred channel).
    expect(dmsTo()).toHaveLength(2); // the /start answer and the welcome
    expect(smtp.messages.filter((mail) => mail.envelopeTo.includes('ada@example.test'))).toHaveLength(0);

    const failed = await call('POST', `/v1/projects/${projectId}/payments`, {
      subscription_id: subscription.id,
      status: 'failed',
    });
    expect(failed.status, failed.text).toBe(201);
    await send();
    const notice = await smtp.waitForMail((mail) => mail.envelopeTo.includes('ada@example.test'));
    expect(notice.from).toContain('members@club.example');
    expect(notice.subject.length).toBeGreaterThan(0);
    expect(notice.text).toContain(`/portal/${projectId}`);
    expect(notice.headers['list-unsubscribe']).toBeUndefined();
    expect(String(dmsTo().at(-1)!.payload.text)).toContain(`/portal/${projectId}`);

    for (const days of [3, 3]) {
      clock.advance(days * DAY_MS);
      await applyDueDeadlines(runtime, clock.nowMs());
      await send();
    }
    clock.advance(DAY_MS);
    await applyDueDeadlines(runtime, clock.nowMs());
    await send();
    const log = await call('GET', `/v1/projects/${projectId}/messages`, undefined, {
      query: { subscriber_id: subscriberId },
    });
    const sent = (log.json.data as { kind: string; channel: string; status: string }[]).map(
      (message) => `${message.kind}:${message.channel}:${message.status}`,
    );
    expect(sent).toEqual([
      'access_removed:telegram:sent',
      'grace_ending:telegram:sent',
      'payment_failed:email:sent',
      'payment_failed:telegram:sent',
      'payment_failed:email:sent',
      'payment_failed:telegram:sent',
      'welcome:telegram:sent',
    ]);
    expect(smtp.messages.filter((mail) => mail.envelopeTo.includes('ada@example.test'))).toHaveLength(2);
  });

  it('records a member who blocked the bot and reaches them by e-mail from then on; /stop opts out', async () => {
    const { secret, subscriberId, subscription } = await member('linus@example.test');
    telegram.failNext('sendMessage', { error_code: 403, description: 'Forbidden: bot was blocked by the user' });
    await call('POST', `/v1/subscriptions/${subscription.id}/pause`, {});
    await send();
    await call('POST', `/v1/subscriptions/${subscription.id}/resume`, {});
    await send();
    const log = await call('GET', `/v1/projects/${projectId}/messages`, undefined, {
      query: { subscriber_id: subscriberId },
    });
    expect(
      (log.json.data as { kind: string; channel: string; status: string }[]).map(
        (message) => `${message.kind}:${message.channel}:${message.status}`,
      ),
    ).toEqual(['resumed:email:sent', 'paused:telegram:failed', 'welcome:telegram:sent']);

    expect((await deliver(privateMessage('/stop'), secret)).status).toBe(200);
    expect(String(dmsTo().at(-1)!.payload.text)).toMatch(/^Done: you will only get essential notices/);
    clock.advance(60_000);
    await call('POST', `/v1/subscriptions/${subscription.id}/pause`, {});
    await send();
    const after = await call('GET', `/v1/projects/${projectId}/messages`, undefined, {
      query: { subscriber_id: subscriberId },
    });
    expect(after.json.data[0]).toMatchObject({ kind: 'paused', status: 'skipped' });
  });

  it('puts off a DM over the bot\u2019s 30 messages a second, without counting it as an attempt, then sends it', async () => {
    const { subscriberId, subscription } = await member('grace@example.test');
    // The welcome was the first DM of this second; 29 more make 30.
    await consumeRateLimit(runtime.store, clock, 'telegram-messages', projectId, 29);
    await call('POST', `/v1/subscriptions/${subscription.id}/pause`, {});
    await relayOutbox(runtime, clock.nowMs());
    const [first] = runtime.messageSends.splice(0);
    expect(await processJobMessage(runtime, first.message)).toBe('deferred');
    const [later] = runtime.messageSends.splice(0);
    expect(later.message).toEqual(first.message);
    expect(later.delaySeconds).toBeGreaterThanOrEqual(1);
    expect(later.delaySeconds).toBeLessThanOrEqual(3);
    const log = async () =>
      (await call('GET', `/v1/projects/${projectId}/messages`, undefined, { query: { subscriber_id: subscriberId } }))
        .json.data[0];
    expect(await log()).toMatchObject({ kind: 'paused', channel: 'telegram', status: 'queued', attempts: 0 });

    clock.advance(Math.ceil(later.delaySeconds) * 1000);
    expect(await processJobMessage(runtime, later.message)).toBe('sent');
    expect(await log()).toMatchObject({ kind: 'paused', channel: 'telegram', status: 'sent', attempts: 1 });
    expect(dmsTo()).toHaveLength(3); // the /start answer, the welcome, the pause notice
  });
});
