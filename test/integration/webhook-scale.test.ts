/**
 * Delivery at scale (DESIGN D6, D24, D25) against DynamoDB Local with a manual clock and a
 * fake transport whose answers the test releases by hand: the per-endpoint concurrency cap (a delivery
 * that finds it full waits and is not counted as an attempt; a crashed attempt's slot comes back),
 * skipped deliveries for disabled endpoints, and replay as a job (filters, dry run, skipped, a crash in
 * the middle of a batch, never twice in one job).
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import type { WebhookEventName } from '../../shared/catalogues/webhook-events.js';
import { isoTime, type ManualClock } from '../../shared/clock.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { retryDelivery } from '../../shared/domain/webhook-deliveries/dead-letter.js';
import { processDeliveryMessage } from '../../shared/domain/webhook-deliveries/dispatcher.js';
import { relayOutbox, sweep } from '../../shared/domain/webhook-deliveries/sweeper.js';
import { getDelivery, listDeliveries } from '../../shared/domain/webhook-deliveries/reads.js';
import { ReplayDeadRequest } from '../../shared/domain/webhook-deliveries/schema.js';
import type { AttemptResult, WebhookTransport } from '../../shared/domain/webhook-deliveries/transport/port.js';
import { createWebhookEndpoint, updateWebhookEndpoint } from '../../shared/domain/webhook-endpoints/changes.js';
import { acquireDeliverySlot } from '../../shared/domain/webhook-endpoints/delivery-slots.js';
import { getWebhookEndpoint } from '../../shared/domain/webhook-endpoints/repository.js';
import { createReplayJob, getReplayJob } from '../../shared/domain/webhook-replays/repository.js';
import type { DeliveryMessage } from '../../shared/runtime.js';
import { keys } from '../../shared/store/keys.js';
import type { Store } from '../../shared/store/store.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';

const OK: AttemptResult = {
  ok: true,
  status: 200,
  failure_kind: null,
  failure_message: null,
  duration_ms: 5,
  response_body: 'ok',
  remote_address: '203.0.113.10',
};

/** A transport whose calls wait until the test releases them (all at once), counting calls in flight. */
function gatedTransport() {
  const state = { inFlight: 0, maxInFlight: 0, calls: 0, open: false, waiting: [] as Array<() => void> };
  const transport: WebhookTransport = {
    async send() {
      state.calls++;
      state.inFlight++;
      state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      if (!state.open) await new Promise<void>((resolve) => state.waiting.push(resolve));
      state.inFlight--;
      return { ...OK };
    },
  };
  return {
    transport,
    state,
    /** Lets every waiting call (and every later one) answer 200. */
    open() {
      state.open = true;
      for (const resolve of state.waiting.splice(0)) resolve();
    },
  };
}

let clock: ManualClock;
let runtime: TestRuntime;
let principal: Principal;
let gate: ReturnType<typeof gatedTransport>;

beforeEach(async () => {
  clock = testClock();
  gate = gatedTransport();
  runtime = await createTestRuntime({ clock, transport: gate.transport });
  ({ principal } = await seedTeam(runtime.store, clock));
  await relayOutbox(runtime, clock.nowMs()); // the team's own team.created, to no endpoint yet
});

async function newEndpoint(options: { events?: WebhookEventName[]; max_concurrency?: number } = {}) {
  return createWebhookEndpoint(runtime, principal, {
    name: `hook ${randomUUID().slice(0, 8)}`,
    url: 'https://receiver.example/hooks',
    events: options.events ?? ['project.created'],
    max_concurrency: options.max_concurrency,
  });
}

/** Creates `count` projects and fans their events out; returns the attempt-1 messages queued. */
async function newDeliveries(count: number): Promise<DeliveryMessage[]> {
  for (let index = 0; index < count; index++)
    await createProject(runtime, principal, { name: `Project ${index}`, platform_type: 'discord' });
  await relayOutbox(runtime, clock.nowMs());
  return runtime.drain().queued.map((entry) => entry.message);
}

/**
 * Kills deliveries at once: the endpoint is disabled while their attempt 1 is processed (dead, kind endpoint_disabled),
 * then re-enabled.
 */
async function deadDeliveries(endpointId: string, count: number): Promise<DeliveryMessage[]> {
  const messages = await newDeliveries(count);
  await updateWebhookEndpoint(runtime, principal, endpointId, { is_active: false });
  for (const message of messages) await processDeliveryMessage(runtime, message);
  await updateWebhookEndpoint(runtime, principal, endpointId, { is_active: true });
  runtime.drain();
  return messages;
}

/** Runs a job's batch messages until none is left (the background worker's role). */
async function runReplayBatches(): Promise<void> {
  for (let batch = runtime.replayBatches.shift(); batch; batch = runtime.replayBatches.shift())
    await processDeliveryMessage(runtime, batch);
}

describe('per-endpoint concurrency cap (D24)', () => {
  it('holds max_concurrency attempts in flight; the others wait 2 s without counting an attempt, then go out', async () => {
    const endpoint = await newEndpoint({ max_concurrency: 2 });
    expect(endpoint.max_concurrency).toBe(2);
    expect((await newEndpoint()).max_concurrency).toBe(5); // the default
    const messages = await newDeliveries(3);
    expect(messages).toHaveLength(3 * 2); // both endpoints subscribe

    const forCapped = [];
    for (const message of messages)
      if ((await getDelivery(runtime, principal, message.delivery_id)).endpoint_id === endpoint.id)
        forCapped.push(message);
    const running = forCapped.map((message) => processDeliveryMessage(runtime, message));
    // Two attempts take the two slots and wait on the receiver; the third finds the cap full at once.
    const third = await Promise.race(running.map((outcome, index) => outcome.then((value) => ({ index, value }))));
    expect(third.value).toBe('deferred');
    expect(gate.state.inFlight).toBe(2);
    const deferred = forCapped[third.index];
    expect(await getDelivery(runtime, principal, deferred.delivery_id)).toMatchObject({
      status: 'pending',
      attempts: 0,
      next_attempt_at: isoTime(clock.nowMs() + 2_000),
      attempt_log: [],
    });
    // The same message again, its carried due time moved to the new one.
    const again = { ...deferred, prepared: { ...deferred.prepared!, due_at_ms: clock.nowMs() + 2_000 } };
    expect(runtime.drain().queued).toEqual([{ message: again, delaySeconds: 2 }]);

    gate.open();
    expect((await Promise.all(running)).sort()).toEqual(['deferred', 'succeeded', 'succeeded']);
    // The slots are back: the waiting delivery goes out when its short delay has passed (as attempt 1).
    expect(await processDeliveryMessage(runtime, again)).toBe('skipped'); // not due yet
    clock.advance(2_000);
    expect(await processDeliveryMessage(runtime, again)).toBe('succeeded');
    expect(await getDelivery(runtime, principal, deferred.delivery_id)).toMatchObject({
      status: 'succeeded',
      attempts: 1,
    });
    expect(gate.state.maxInFlight).toBe(2);
    expect(await getWebhookEndpoint(runtime, principal, endpoint.id)).toMatchObject({
      consecutive_failures: 0,
      is_active: true,
    });
    expect((await runtime.store.get(keys.webhookEndpoint(principal.teamId, endpoint.id)))!.in_flight).toEqual({});
  });

  it('a slot whose attempt crashed (its lease ran out) is reclaimed; max_concurrency can be changed', async () => {
    const endpoint = await newEndpoint({ max_concurrency: 1 });
    const nowMs = clock.nowMs();
    // A dispatcher took the only slot and died: its slot lease ends in 60 s.
    expect(
      (await acquireDeliverySlot(runtime.store, principal.teamId, endpoint.id, 'dlv_crashed', nowMs + 60_000, nowMs))
        .kind,
    ).toBe('acquired');
    expect(
      (await acquireDeliverySlot(runtime.store, principal.teamId, endpoint.id, 'dlv_other', nowMs + 60_000, nowMs))
        .kind,
    ).toBe('full');
    clock.advance(60_001);
    const later = clock.nowMs();
    expect(
      (await acquireDeliverySlot(runtime.store, principal.teamId, endpoint.id, 'dlv_other', later + 60_000, later))
        .kind,
    ).toBe('acquired');
    expect((await runtime.store.get(keys.webhookEndpoint(principal.teamId, endpoint.id)))!.in_flight).toEqual({
      dlv_other: later + 60_000,
    });

    expect(await updateWebhookEndpoint(runtime, principal, endpoint.id, { max_concurrency: 2 })).toMatchObject({
      max_concurrency: 2,
    });
    expect(
      (await acquireDeliverySlot(runtime.store, principal.teamId, endpoint.id, 'dlv_third', later + 60_000, later))
        .kind,
    ).toBe('acquired');
    await updateWebhookEndpoint(runtime, principal, endpoint.id, { is_active: false });
    expect(
      (await acquireDeliverySlot(runtime.store, principal.teamId, endpoint.id, 'dlv_fourth', later + 60_000, later))
        .kind,
    ).toBe('stopped');
  });
});

describe('replay as a job (D25) and skipped deliveries (D6)', () => {
  it('answers with the job at once; batches in the background re-queue each match once; dry_run and filters count only what matches', async () => {
    gate.open();
    const endpoint = await newEndpoint({ events: ['project.created'] });
    const other = await newEndpoint({ events: ['project.created'] });
    // Both subscribe, but only `endpoint` was disabled: its 3 are dead, the other 3 succeeded
    await deadDeliveries(endpoint.id, 3);
    const all = (await listDeliveries(runtime, principal, { limit: 100 })).data;
    expect(all.filter((delivery) => delivery.status === 'dead').map((delivery) => delivery.endpoint_id)).toEqual([
      endpoint.id,
      endpoint.id,
      endpoint.id,
    ]);
    expect(all.filter((delivery) => delivery.endpoint_id === other.id).map((delivery) => delivery.status)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);

    const request = (body: Record<string, unknown>) => ReplayDeadRequest.parse({ since_hours: 1, ...body });
    expect(await createReplayJob(runtime, principal, request({ dry_run: true }))).toMatchObject({
      status: 'completed',
      dry_run: true,
      matched: 3,
      replayed: 0,
    });
    expect(await createReplayJob(runtime, principal, request({ dry_run: true, endpoint_id: other.id }))).toMatchObject({
      matched: 0,
    });
    expect(
      await createReplayJob(runtime, principal, request({ dry_run: true, event_type: 'plan.created' })),
    ).toMatchObject({ matched: 0 });
    expect(
      await createReplayJob(runtime, principal, request({ dry_run: true, until: isoTime(clock.nowMs() - 60_000) })),
    ).toMatchObject({ matched: 0 });
    expect(runtime.replayBatches).toEqual([]);
    expect(runtime.drain().queued).toEqual([]);

    const job = await createReplayJob(
      runtime,
      principal,
      request({ endpoint_id: endpoint.id, event_type: 'project.created' }),
    );
    expect(job).toMatchObject({
      status: 'running',
      dry_run: false,
      matched: 3,
      replayed: 0,
      completed_at: null,
      filters: { status: 'dead', endpoint_id: endpoint.id, event_type: 'project.created', since_hours: 1 },
    });
    expect(runtime.replayBatches).toEqual([{ kind: 'replay_batch', team_id: principal.teamId, replay_id: job.id }]);
    // Another team cannot see it.
    const { principal: stranger } = await seedTeam(runtime.store, clock);
    await expect(getReplayJob(runtime, stranger, job.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });

    // The same batch message twice (a duplicate): every delivery is re-queued once.
    const batch = runtime.replayBatches[0];
    expect(await processDeliveryMessage(runtime, batch)).toBe('replay_completed');
    expect(await processDeliveryMessage(runtime, batch)).toBe('skipped');
    expect(await getReplayJob(runtime, principal, job.id)).toMatchObject({
      status: 'completed',
      matched: 3,
      replayed: 3,
      completed_at: isoTime(clock.nowMs()),
    });
    const queued = runtime.drain().queued.map((entry) => entry.message);
    expect(queued).toHaveLength(3);
    for (const message of queued) expect(await processDeliveryMessage(runtime, message)).toBe('succeeded');
  });

  it('a worker that crashes after re-queueing part of a batch: the batch runs again, nothing is replayed twice, replayed is exact', async () => {
    gate.open();
    const endpoint = await newEndpoint();
    await deadDeliveries(endpoint.id, 4);
    // The store fails the job's progress write once: the worker dies after re-queueing the whole batch.
    let failProgress = true;
    const store: Store = {
      ...runtime.store,
      update: async (request) => {
        if (
          failProgress &&
          String((request.Key as { sk: string }).sk).startsWith('WEBHOOK_REPLAY#') &&
          request.UpdateExpression?.includes('ADD replayed')
        ) {
          failProgress = false;
          throw new Error('worker crashed');
        }
        return runtime.store.update(request);
      },
    };
    const crashing = { ...runtime, store };
    const job = await createReplayJob(crashing, principal, ReplayDeadRequest.parse({ since_hours: 24 }));
    const batch = runtime.replayBatches.shift()!;
    await expect(processDeliveryMessage(crashing, batch)).rejects.toThrow('worker crashed');
    expect(runtime.drain().queued).toHaveLength(4);
    expect(await getReplayJob(runtime, principal, job.id)).toMatchObject({ status: 'running', replayed: 0 });

    // The queue delivers the message again (or the sweeper restarts the stalled job): the batch runs again.
    clock.advance(120_000);
    expect((await sweep(crashing)).replays).toBe(1);
    expect(runtime.replayBatches).toEqual([batch]);
    runtime.drain(); // (the sweep also re-queued the 4 pending deliveries, overdue by now)
    await runReplayBatches();
    expect(await getReplayJob(runtime, principal, job.id)).toMatchObject({
      status: 'completed',
      matched: 4,
      replayed: 4,
    });
    // The second run of the batch re-queued nothing again: no new message.
    expect(runtime.drain().queued).toEqual([]);
  });

  it('re-queues a batch in group transactions of up to 50 dead deliveries; one retried by hand after the job was created is not replayed, and replayed stays exact', async () => {
    gate.open();
    const endpoint = await newEndpoint();
    const messages = await deadDeliveries(endpoint.id, 52); // one more than a group after the hand retry below
    const job = await createReplayJob(runtime, principal, ReplayDeadRequest.parse({ since_hours: 1 }));
    expect(job).toMatchObject({ matched: 52, status: 'running' });
    // One of them is retried by hand before the job's batch runs: the job must not replay it.
    await retryDelivery(runtime, principal, messages[0].delivery_id);
    runtime.drain();
    const transactions: number[] = [];
    const counting = {
      ...runtime,
      store: {
        ...runtime.store,
        transactWrite: (items: Parameters<Store['transactWrite']>[0]) => (
          transactions.push(items.length),
          runtime.store.transactWrite(items)
        ),
      },
    };
    for (let batch = runtime.replayBatches.shift(); batch; batch = runtime.replayBatches.shift())
      await processDeliveryMessage(counting, batch);
    expect(await getReplayJob(runtime, principal, job.id)).toMatchObject({
      status: 'completed',
      matched: 52,
      replayed: 51,
    });
    const queued = runtime.drain().queued.map((entry) => entry.message.delivery_id);
    expect(new Set(queued)).toEqual(new Set(messages.slice(1).map((message) => message.delivery_id)));
    // The batch read 51 (the retried one is no longer dead): two group transactions of 50 and 1 deliveries,
    // two items each, and nothing one by one. (A cancelled group going one by one: the crash test above.)
    expect(transactions.sort((a, b) => a - b)).toEqual([2, 100]);
  });

  it('events for a disabled endpoint are skipped; a job with status skipped replays them after re-enabling', async () => {
    gate.open();
    const endpoint = await newEndpoint();
    await updateWebhookEndpoint(runtime, principal, endpoint.id, { is_active: false });
    expect(await newDeliveries(2)).toEqual([]); // no message: no attempt
    const skipped = (await listDeliveries(runtime, principal, { limit: 100, status: 'skipped' })).data;
    expect(skipped).toHaveLength(2);
    for (const delivery of skipped)
      expect(delivery).toMatchObject({
        endpoint_id: endpoint.id,
        attempts: 0,
        skipped_at: isoTime(clock.nowMs()),
        next_attempt_at: null,
      });
    expect(await getWebhookEndpoint(runtime, principal, endpoint.id)).toMatchObject({ consecutive_failures: 0 });

    expect(await createReplayJob(runtime, principal, ReplayDeadRequest.parse({ since_hours: 1 }))).toMatchObject({
      matched: 0,
      status: 'completed',
    }); // dead only by default
    await updateWebhookEndpoint(runtime, principal, endpoint.id, { is_active: true });
    const job = await createReplayJob(
      runtime,
      principal,
      ReplayDeadRequest.parse({ since_hours: 1, status: 'skipped' }),
    );
    expect(job).toMatchObject({ matched: 2, status: 'running', filters: { status: 'skipped' } });
    await runReplayBatches();
    expect(await getReplayJob(runtime, principal, job.id)).toMatchObject({ status: 'completed', replayed: 2 });
    const queued = runtime.drain().queued.map((entry) => entry.message);
    expect(queued.map((message) => message.delivery_id).sort()).toEqual(skipped.map((delivery) => delivery.id).sort());
    for (const message of queued) expect(await processDeliveryMessage(runtime, message)).toBe('succeeded');
    expect((await listDeliveries(runtime, principal, { limit: 100, status: 'skipped' })).data).toEqual([]);
  });
});
