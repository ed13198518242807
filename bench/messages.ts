/**
 * `npm run bench` part `messages` (DESIGN D32): a broadcast to N consenting subscribers, end to end through the local
 * delivery queue — its batches, then one `message_send` per recipient rendered and sent by the message worker — timed
 * from the broadcast's creation until every message has its outcome. Channel `email`: over SMTP to a loopback server
 * that accepts everything (`smtp-sink.ts`); channel `telegram`: DMs through the loopback Bot API fake, under the
 * service's own limit of 30 Telegram messages per second.
 * The subscribers are seeded with BatchWriteItem in the store adapters' own item shapes (not measured).
 *
 * @module
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../shared/clock.js';
import { localKeyEncryptionKey } from '../shared/credentials/local-key.js';
import { createBroadcast, getBroadcast } from '../shared/domain/messages/broadcasts.js';
import { CreateBroadcastRequest } from '../shared/domain/messages/broadcast-schema.js';
import type { Broadcast } from '../shared/domain/messages/broadcast-schema.js';
import { createPlan } from '../shared/domain/plans/creation.js';
import { CreatePlanRequest } from '../shared/domain/plans/schema.js';
import { createProject } from '../shared/domain/projects/creation.js';
import { ConnectBotRequest, ConnectPaymentProviderRequest } from '../shared/domain/projects/schema.js';
import { connectPaymentProvider } from '../shared/domain/projects/payment-provider.js';
import { connectBot } from '../shared/domain/projects/bot.js';
import { createSubscriber, toSubscriber } from '../shared/domain/subscribers/repository.js';
import { createSubscription } from '../shared/domain/subscriptions/creation.js';
import { CreateSubscriptionRequest } from '../shared/domain/subscriptions/schema.js';
import { createLocalRuntime } from '../shared/local/runtime.js';
import { smtpMailSender } from '../shared/mail/nodemailer.js';
import { messageStore } from '../shared/store/messages.js';
import type { Store } from '../shared/store/store.js';
import { subscriberStore } from '../shared/store/subscribers.js';
import { putNewSubscription, writeSubscriptionIndex } from '../shared/store/subscriptions/writes.js';
import { seedTeam } from '../test/support/store.js';
import { startFakeBotApi } from '../test/support/telegram-bot-api.js';
import { startSmtpSink } from './smtp-sink.js';
import { batchWrite, recordingTransaction } from './seeding.js';

/** What the broadcast bench measured. */
export interface BroadcastFigures {
  channel: 'email' | 'telegram';
  recipients: number;
  /** From the broadcast's creation until every message was sent (the queue idle), in seconds. */
  seconds: number;
  messagesPerSecond: number;
  /** The job's counts at the end, and the messages the SMTP server or the Bot API fake accepted. */
  counts: Broadcast['counts'];
  accepted: number;
  /** Attempts that failed for a while (an SMTP timeout) and were tried again: each may have reached the server. */
  retries: number;
  /** Sends put off because the bot was at its message rate (no attempt made; Telegram only). */
  deferred: number;
}

/**
 * Seeds `recipients` consenting subscribers with an active subscription in a new team and project on `store` (with
 * `channel` telegram: linked to a Telegram account, having started the project's bot), then broadcasts to them through
 * a local runtime (`concurrency` messages in flight) that sends over SMTP or to the Bot API fake; returns the figures.
 * Throws on any error of the run.
 */
export async function measureBroadcast(options: {
  store: Store;
  channel: 'email' | 'telegram';
  recipients: number;
  concurrency: number;
  progress: (line: string) => void;
}): Promise<BroadcastFigures> {
  const smtp = await startSmtpSink();
  const telegram = await startFakeBotApi();
  const telegramAccepted = () => telegram.callsOf('sendMessage').length;
  const outcomes = new Map<string, number>();
  const runtime = createLocalRuntime({
    onMessage: (line) => outcomes.set(line.outcome, (outcomes.get(line.outcome) ?? 0) + 1),
    store: options.store,
    transport: { send: () => Promise.reject(new Error('no webhooks in this bench')) },
    mail: smtpMailSender(smtp.url, 'bench@example.com'),
    clock: systemClock,
    concurrency: options.concurrency,
    teamConcurrency: options.concurrency,
  });
  runtime.integrations = {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: telegram.url,
    stripeApiBaseUrl: 'http://127.0.0.1:9',
    publicBaseUrl: 'https://members.example',
    retry: { retries: 0, minTimeoutMs: 1 },
  };
  const viaTelegram = options.channel === 'telegram';
  try {
    const { principal } = await seedTeam(options.store, systemClock);
    const project = await createProject(runtime, principal, {
      name: 'Bench broadcasts',
      platform_type: viaTelegram ? 'telegram' : 'web',
    });
    if (viaTelegram) {
      const token = `700500:${'b'.repeat(35)}`;
      telegram.addBot(token, { id: 700500, username: 'bench_bot' });
      await connectBot(runtime, principal, project.id, ConnectBotRequest.parse({ token }));
    }
    await connectPaymentProvider(
      runtime,
      principal,
      project.id,
      ConnectPaymentProviderRequest.parse({ provider: 'manual' }),
    );
    const plan = await createPlan(
      runtime,
      principal,
      project.id,
      CreatePlanRequest.parse({ name: 'Monthly', amount: 500, currency: 'EUR', interval: 'month' }),
    );
    const first = await createSubscriber(runtime, principal, project.id, {
      display_name: 'Fan 0',
      email: 'fan0@example.com',
      consent: true,
      ...(viaTelegram ? { platform_user_id: '900000' } : {}),
    });
    const template = await createSubscription(
      runtime,
      principal,
      project.id,
      CreateSubscriptionRequest.parse({ subscriber_id: first.id, plan_id: plan.id }),
    );
    const subscriber = toSubscriber(
      (await subscriberStore.read(options.store, principal.teamId, project.id, first.id))!,
      {
        contact: true,
      },
    );
    options.progress(`messages: seeding ${options.recipients} consenting subscribers (BatchWriteItem)`);
    const tx = recordingTransaction();
    const subscriberIds = [first.id];
    for (let index = 1; index < options.recipients; index++) {
      const fan = {
        ...subscriber,
        id: randomUUID(),
        display_name: `Fan ${index}`,
        ...(viaTelegram ? { platform_user_id: String(900000 + index) } : {}),
      };
      subscriberIds.push(fan.id);
      const email = `fan${index}@example.com`;
      subscriberStore.create(
        tx,
        principal.teamId,
        subscriberStore.newItem(principal.teamId, fan, { email, phone: null }),
        fan,
      );
      const subscription = { ...template, id: randomUUID(), subscriber_id: fan.id };
      putNewSubscription(tx, principal.teamId, subscription, null, null);
      writeSubscriptionIndex(tx, principal.teamId, subscription);
    }
    await batchWrite(options.store, tx.puts);
    if (viaTelegram) {
      const started = new Date().toISOString();
      for (const subscriberId of subscriberIds)
        await messageStore.setPreference(
          options.store,
          { teamId: principal.teamId, projectId: project.id, subscriberId },
          'bot_started_at',
          started,
        );
    }
    // The welcome messages of the template subscription's events are not part of the figure.
    await runtime.idle();
    const accepted = () => (viaTelegram ? telegramAccepted() : smtp.accepted());
    const welcomes = accepted();
    outcomes.clear();

    options.progress(
      `messages: a broadcast to ${options.recipients} subscribers ${viaTelegram ? 'by Telegram DM' : 'over SMTP'}`,
    );
    const started = performance.now();
    const job = await createBroadcast(
      runtime,
      principal,
      project.id,
      CreateBroadcastRequest.parse({
        audience: { plan_ids: [plan.id] },
        subject: 'News for {{ subscriber.name }}',
        body: 'Hi {{ subscriber.name }}, we go live at 8 pm on {{ project.name }}.',
      }),
    );
    // Until every message has its outcome (a retry waits 10 s or more, which the queue's idle does not wait for).
    let done = await getBroadcast(runtime, principal, project.id, job.id);
    for (
      let round = 0;
      done.status !== 'completed' || done.counts.sent + done.counts.failed < done.counts.queued;
      round++
    ) {
      if (round > 0) await new Promise((resolve) => setTimeout(resolve, 500));
      await runtime.idle();
      done = await getBroadcast(runtime, principal, project.id, job.id);
    }
    const seconds = (performance.now() - started) / 1000;
    return {
      channel: options.channel,
      recipients: options.recipients,
      seconds,
      messagesPerSecond: done.counts.sent / seconds,
      counts: done.counts,
      accepted: accepted() - welcomes,
      retries: outcomes.get('retry_scheduled') ?? 0,
      deferred: outcomes.get('deferred') ?? 0,
    };
  } finally {
    await runtime.stop();
    await smtp.close();
    await telegram.stop();
  }
}
