/**
 * A failed renewal, end to end on the local stack (DESIGN D32): the in-process local service with an injected clock,
 * e-mail over SMTP to a capturing server (read back with mailparser), the Telegram Bot API and Stripe as loopback
 * fakes. Two fans pay through Stripe Checkout, join the group with their personal invite link and send the bot
 * `/start`. Each one's renewal fails at Stripe: the payment-failed notice arrives by e-mail (no `List-Unsubscribe`: an
 * essential kind) and by Telegram DM, both carrying the link to the invoice Stripe hosts, which opens it. As the clock
 * moves through the plan's 7 grace days, the fan who does not pay gets the day-3 and last-day notices, then loses
 * access (removed from the group, told so); the fan who pays the open invoice on day 1 gets nothing more and keeps
 * access.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import type { LocalService } from '../../shared/local/service.js';
import {
  telegramProjectOnStripe,
  telegramUpdate,
  type TelegramStripeProject,
} from '../support/fixtures/telegram-stripe-project.js';
import { startTestService } from '../support/local-service.js';
import { restApi } from '../support/rest-client.js';
import { startCapturingSmtpServer, type CapturingSmtpServer } from '../support/mail.js';
import { startFakeStripeApi, type FakeStripeApi } from '../support/stripe-api.js';
import { testClock } from '../support/store.js';
import { startFakeBotApi, type FakeBotApi } from '../support/telegram-bot-api.js';
import { DAY_MS } from '../../shared/clock.js';

const BOT = { id: 700400, username: 'renewal_bot' };
const CHAT_ID = -1007000000400;

let clock: ManualClock;
let smtp: CapturingSmtpServer;
let telegram: FakeBotApi;
let stripe: FakeStripeApi;
let service: LocalService;
const api = restApi(() => service);

beforeAll(async () => {
  clock = testClock();
  smtp = await startCapturingSmtpServer();
  telegram = await startFakeBotApi();
  stripe = await startFakeStripeApi({ nowMs: () => clock.nowMs() });
  service = await startTestService({
    clock,
    smtpUrl: smtp.url,
    mailFrom: 'members@club.example',
    integrations: { telegramApiRoot: telegram.url, stripeApiBaseUrl: stripe.url },
  });
}, 120_000);

afterAll(async () => {
  await service?.stop();
  await smtp?.close();
  await telegram?.stop();
  await stripe?.stop();
});

let nextUpdateId = 100;

/** A fan of `project`: pays through Checkout, joins the group through their invite link, sends the bot `/start`. */
async function fan(project: TelegramStripeProject, email: string, telegramUserId: number) {
  const before = new Set((await subscriptions(project)).map((subscription) => subscription.id));
  const session = await api('POST', `/v1/plans/${project.planId}/checkout-sessions`, { customer_email: email });
  await stripe.payCheckout(session.id, { email });
  const stripeSubscription = String(stripe.checkoutSessions.get(session.id)!.subscription);
  const subscription = await vi.waitFor(
    async () => {
      const made = (await subscriptions(project)).find((candidate) => !before.has(candidate.id));
      expect(made).toMatchObject({ status: 'active', has_access: true });
      expect(made!.invite_links).toHaveLength(1);
      return made!;
    },
    { timeout: 15_000, interval: 100 },
  );
  const user = { id: telegramUserId, is_bot: false, first_name: email.split('@')[0] };
  const date = Math.floor(clock.nowMs() / 1000);
  await telegramUpdate(service, project, {
    update_id: nextUpdateId++,
    chat_member: {
      chat: { id: CHAT_ID, type: 'supergroup', title: 'Readers' },
      from: user,
      date,
      old_chat_member: { status: 'left', user },
      new_chat_member: { status: 'member', user },
      invite_link: {
        invite_link: subscription.invite_links[0].url,
        creator: { id: BOT.id, is_bot: true, first_name: 'Bot' },
        creates_join_request: false,
        is_primary: false,
        is_revoked: false,
      },
    },
  });
  await telegramUpdate(service, project, {
    update_id: nextUpdateId++,
    message: { message_id: 1, date, chat: { id: telegramUserId, type: 'private' }, from: user, text: '/start' },
  });
  await service.runtime.idle();
  return { stripeSubscription, subscriptionId: subscription.id as string, subscriberId: subscription.subscriber_id };
}

async function subscriptions(project: TelegramStripeProject): Promise<any[]> {
  return (await api('GET', `/v1/projects/${project.projectId}/subscriptions?limit=100`)).data;
}

/** The kinds, channels and statuses of a subscriber's messages, oldest first. */
async function messagesOf(project: TelegramStripeProject, subscriberId: string): Promise<string[]> {
  const log = await api('GET', `/v1/projects/${project.projectId}/messages?subscriber_id=${subscriberId}&limit=100`);
  return (log.data as { kind: string; channel: string; status: string }[])
    .map((message) => `${message.kind}:${message.channel}:${message.status}`)
    .reverse();
}

/** Telegram DMs the bot sent to `chatId`, as texts. */
const dmsTo = (chatId: number) =>
  telegram
    .callsOf('sendMessage')
    .filter((call) => call.payload.chat_id === chatId)
    .map((call) => String(call.payload.text));

/** Moves the clock `days` ahead once everything of the present is done, then runs the deadline worker there. */
async function daysLater(days: number): Promise<void> {
  await service.runtime.idle();
  clock.advance(days * DAY_MS);
  await applyDueDeadlines(service.runtime, clock.nowMs());
  await service.runtime.idle();
}

describe('a renewal that fails at Stripe, on the local stack', () => {
  it('sends the payment-failed notice by e-mail and DM with the hosted invoice, then day 3, the last day and access removed; paying stops it', async () => {
    const project = await telegramProjectOnStripe({
      service,
      api,
      telegram,
      stripe,
      bot: BOT,
      chatId: CHAT_ID,
      nowMs: () => clock.nowMs(),
    });
    const template = await api('GET', `/v1/projects/${project.projectId}/message-templates/payment_failed`);
    await api('PUT', `/v1/projects/${project.projectId}/message-templates/payment_failed`, {
      delivery: 'both',
      email: template.email,
      bot: template.bot,
    });
    const ada = await fan(project, 'ada@example.test', 4101);
    const bob = await fan(project, 'bob@example.test', 4102);
    // The welcome went by e-mail (the bot had not been started yet); /start was answered.
    expect(smtp.messages.filter((mail) => mail.envelopeTo.includes('ada@example.test'))).toHaveLength(1);
    expect(dmsTo(4101)).toHaveLength(1);

    clock.advance(30 * DAY_MS);
    const adaInvoice = await stripe.failRenewal(ada.stripeSubscription);
    const bobInvoice = await stripe.failRenewal(bob.stripeSubscription);
    expect(adaInvoice).not.toBe(bobInvoice);
    const notice = await smtp.waitForMail(
      (mail) => mail.envelopeTo.includes('ada@example.test') && mail.text.includes(adaInvoice),
    );
    expect(notice.from).toContain('members@club.example');
    expect(notice.subject).toMatch(/payment/i);
    expect(notice.headers['list-unsubscribe']).toBeUndefined();
    const opened = await fetch(adaInvoice);
    expect(opened.status).toBe(200);
    await vi.waitFor(() => expect(dmsTo(4101).at(-1)).toContain(adaInvoice), { timeout: 10_000, interval: 100 });
    expect((await api('GET', `/v1/subscriptions/${ada.subscriptionId}`)).status).toBe('past_due');

    await daysLater(1);
    await stripe.payOpenInvoice(bob.stripeSubscription);
    await vi.waitFor(
      async () => expect((await api('GET', `/v1/subscriptions/${bob.subscriptionId}`)).status).toBe('active'),
      { timeout: 10_000, interval: 100 },
    );
    await daysLater(2); // day 3
    await daysLater(3); // day 6: the last day
    await daysLater(1); // day 7: grace is over
    const removed = await vi.waitFor(
      async () => {
        const subscription = await api('GET', `/v1/subscriptions/${ada.subscriptionId}`);
        expect(subscription).toMatchObject({ status: 'unpaid', has_access: false });
        expect(await messagesOf(project, ada.subscriberId)).toContain('access_removed:telegram:sent');
        return subscription;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(removed.invite_links).toEqual([]);
    expect(await messagesOf(project, ada.subscriberId)).toEqual([
      'welcome:email:sent',
      'payment_failed:telegram:sent',
      'payment_failed:email:sent',
      'payment_failed:telegram:sent',
      'payment_failed:email:sent',
      'grace_ending:telegram:sent',
      'access_removed:telegram:sent',
    ]);
    const adaMail = smtp.messages.filter((mail) => mail.envelopeTo.includes('ada@example.test'));
    expect(adaMail).toHaveLength(3);
    expect(adaMail.slice(1).every((mail) => mail.text.includes(adaInvoice))).toBe(true);
    expect(telegram.callsOf('banChatMember').map((call) => call.payload.user_id)).toContain(4101);

    // The fan who paid on day 1 got the day-0 notice only, and kept access.
    expect(await messagesOf(project, bob.subscriberId)).toEqual([
      'welcome:email:sent',
      'payment_failed:telegram:sent',
      'payment_failed:email:sent',
    ]);
    expect(await api('GET', `/v1/subscriptions/${bob.subscriptionId}`)).toMatchObject({
      status: 'active',
      has_access: true,
    });
    expect(telegram.callsOf('banChatMember').map((call) => call.payload.user_id)).not.toContain(4102);
  });
});
