/**
 * Broadcasts (DESIGN D32) against DynamoDB Local: a broadcast reaches exactly the consenting, not opted-out
 * subscribers whose subscriptions match its audience, runs as a job of batches through the delivery queue with its
 * counts readable as it goes, is idempotent on its Idempotency-Key and on its batch messages, and sends each message
 * exactly once when a batch crashes in the middle and is run again (by the queue's retry or the sweeper).
 */
import { randomUUID } from 'node:crypto';
import pMap from 'p-map';
import { beforeEach, describe, expect, it } from 'vitest';
import { isoTime } from '../../shared/clock.js';
import { createSubscription } from '../../shared/domain/subscriptions/creation.js';
import { CreateSubscriptionRequest } from '../../shared/domain/subscriptions/schema.js';
import { processJobMessage } from '../../shared/domain/job-worker.js';
import { SWEEP_GRACE_MS } from '../../shared/domain/webhook-deliveries/policy.js';
import { sweep } from '../../shared/domain/webhook-deliveries/sweeper.js';
import { restartStalledBroadcasts } from '../../shared/domain/messages/broadcast-worker.js';
import type { OutgoingMail } from '../../shared/mail/port.js';
import type { Runtime } from '../../shared/runtime.js';
import { messageStore } from '../../shared/store/messages.js';
import { subscriberStore } from '../../shared/store/subscribers.js';
import { putNewSubscription, writeSubscriptionIndex } from '../../shared/store/subscriptions/writes.js';
import { toSubscriber } from '../../shared/domain/subscribers/repository.js';
import { batchWrite, recordingTransaction } from '../../bench/seeding.js';
import type { Store } from '../../shared/store/store.js';
import {
  call,
  clock,
  free,
  gold,
  newSubscriber,
  ok,
  projectId,
  runtime,
  subscriberId,
  team,
  usePaymentsFixture,
} from '../support/fixtures/payments.js';

usePaymentsFixture();

/** What the recording mail sender saw. */
let sent: OutgoingMail[];

beforeEach(() => {
  sent = [];
  runtime.mail = {
    async send(mail) {
      sent.push(mail);
      return { messageId: `<${sent.length}@test>` };
    },
  };
});

const broadcasts = `/v1/projects/${'{project}'}/broadcasts`;
const path = (suffix = '') => broadcasts.replace('{project}', projectId) + suffix;
const body = (audience: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  audience,
  subject: 'News for {{ subscriber.name }}',
  body: 'Hi {{ subscriber.name }}, we go live at 8 pm on {{ project.name }}.',
  ...extra,
});

/** Subscribes `subscriber` to `planId` (active at once: no trial) through the domain, as the REST route does. */
async function subscribe(subscriber: string, planId: string): Promise<void> {
  await createSubscription(
    runtime,
    team.principal,
    projectId,
    CreateSubscriptionRequest.parse({ subscriber_id: subscriber, plan_id: planId }),
  );
}

/** Opts a subscriber out of non-essential messages (as the unsubscribe link does). */
async function optOut(subscriber: string): Promise<void> {
  await messageStore.setPreference(
    runtime.store,
    { teamId: team.team.id, projectId, subscriberId: subscriber },
    'opted_out_at',
    isoTime(clock.nowMs()),
  );
}

/** Runs every queued broadcast batch (and the batches they queue) on `on`; returns their outcomes. */
async function runBatches(on: Runtime = runtime): Promise<string[]> {
  const outcomes: string[] = [];
  for (let message = runtime.broadcastBatches.shift(); message; message = runtime.broadcastBatches.shift())
    outcomes.push(String(await processJobMessage(on, message)));
  return outcomes;
}

/** Runs every queued message-send once; returns their outcomes. */
async function runSends(): Promise<string[]> {
  const sends = runtime.messageSends.splice(0);
  return pMap(sends, async ({ message }) => String(await processJobMessage(runtime, message)), {
    concurrency: 8,
  });
}

describe('a broadcast to a mixed audience', () => {
  it('queues exactly the consenting, not opted-out subscribers in the audience, and counts what happens', async () => {
    await subscribe(subscriberId, gold.id); // Ada: consents
    const bea = await newSubscriber('Bea', { email: 'bea@example.com', consent: true });
    const cy = await newSubscriber('Cy', { email: 'cy@example.com', consent: false });
    const dee = await newSubscriber('Dee', { email: 'dee@example.com', consent: true });
    const eve = await newSubscriber('Eve', { email: 'eve@example.com', consent: true });
    for (const subscriber of [bea, cy, dee]) await subscribe(subscriber, gold.id);
    await subscribe(eve, free.id); // another plan
    await optOut(dee);

    const job = await ok('POST', path(), body({ plan_ids: [gold.id] }), 202);
    expect(job).toMatchObject({ project_id: projectId, status: 'running', completed_at: null });
    expect(job.counts).toEqual({ queued: 0, sent: 0, failed: 0, skipped: 0 });

    expect(await runBatches()).toEqual(['broadcast_completed']);
    const queued = await ok('GET', path(`/${job.id}`));
    expect(queued.status).toBe('completed');
    expect(queued.counts).toEqual({ queued: 2, sent: 0, failed: 0, skipped: 2 });

    expect((await runSends()).sort()).toEqual(['sent', 'sent']);
    expect(sent.map((mail) => mail.to).sort()).toEqual(['ada@example.com', 'bea@example.com']);
    const bea_mail = sent.find((mail) => mail.to === 'bea@example.com')!;
    expect(bea_mail.subject).toBe('News for Bea');
    expect(bea_mail.text).toContain('Hi Bea, we go live at 8 pm on Book club.');
    expect((await ok('GET', path(`/${job.id}`))).counts).toEqual({ queued: 2, sent: 2, failed: 0, skipped: 2 });

    const messages = await ok('GET', `/v1/projects/${projectId}/messages`, undefined, 200, {
      query: { subscriber_id: dee },
    });
    expect(messages.data).toMatchObject([{ kind: 'broadcast', broadcast_id: job.id, status: 'skipped' }]);
    const list = await ok('GET', path());
    expect(list.data.map((entry: { id: string }) => entry.id)).toEqual([job.id]);
  });

  it('answers a retry with the same Idempotency-Key with the same job, and a repeated batch message does nothing', async () => {
    await subscribe(subscriberId, gold.id);
    const key = randomUUID();
    const first = await call('POST', path(), body({ statuses: ['active'] }), { idempotencyKey: key });
    const again = await call('POST', path(), body({ statuses: ['active'] }), { idempotencyKey: key });
    expect([first.status, again.status]).toEqual([202, 202]);
    expect(again.json.id).toBe(first.json.id);
    expect(again.headers['idempotent-replay']).toBe('true');
    expect(runtime.broadcastBatches).toHaveLength(1);

    const [batch] = runtime.broadcastBatches;
    runtime.broadcastBatches.push({ ...batch });
    expect(await runBatches()).toEqual(['broadcast_completed', 'skipped']);
    expect(await runSends()).toEqual(['sent']);
    expect(await processJobMessage(runtime, batch)).toBe('skipped');
    expect(runtime.messageSends).toEqual([]);
    expect(sent).toHaveLength(1);
    expect((await ok('GET', path(`/${first.json.id}`))).counts).toEqual({ queued: 1, sent: 1, failed: 0, skipped: 0 });
  });

  it('is restarted by the sweeper when its batch message is lost', async () => {
    await subscribe(subscriberId, gold.id);
    const job = await ok('POST', path(), body({ plan_ids: [gold.id] }), 202);
    runtime.broadcastBatches.splice(0); // lost
    expect((await sweep(runtime)).broadcasts).toBe(0); // not stalled yet
    clock.advance(SWEEP_GRACE_MS + 1);
    expect((await sweep(runtime)).broadcasts).toBe(1);
    expect(await runBatches()).toEqual(['broadcast_completed']);
    expect((await ok('GET', path(`/${job.id}`))).counts).toMatchObject({ queued: 1 });
  });

  it('completes with zero counts when the audience matches nobody', async () => {
    await subscribe(subscriberId, gold.id);
    const job = await ok('POST', path(), body({ plan_ids: [randomUUID()], statuses: ['active'] }), 202);
    expect(await runBatches()).toEqual(['broadcast_completed']);
    expect(await ok('GET', path(`/${job.id}`))).toMatchObject({
      status: 'completed',
      counts: { queued: 0, sent: 0, failed: 0, skipped: 0 },
    });
    expect(runtime.messageSends).toEqual([]);
  });

  it('refuses an empty audience and a text that does not render, naming the field and the position', async () => {
    const empty = await call('POST', path(), body({}));
    expect(empty.status).toBe(422);
    expect(empty.json.code).toBe('VALIDATION_FAILED');
    const broken = await call('POST', path(), body({ statuses: ['active'] }, { body: 'Hi\n{{ subscriber.email }}' }));
    expect(broken.status).toBe(422);
    expect(broken.json.errors).toEqual([{ path: 'body', message: expect.stringMatching(/line 2, column \d+/) }]);
    expect(runtime.broadcastBatches).toEqual([]);
  });
});

/** A store that throws once, on its `failOn`-th transaction (a worker crashing in the middle of a batch). */
function crashingStore(store: Store, failOn: number): Store {
  let transactions = 0;
  return {
    ...store,
    transactWrite: async (items) => {
      transactions += 1;
      if (transactions === failOn) throw new Error('injected crash');
      return store.transactWrite(items);
    },
  };
}

/**
 * Seeds `count` subscribers of the project, each with an active subscription to `gold` (a copy of Ada's, made through
 * the domain), in the store adapters' own item shapes written with BatchWriteItem: every fifth opted out, every fifth
 * without consent, the others consenting. Returns each one's address and kind.
 */
async function seedFans(count: number) {
  const template = await createSubscription(
    runtime,
    team.principal,
    projectId,
    CreateSubscriptionRequest.parse({ subscriber_id: subscriberId, plan_id: gold.id }),
  );
  const ada = toSubscriber((await subscriberStore.read(runtime.store, team.team.id, projectId, subscriberId))!, {
    contact: true,
  });
  const kinds = ['opted_out', 'no_consent', 'consents', 'consents', 'consents'] as const;
  const tx = recordingTransaction();
  const fans = Array.from({ length: count }, (_, index) => {
    const kind = kinds[index % kinds.length];
    const email = `fan${index}@example.com`;
    const subscriber = { ...ada, id: randomUUID(), display_name: `Fan ${index}`, consent: kind !== 'no_consent' };
    subscriberStore.create(
      tx,
      team.team.id,
      subscriberStore.newItem(team.team.id, subscriber, { email, phone: null }),
      subscriber,
    );
    const subscription = { ...template, id: randomUUID(), subscriber_id: subscriber.id };
    putNewSubscription(tx, team.team.id, subscription, null, null);
    writeSubscriptionIndex(tx, team.team.id, subscription);
    return { id: subscriber.id, email, kind };
  });
  await batchWrite(runtime.store, tx.puts);
  await pMap(
    fans.filter((fan) => fan.kind === 'opted_out'),
    (fan) => optOut(fan.id),
    { concurrency: 16 },
  );
  return fans;
}

describe('a broadcast to 500 subscribers, crashing in the middle of a batch', () => {
  it('sends each consenting subscriber exactly one message, and none to the others', async () => {
    // With Ada, 251 in the audience: three batches of at most 100, so one runs before the crash and one after.
    const fans = await seedFans(250);
    const job = await ok('POST', path(), body({ plan_ids: [gold.id], statuses: ['active'] }), 202);

    // Batch 1 runs; while the job runs its counts are readable.
    expect(await processJobMessage(runtime, runtime.broadcastBatches.shift()!)).toBe('broadcast_batch');
    const running = await ok('GET', path(`/${job.id}`));
    expect(running.status).toBe('running');
    expect(running.counts.queued).toBeGreaterThan(0);

    // Batch 2 crashes in its middle; its queue message is lost, so the sweeper restarts the job.
    const batchTwo = runtime.broadcastBatches.shift()!;
    const crashing = { ...runtime, store: crashingStore(runtime.store, 30) };
    await expect(processJobMessage(crashing, batchTwo)).rejects.toThrow('injected crash');
    clock.advance(SWEEP_GRACE_MS + 1);
    expect(await restartStalledBroadcasts(runtime, clock.nowMs() - SWEEP_GRACE_MS)).toBe(1);
    // A duplicate of the batch message as well: nothing happens twice.
    runtime.broadcastBatches.push({ ...batchTwo });
    const outcomes = await runBatches();
    expect(outcomes.at(-1)).toBe('skipped');
    expect(outcomes.filter((outcome) => outcome === 'broadcast_completed')).toHaveLength(1);

    await runSends();
    const consenting = ['ada@example.com', ...fans.filter((fan) => fan.kind === 'consents').map((fan) => fan.email)];
    expect(sent.map((mail) => mail.to).sort()).toEqual(consenting.sort());
    expect(sent.every((mail) => mail.subject.startsWith('News for'))).toBe(true);
    const done = await ok('GET', path(`/${job.id}`));
    expect(done.status).toBe('completed');
    expect(done.counts).toEqual({ queued: 151, sent: 151, failed: 0, skipped: 100 });
  });
});
