/**
 * The webhook delivery state machine (interface "States" → "Webhook delivery" and "Webhook endpoint",
 * "Events" → "Delivery rules", "Webhook trust"; DESIGN D6–D10) against DynamoDB Local, with a scripted
 * fake transport and a manual clock. The runtime's queue and scheduler only record messages
 * (test/support/store.ts); the tests hand them to `processDeliveryMessage` themselves, so every
 * retry wait is checked without sleeping.
 */

import { describe, expect, it } from 'vitest';
import { createProject } from '../../shared/domain/projects/creation.js';
import type { DeliveryMessage } from '../../shared/runtime.js';
import { processDeliveryMessage, type ProcessOutcome } from '../../shared/domain/webhook-deliveries/dispatcher.js';
import { getDelivery } from '../../shared/domain/webhook-deliveries/reads.js';
import { WORKER_SHARDS } from '../../shared/domain/webhook-deliveries/worker-index.js';
import { SWEEP_GRACE_MS, SWEEP_INTERVAL_SECONDS } from '../../shared/domain/webhook-deliveries/policy.js';
import { relayOutbox, sweep } from '../../shared/domain/webhook-deliveries/sweeper.js';
import { keys } from '../../shared/store/keys.js';
import type { Store } from '../../shared/store/store.js';
import type { WebhookRequest } from '../../shared/domain/webhook-deliveries/transport/port.js';
import { recordingStore } from '../support/guarantees.js';
import { countingStore } from '../support/store.js';
import {
  HOUR_MS,
  HTTP_500,
  OK,
  allDeliveries,
  ctx,
  newEndpoint,
  newProjectEvent,
  oneDelivery,
  recovery,
  useWebhookDeliveryFixture,
} from '../support/fixtures/webhook-delivery.js';

useWebhookDeliveryFixture();

const SWEEP_INTERVAL_MS = SWEEP_INTERVAL_SECONDS * 1000;
/** A sweep that found nothing to do. */
const IDLE = { requeued: 0, fannedOut: 0, replays: 0, broadcasts: 0, imports: 0, audits: 0 };

/** Processes `first` and its follow-up attempts (advancing the clock) until `stopAt` is the outcome. */
async function runAllUntil(first: DeliveryMessage, stopAt: ProcessOutcome): Promise<void> {
  let message = first;
  for (let step = 0; step < 20; step++) {
    const outcome = await processDeliveryMessage(ctx.runtime, message);
    if (outcome === stopAt) return;
    const { queued, scheduled } = ctx.runtime.drain();
    const next = queued[0]
      ? { message: queued[0].message, dueMs: ctx.clock.nowMs() + queued[0].delaySeconds * 1000 }
      : { message: scheduled[0].message, dueMs: scheduled[0].atMs };
    ctx.clock.set(next.dueMs);
    message = next.message;
  }
  throw new Error(`never reached ${stopAt}`);
}

// ---------------------------------------------------------------------------------------------------
// Concurrency and crashes (DESIGN D7 lease; interface "Delivery rules" 1: at-least-once)
// ---------------------------------------------------------------------------------------------------

describe('lease and sweeper', () => {
  it('two dispatchers handling the same message at once make exactly one POST', async () => {
    await newEndpoint();
    const { message } = await oneDelivery();
    ctx.fake.setFallback(OK);
    ctx.fake.setDelay(50);
    const outcomes = await Promise.all([
      processDeliveryMessage(ctx.runtime, message),
      processDeliveryMessage(ctx.runtime, { ...message }),
    ]);
    expect(outcomes.sort()).toEqual(['skipped', 'succeeded']);
    expect(ctx.fake.requests).toHaveLength(1);
  });

  it('many copies of one message at once still make exactly one POST per attempt', async () => {
    await newEndpoint();
    const { message } = await oneDelivery();
    ctx.fake.setDelay(20);
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, () => processDeliveryMessage(ctx.runtime, { ...message })),
    );
    expect(outcomes.filter((outcome) => outcome !== 'skipped')).toEqual(['retry_scheduled']);
    expect(ctx.fake.requests).toHaveLength(1);
    expect(ctx.runtime.drain().queued).toHaveLength(1);
  });

  it('a dispatcher that dies between the POST and recording it: the sweeper re-queues the attempt and the same event is sent again', async () => {
    await newEndpoint();
    const { event, delivery, message } = await oneDelivery();
    const posts: WebhookRequest[] = [];
    let crash = true;
    ctx.runtime.transport = {
      async send(request) {
        posts.push(request);
        if (crash) throw new Error('dispatcher died after sending');
        return { ...OK };
      },
    };
    await expect(processDeliveryMessage(ctx.runtime, message)).rejects.toThrow('dispatcher died');
    expect(posts).toHaveLength(1);
    const inFlight = await getDelivery(ctx.runtime, ctx.principal, delivery.id);
    expect(inFlight).toMatchObject({ status: 'delivering', attempts: 1, attempt_log: [] });

    // The queue redelivers the message while the lease holds: skipped; the sweeper sees nothing due yet.
    expect(await processDeliveryMessage(ctx.runtime, message)).toBe('skipped');
    expect(await sweep(ctx.runtime)).toEqual(IDLE);
    expect(ctx.runtime.drain()).toEqual({ queued: [], scheduled: [] });

    // Past the 60 s lease (and the sweeper's grace): the attempt is re-queued and sent again.
    ctx.clock.advance(60_000 + 60_000 + 1_000);
    expect(await sweep(ctx.runtime)).toEqual({ ...IDLE, requeued: 1 });
    const { queued } = ctx.runtime.drain();
    expect(queued).toEqual([
      {
        message: {
          kind: 'attempt',
          team_id: ctx.teamId,
          delivery_id: delivery.id,
          endpoint_id: delivery.endpoint_id,
          attempt: 1,
        },
        delaySeconds: 0,
      },
    ]);

    crash = false;
    expect(await processDeliveryMessage(ctx.runtime, queued[0].message)).toBe('succeeded');
    expect(posts).toHaveLength(2);
    expect(posts[1].headers['SVC-Event-Id']).toBe(event.id);
    expect(posts[1].headers['SVC-Event-Id']).toBe(posts[0].headers['SVC-Event-Id']);
    expect(JSON.parse(posts[1].body).id).toBe(event.id);
    const done = await getDelivery(ctx.runtime, ctx.principal, delivery.id);
    expect(done).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(done.attempt_log).toHaveLength(1);

    // Nothing is left for the sweeper.
    ctx.clock.advance(HOUR_MS);
    expect(await sweep(ctx.runtime)).toEqual(IDLE);
  });

  it('a dispatcher whose lease expired mid-attempt does not overwrite the outcome of the one that took over', async () => {
    await newEndpoint();
    const { delivery, message } = await oneDelivery();
    let calls = 0;
    let takeover: ProcessOutcome | null = null;
    ctx.runtime.transport = {
      async send() {
        calls += 1;
        if (calls === 1) {
          // The first dispatcher stalls past its lease; a second one takes the attempt over and succeeds.
          ctx.clock.advance(61_000);
          takeover = await processDeliveryMessage(ctx.runtime, { ...message });
          return { ...HTTP_500 };
        }
        return { ...OK };
      },
    };
    expect(await processDeliveryMessage(ctx.runtime, message)).toBe('skipped');
    expect(takeover).toBe('succeeded');
    expect(calls).toBe(2);
    const stored = await getDelivery(ctx.runtime, ctx.principal, delivery.id);
    expect(stored).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(stored.attempt_log).toHaveLength(1);
    expect(stored.attempt_log![0]).toMatchObject({ status: 200, failure_kind: null });
    expect(ctx.runtime.drain()).toEqual({ queued: [], scheduled: [] });
  });

  it('the sweeper re-sends a lost dead-letter timer', async () => {
    await newEndpoint();
    const { delivery, message } = await oneDelivery();
    await runAllUntil(message, 'awaiting_dead_letter');
    expect(ctx.runtime.drain().scheduled.map((entry) => entry.message.kind)).toEqual(['dead_letter']); // ...and "lost"
    ctx.clock.advance(72 * HOUR_MS - 1_000);
    expect(await sweep(ctx.runtime)).toEqual(IDLE);
    ctx.clock.advance(60_000 + 2_000);
    expect(await sweep(ctx.runtime)).toEqual({ ...IDLE, requeued: 1 });
    const { queued } = ctx.runtime.drain();
    expect(queued).toEqual([
      { message: { kind: 'dead_letter', team_id: ctx.teamId, delivery_id: delivery.id, attempt: 8 }, delaySeconds: 0 },
    ]);
    expect(await processDeliveryMessage(ctx.runtime, queued[0].message)).toBe('dead_lettered');
    expect((await getDelivery(ctx.runtime, ctx.principal, delivery.id)).status).toBe('dead');
    expect(await sweep(ctx.runtime)).toEqual(IDLE);
  });

  it('the sweeper re-queues a lost retry timer and fans out an event whose stream record was lost', async () => {
    await newEndpoint();
    const { delivery, message } = await oneDelivery();
    expect(await processDeliveryMessage(ctx.runtime, message)).toBe('retry_scheduled');
    ctx.runtime.drain(); // the 10 s message is "lost"
    const lostEvent = await newProjectEvent(); // never fanned out
    ctx.clock.advance(10_000 + 60_000 + 1_000);
    expect(await sweep(ctx.runtime)).toEqual({ ...IDLE, requeued: 1, fannedOut: 1 });
    const { queued } = ctx.runtime.drain();
    const retry = queued.find((entry) => entry.message.delivery_id === delivery.id);
    expect(retry?.message).toEqual({
      kind: 'attempt',
      team_id: ctx.teamId,
      delivery_id: delivery.id,
      endpoint_id: delivery.endpoint_id,
      attempt: 2,
    });
    expect((await allDeliveries()).some((candidate) => candidate.event_id === lostEvent.id)).toBe(true);
    expect(await processDeliveryMessage(ctx.runtime, retry!.message)).toBe('retry_scheduled');
  });

  it('rows due after the oldest message still waiting in a queue that can tell (the local one) are left alone: waiting, not lost', async () => {
    const dueAtMs = ctx.clock.nowMs();
    const rows = await lostDeliveries(3);
    ctx.clock.advance(10 * SWEEP_GRACE_MS);
    // The queue's oldest waiting message was queued when the rows fell due: their messages wait behind a backlog.
    const backlogged = {
      ...ctx.runtime,
      deliveryQueue: {
        send: ctx.runtime.deliveryQueue.send.bind(ctx.runtime.deliveryQueue),
        oldestWaitingSinceMs: () => dueAtMs,
      },
    };
    const recording = recordingStore(ctx.runtime.store);
    expect(await sweep({ ...backlogged, store: recording.store })).toEqual(IDLE);
    expect(ctx.runtime.drain().queued).toEqual([]);
    expect(new Set(recording.commands)).toEqual(new Set(['QueryCommand'])); // reads of the indexes, no move
    // Nothing moved: a sweep with a queue that cannot tell finds all three.
    expect(await sweep(ctx.runtime)).toEqual({ ...IDLE, requeued: 3 });
    expect(new Set(ctx.runtime.drain().queued.map((entry) => entry.message.delivery_id))).toEqual(
      new Set(rows.map((message) => message.delivery_id)),
    );
    // Once the oldest waiting message is younger than the rows by more than the grace, they count as lost again.
    ctx.clock.advance(SWEEP_INTERVAL_MS + SWEEP_GRACE_MS + 1_000);
    const caughtUp = {
      ...ctx.runtime,
      deliveryQueue: {
        send: ctx.runtime.deliveryQueue.send.bind(ctx.runtime.deliveryQueue),
        oldestWaitingSinceMs: () => ctx.clock.nowMs(),
      },
    };
    expect(await sweep(caughtUp)).toEqual({ ...IDLE, requeued: 3 });
  });

  /** `count` pending deliveries (one endpoint, one project event each) whose attempt-1 messages are "lost". */
  async function lostDeliveries(count: number): Promise<DeliveryMessage[]> {
    await newEndpoint();
    for (let index = 0; index < count; index++)
      await createProject(ctx.runtime, ctx.principal, { name: `Project ${index}`, platform_type: 'discord' });
    await relayOutbox(ctx.runtime, ctx.clock.nowMs());
    const messages = ctx.runtime.drain().queued.map((entry) => entry.message);
    expect(messages).toHaveLength(count);
    return messages;
  }

  /**
   * A runtime whose store counts what a sweep sends (test/support/store.ts `countingStore`): every
   * request, the queries of the pending-deliveries index and the rows they return, and the updates.
   */
  function countingRuntime() {
    const counting = countingStore(ctx.runtime.store);
    const pendingIndexes = new Set(WORKER_SHARDS.map((shard) => keys.pendingDeliveriesIndex(shard)));
    const counts = { pendingQueries: 0, pendingRowsRead: 0, updates: 0 };
    const store: Store = {
      ...counting.store,
      query: async (request) => {
        const result = await counting.store.query(request);
        if (
          Object.values(request.ExpressionAttributeValues ?? {}).some((value) => pendingIndexes.has(value as string))
        ) {
          counts.pendingQueries += 1;
          counts.pendingRowsRead += result.items.length;
        }
        return result;
      },
      update: (request) => {
        counts.updates += 1;
        return counting.store.update(request);
      },
    };
    return {
      runtime: { ...ctx.runtime, store },
      /** What the sweeps since the last call sent; resets the counts. */
      take: () => {
        const taken = { requests: counting.requests(), ...counts };
        counting.reset();
        Object.assign(counts, { pendingQueries: 0, pendingRowsRead: 0, updates: 0 });
        return taken;
      },
    };
  }

  it('a backlog of overdue deliveries is re-queued at most every other sweep, then ever more rarely, and the sweeps in between read none of it', async () => {
    const lost = await lostDeliveries(30);
    const { runtime, take } = countingRuntime();
    ctx.clock.advance(SWEEP_GRACE_MS + 1_000);

    // The first sweep re-queues all 30 (moving each forward in the index: one conditional update each).
    expect(await sweep(runtime)).toEqual({ ...IDLE, requeued: 30 });
    const first = ctx.runtime.drain().queued.map((entry) => entry.message);
    expect(new Set(first.map((message) => message.delivery_id))).toEqual(
      new Set(lost.map((message) => message.delivery_id)),
    );
    expect(first.every((message) => message.kind === 'attempt' && message.attempt === 1)).toBe(true);
    const firstCounts = take();
    expect(firstCounts).toMatchObject({ pendingQueries: WORKER_SHARDS.length, pendingRowsRead: 30, updates: 30 });

    // The next sweeps (AWS runs one every SWEEP_INTERVAL_SECONDS): nothing re-queued, one empty query per shard, no
    // write.
    for (const step of [1_000, SWEEP_INTERVAL_MS / 2, SWEEP_INTERVAL_MS / 2]) {
      ctx.clock.advance(step);
      expect(await sweep(runtime)).toEqual(IDLE);
      expect(ctx.runtime.drain().queued).toEqual([]);
      expect(take()).toEqual({
        requests: firstCounts.requests - 30,
        pendingQueries: WORKER_SHARDS.length,
        pendingRowsRead: 0,
        updates: 0,
      });
    }

    // Ten of them are processed meanwhile; the 20 still waiting are re-queued once the moved position is overdue too.
    ctx.fake.setFallback(OK);
    for (const message of first.slice(0, 10))
      expect(await processDeliveryMessage(ctx.runtime, message)).toBe('succeeded');
    ctx.clock.advance(SWEEP_GRACE_MS - 1_000); // the interval + the grace after the first sweep, to the millisecond: not yet
    expect(await sweep(runtime)).toEqual(IDLE);
    ctx.clock.advance(1_000);
    expect(await sweep(runtime)).toEqual({ ...IDLE, requeued: 20 });
    const again = ctx.runtime.drain().queued.map((entry) => entry.message);
    expect(new Set(again.map((message) => message.delivery_id))).toEqual(
      new Set(first.slice(10).map((message) => message.delivery_id)),
    );
    for (const message of again.slice(0, 15))
      expect(await processDeliveryMessage(ctx.runtime, message)).toBe('succeeded');

    // The 5 still waiting were re-queued twice: the spacing doubles (2 × the interval), so the sweep one spacing on
    // leaves them be.
    ctx.clock.advance(SWEEP_INTERVAL_MS + SWEEP_GRACE_MS + 1_000);
    expect(await sweep(runtime)).toEqual(IDLE);
    ctx.clock.advance(SWEEP_INTERVAL_MS);
    expect(await sweep(runtime)).toEqual({ ...IDLE, requeued: 5 });
    const third = ctx.runtime.drain().queued.map((entry) => entry.message);
    expect(new Set(third.map((message) => message.delivery_id))).toEqual(
      new Set(again.slice(15).map((message) => message.delivery_id)),
    );
    for (const message of third) expect(await processDeliveryMessage(ctx.runtime, message)).toBe('succeeded');
    // Their lease cleared the count: a later lost timer starts again from the first spacing.
    expect(
      (await ctx.runtime.store.get(keys.delivery(ctx.teamId, third[0].delivery_id)))?.sweeper_requeues,
    ).toBeUndefined();

    // Nothing is left for the sweeper.
    ctx.clock.advance(HOUR_MS);
    expect(await sweep(runtime)).toEqual(IDLE);
    expect((await allDeliveries()).filter((delivery) => delivery.status === 'succeeded')).toHaveLength(30);
  });

  /**
   * A runtime whose store counts the queries of the secondary index (`IndexName`) and the rows they
   * return: what the outbox relay (and the sweeper around it) reads.
   */
  function indexCountingRuntime() {
    const counts = { indexQueries: 0, indexRowsRead: 0 };
    const store: Store = {
      ...ctx.runtime.store,
      query: async (request) => {
        const result = await ctx.runtime.store.query(request);
        if (request.IndexName) {
          counts.indexQueries += 1;
          counts.indexRowsRead += result.items.length;
        }
        return result;
      },
    };
    return { runtime: { ...ctx.runtime, store }, counts };
  }

  /** Delivery event ids of the team, sorted. */
  async function deliveredEventIds(): Promise<string[]> {
    return (await allDeliveries()).map((delivery) => delivery.event_id).sort();
  }

  it('the relay reads only the outbox events older than the grace: younger ones are not read at all', async () => {
    await newEndpoint();
    const old = await newProjectEvent();
    ctx.clock.advance(30_000);
    const young = [await newProjectEvent(), await newProjectEvent()];
    const { runtime, counts } = indexCountingRuntime();

    // A sweep with a 20 s grace: the old event is fanned out; the index queries return it and nothing else.
    expect(await sweep(runtime, 20_000)).toEqual({ ...IDLE, fannedOut: 1 });
    expect(counts.indexRowsRead).toBe(1);
    expect(await deliveredEventIds()).toEqual([old.id]);

    // The bound is inclusive to the millisecond: one before the young events' creation reads nothing; at it, both.
    const createdMs = Date.parse(young[0].created_at);
    expect(Date.parse(young[1].created_at)).toBe(createdMs);
    Object.assign(counts, { indexQueries: 0, indexRowsRead: 0 });
    expect(await relayOutbox(runtime, createdMs - 1)).toBe(0);
    expect(counts.indexRowsRead).toBe(0);
    expect(await relayOutbox(runtime, createdMs)).toBe(2);
    expect(counts.indexRowsRead).toBe(2);
    expect(await deliveredEventIds()).toEqual([old.id, ...young.map((event) => event.id)].sort());
  });

  it('a delivery the dispatcher leases or completes between the sweep reading it and moving it is left alone and not re-queued', async () => {
    const [succeeding, leased, waiting] = await lostDeliveries(3);
    let crash = false;
    ctx.runtime.transport = {
      async send() {
        if (crash) throw new Error('dispatcher died after sending');
        return { ...OK };
      },
    };
    // The sweep's store: once a page holding one of the two has been read, the dispatcher handles it before the sweeper
    // moves it.
    const racing = new Map([
      [
        succeeding.delivery_id,
        async () => expect(await processDeliveryMessage(ctx.runtime, succeeding)).toBe('succeeded'),
      ],
      [
        leased.delivery_id,
        async () => {
          crash = true;
          await expect(processDeliveryMessage(ctx.runtime, leased)).rejects.toThrow('dispatcher died');
          crash = false;
        },
      ],
    ]);
    let dispatching = Promise.resolve(); // shards are read in parallel: one racing dispatcher at a time (the crash switch is shared)
    const store: Store = {
      ...ctx.runtime.store,
      query: async (request) => {
        const result = await ctx.runtime.store.query(request);
        for (const item of result.items) {
          const race = racing.get(item.id as string);
          if (!race) continue;
          racing.delete(item.id as string);
          dispatching = dispatching.then(race);
          await dispatching;
        }
        return result;
      },
    };
    ctx.clock.advance(SWEEP_GRACE_MS + 1_000);
    expect(await sweep({ ...ctx.runtime, store })).toEqual({ ...IDLE, requeued: 1 });
    expect(racing.size).toBe(0);
    expect(ctx.runtime.drain().queued.map((entry) => entry.message)).toEqual([recovery(waiting)]);
    expect(await getDelivery(ctx.runtime, ctx.principal, succeeding.delivery_id)).toMatchObject({
      status: 'succeeded',
      attempts: 1,
    });
    expect(await getDelivery(ctx.runtime, ctx.principal, leased.delivery_id)).toMatchObject({
      status: 'delivering',
      attempts: 1,
    });

    // The crashed attempt is not lost: once its lease (60 s) and the grace have passed, it is re-queued.
    ctx.clock.advance(60_000 + SWEEP_GRACE_MS + 1_000);
    expect(await sweep(ctx.runtime)).toEqual({ ...IDLE, requeued: 1 });
    expect(ctx.runtime.drain().queued.map((entry) => entry.message)).toEqual([recovery(leased)]);
    // The waiting one, still not processed, comes again the interval + the grace after it was re-queued.
    ctx.clock.advance(SWEEP_INTERVAL_MS);
    expect(await sweep(ctx.runtime)).toEqual({ ...IDLE, requeued: 1 });
    expect(ctx.runtime.drain().queued.map((entry) => entry.message)).toEqual([recovery(waiting)]);
  });
});
