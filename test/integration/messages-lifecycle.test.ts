/**
 * Lifecycle messages (DESIGN D32) against DynamoDB Local: the events that already exist make messages (welcome on a
 * grant, payment_failed when a renewal fails), at most once per occasion however often fan-out runs; the worker sends
 * each through the runtime's mail sender (one-click unsubscribe on non-essential kinds only), retries a transient
 * failure after a wait, records a bounce and never retries it, honours an opt-out for non-essential kinds, and the log
 * lists what happened without texts or links.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { processJobMessage } from '../../shared/domain/job-worker.js';
import { relayOutbox, sweep } from '../../shared/domain/webhook-deliveries/sweeper.js';
import { unsubscribeWithToken } from '../../shared/domain/messages/unsubscribe.js';
import { MailSendError, type OutgoingMail } from '../../shared/mail/port.js';
import {
  clock,
  grant,
  newSubscriber,
  ok,
  projectId,
  record,
  runtime,
  usePaymentsFixture,
} from '../support/fixtures/payments.js';
import { DAY_MS } from '../../shared/clock.js';

usePaymentsFixture();

/** What the recording mail sender saw, and the failures it is told to answer with next. */
let sent: OutgoingMail[];
let failures: MailSendError[];

beforeEach(() => {
  sent = [];
  failures = [];
  runtime.mail = {
    async send(mail) {
      const failure = failures.shift();
      if (failure) throw failure;
      sent.push(mail);
      return { messageId: `<${sent.length}@test>` };
    },
  };
});

/** Fans out the outbox (as the stream does), then runs every queued message-send once; returns their outcomes. */
async function deliver(): Promise<string[]> {
  await relayOutbox(runtime, clock.nowMs());
  const sends = runtime.messageSends.splice(0);
  const outcomes: string[] = [];
  for (const { message } of sends) outcomes.push(String(await processJobMessage(runtime, message)));
  return outcomes;
}

const messages = async (subscriberId: string) =>
  (await ok('GET', `/v1/projects/${projectId}/messages`, undefined, 200, { query: { subscriber_id: subscriberId } }))
    .data as Record<string, unknown>[];

describe('lifecycle messages', () => {
  it('welcomes a new member and tells them when a renewal fails, once each, with unsubscribe only where allowed', async () => {
    const subscriberId = await newSubscriber('Grace', { email: 'grace@example.test' });
    const subscription = await grant({ subscriber_id: subscriberId });
    expect(await deliver()).toEqual(['sent']);
    expect(sent).toHaveLength(1);
    expect(sent[0].to).toBe('grace@example.test');
    expect(sent[0].headers?.['List-Unsubscribe']).toMatch(/^<.*\/messages\/unsubscribe\?token=msu_[A-Za-z0-9]+>$/);
    expect(sent[0].headers?.['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');

    await record({ subscription_id: subscription.id, status: 'failed' });
    expect(await deliver()).toEqual(['sent']);
    expect(sent).toHaveLength(2);
    expect(sent[1].headers?.['List-Unsubscribe']).toBeUndefined();
    expect(sent[1].text).toContain(`/portal/${projectId}`);

    // Fanning the same events out again makes nothing twice.
    await relayOutbox(runtime, clock.nowMs());
    expect(runtime.messageSends).toEqual([]);

    const log = await messages(subscriberId);
    expect(log.map((message) => [message.kind, message.channel, message.status, message.attempts])).toEqual([
      ['payment_failed', 'email', 'sent', 1],
      ['welcome', 'email', 'sent', 1],
    ]);
    expect(JSON.stringify(log)).not.toMatch(/msu_|ppl_|token/);
  });

  it('follows a failed renewal with day-3 and last-day notices, then access removed after grace_days; a payment stops it', async () => {
    const subscriberId = await newSubscriber('Wim', { email: 'wim@example.test' });
    const subscription = await grant({ subscriber_id: subscriberId });
    await deliver();
    await record({ subscription_id: subscription.id, status: 'failed' });
    await deliver();
    const step = async (days: number) => {
      clock.advance(days * DAY_MS);
      await applyDueDeadlines(runtime, clock.nowMs());
      await deliver();
      return (await messages(subscriberId)).map((message) => message.kind);
    };
    expect(await step(2.5)).toEqual(['payment_failed', 'welcome']);
    expect(await step(0.5)).toEqual(['payment_failed', 'payment_failed', 'welcome']);
    expect(await step(2.9)).toEqual(['payment_failed', 'payment_failed', 'welcome']);
    expect(await step(0.1)).toEqual(['grace_ending', 'payment_failed', 'payment_failed', 'welcome']);
    expect(await step(1)).toEqual(['access_removed', 'grace_ending', 'payment_failed', 'payment_failed', 'welcome']);
    expect(await ok('GET', `/v1/subscriptions/${subscription.id}`)).toMatchObject({ status: 'unpaid' });
    expect(await step(30)).toHaveLength(5);

    const other = await newSubscriber('Paid', { email: 'paid@example.test' });
    const recovered = await grant({ subscriber_id: other });
    await deliver();
    await record({ subscription_id: recovered.id, status: 'failed' });
    await deliver();
    clock.advance(DAY_MS);
    await record({ subscription_id: recovered.id, status: 'succeeded' });
    await deliver();
    clock.advance(10 * DAY_MS);
    await applyDueDeadlines(runtime, clock.nowMs());
    await deliver();
    expect((await messages(other)).map((message) => message.kind)).toEqual(['payment_failed', 'welcome']);
  });

  it('retries a transient failure after a wait, and records a bounce without retrying it', async () => {
    const subscriberId = await newSubscriber('Linus', { email: 'linus@example.test' });
    failures.push(new MailSendError('transient', 'try later', 120));
    await grant({ subscriber_id: subscriberId });
    expect(await deliver()).toEqual(['retry_scheduled']);
    const [retry] = runtime.messageSends.splice(0);
    expect(retry.delaySeconds).toBe(120);
    expect(retry.message.attempt).toBe(2);
    expect((await messages(subscriberId))[0]).toMatchObject({ status: 'queued', attempts: 1 });
    // A stale repeat of attempt 1 sends nothing.
    expect(await processJobMessage(runtime, { ...retry.message, attempt: 1 })).toBe('skipped');
    expect(await processJobMessage(runtime, retry.message)).toBe('sent');
    expect(sent).toHaveLength(1);

    const other = await newSubscriber('Bounce', { email: 'bounce@example.test' });
    failures.push(new MailSendError('rejected', 'no such mailbox'));
    await grant({ subscriber_id: other });
    expect(await deliver()).toEqual(['failed']);
    expect((await messages(other))[0]).toMatchObject({ status: 'failed', attempts: 1 });
    expect(runtime.messageSends).toEqual([]);
  });

  it('re-sends a message whose queue message was lost, once, when the sweeper runs', async () => {
    const subscriberId = await newSubscriber('Ada', { email: 'ada@example.test' });
    await grant({ subscriber_id: subscriberId });
    await relayOutbox(runtime, clock.nowMs());
    // The queue message is lost (a crash after the message was written).
    const ours = () => runtime.messageSends.splice(0).filter(({ message }) => message.subscriber_id === subscriberId);
    expect(ours()).toHaveLength(1);
    expect((await messages(subscriberId))[0]).toMatchObject({ kind: 'welcome', status: 'queued', attempts: 0 });

    // Within the sweeper's grace it is still in flight: nothing is re-queued.
    await sweep(runtime);
    expect(ours()).toEqual([]);

    clock.advance(2 * 60_000);
    await sweep(runtime);
    const [again] = ours();
    expect(again.message).toMatchObject({ kind: 'message_send', subscriber_id: subscriberId, attempt: 1 });
    // Moved ahead in the index: the next sweep does not queue it twice.
    await sweep(runtime);
    expect(ours()).toEqual([]);
    expect(await processJobMessage(runtime, again.message)).toBe('sent');
    expect(await processJobMessage(runtime, again.message)).toBe('skipped');
    expect(sent.map((mail) => mail.to)).toEqual(['ada@example.test']);

    // Sent messages leave the index: much later, nothing comes back.
    clock.advance(DAY_MS);
    await sweep(runtime);
    expect(ours()).toEqual([]);
  });

  it('honours an opt-out for non-essential kinds', async () => {
    const subscriberId = await newSubscriber('Ada', { email: 'ada@example.test' });
    const subscription = await grant({ subscriber_id: subscriberId });
    await deliver();
    const unsubscribe = new URL(sent[0].headers!['List-Unsubscribe'].slice(1, -1), 'http://x');
    expect(await unsubscribeWithToken(runtime, unsubscribe.searchParams.get('token')!)).toBe(true);
    expect(await unsubscribeWithToken(runtime, 'msu_unknown')).toBe(false);

    await ok('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true });
    await deliver();
    const log = await messages(subscriberId);
    expect(log.find((message) => message.kind === 'cancellation_scheduled')).toMatchObject({
      status: 'skipped',
      failure_reason: expect.stringContaining('opted out'),
    });
    expect(sent).toHaveLength(1);
  });

  it('refuses the log of a subscriber of another project or team with NOT_FOUND', async () => {
    const problem = await ok('GET', `/v1/projects/${projectId}/messages`, undefined, 404, {
      query: { subscriber_id: '6f0c1d2e-1111-4222-8333-944455556666' },
    });
    expect(problem.code).toBe('NOT_FOUND');
  });
});
