/**
 * The sweeper's bounds (DESIGN D6, D7, D14) against DynamoDB Local, with a scripted fake transport and a manual clock:
 * it leaves alone what a queue that can tell is still waiting for, spaces out the re-queues of a backlog and reads
 * none of it in between, the relay reads only outbox events older than the grace, and a delivery that changed between
 * the sweep's read and its move is not re-queued.
 */

import { describe, expect, it } from 'vitest';
import { createProject } from '../../shared/domain/projects/creation.js';
import type { DeliveryMessage } from '../../shared/runtime.js';
import { processDeliveryMessage } from '../../shared/domain/webhook-deliveries/dispatcher.js';
import { getDelivery } from '../../shared/domain/webhook-deliveries/reads.js';
import { WORKER_SHARDS } from '../../shared/domain/webhook-deliveries/worker-index.js';
import { SWEEP_GRACE_MS, SWEEP_INTERVAL_SECONDS } from '../../shared/domain/webhook-deliveries/policy.js';
import { relayOutbox, sweep } from '../../shared/domain/webhook-deliveries/sweeper.js';
import { keys } from '../../shared/store/keys.js';
import type { Store } from '../../shared/store/store.js';
import { recordingStore } from '../support/guarantees.js';
import { countingStore } from '../support/store.js';
import {
  OK,
  allDeliveries,
  ctx,
  newEndpoint,
  newProjectEvent,
  recovery,
  IDLE_SWEEP,
  useWebhookDeliveryFixture,
} from '../support/fixtures/webhook-delivery.js';
import { HOUR_MS } from '../../shared/clock.js';

useWebhookDeliveryFixture();

const SWEEP_INTERVAL_MS = SWEEP_INTERVAL_SECONDS * 1000;

describe('the sweeper\u2019s bounds', () => {
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
    expect(await sweep({ ...backlogged, store: recording.store })).toEqual(IDLE_SWEEP);
    expect(ctx.runtime.drain().queued).toEqual([]);
    expect(new Set(recording.commands)).toEqual(new Set(['QueryCommand'])); // reads of the indexes, no move
    // Nothing moved: a sweep with a queue that cannot tell finds all three.
    expect(await sweep(ctx.runtime)).toEqual({ ...IDLE_SWEEP, requeued: 3 });
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
    expect(await sweep(caughtUp)).toEqual({ ...IDLE_SWEEP, requeued: 3 });
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
    expect(await sweep(runtime)).toEqual({ ...IDLE_SWEEP, requeued: 30 });
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
      expect(await sweep(runtime)).toEqual(IDLE_SWEEP);
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
    // The interval + the grace after the first sweep, to the millisecond: not yet
    ctx.clock.advance(SWEEP_GRACE_MS - 1_000);
    expect(await sweep(runtime)).toEqual(IDLE_SWEEP);
    ctx.clock.advance(1_000);
    expect(await sweep(runtime)).toEqual({ ...IDLE_SWEEP, requeued: 20 });
    const again = ctx.runtime.drain().queued.map((entry) => entry.message);
    expect(new Set(again.map((message) => message.delivery_id))).toEqual(
      new Set(first.slice(10).map((message) => message.delivery_id)),
    );
    for (const message of again.slice(0, 15))
      expect(await processDeliveryMessage(ctx.runtime, message)).toBe('succeeded');

    // The 5 still waiting were re-queued twice: the spacing doubles (2 × the interval), so the sweep one spacing on
    // leaves them be.
    ctx.clock.advance(SWEEP_INTERVAL_MS + SWEEP_GRACE_MS + 1_000);
    expect(await sweep(runtime)).toEqual(IDLE_SWEEP);
    ctx.clock.advance(SWEEP_INTERVAL_MS);
    expect(await sweep(runtime)).toEqual({ ...IDLE_SWEEP, requeued: 5 });
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
    expect(await sweep(runtime)).toEqual(IDLE_SWEEP);
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
    expect(await sweep(runtime, 20_000)).toEqual({ ...IDLE_SWEEP, fannedOut: 1 });
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
    // Shards are read in parallel: one racing dispatcher at a time (the crash switch is shared)
    let dispatching = Promise.resolve();
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
    expect(await sweep({ ...ctx.runtime, store })).toEqual({ ...IDLE_SWEEP, requeued: 1 });
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
    expect(await sweep(ctx.runtime)).toEqual({ ...IDLE_SWEEP, requeued: 1 });
    expect(ctx.runtime.drain().queued.map((entry) => entry.message)).toEqual([recovery(leased)]);
    // The waiting one, still not processed, comes again the interval + the grace after it was re-queued.
    ctx.clock.advance(SWEEP_INTERVAL_MS);
    expect(await sweep(ctx.runtime)).toEqual({ ...IDLE_SWEEP, requeued: 1 });
    expect(ctx.runtime.drain().queued.map((entry) => entry.message)).toEqual([recovery(waiting)]);
  });
});
