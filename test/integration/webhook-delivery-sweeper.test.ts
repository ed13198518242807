/**
 * The webhook delivery state machine (interface "States" → "Webhook delivery" and "Webhook endpoint",
 * "Events" → "Delivery rules", "Webhook trust"; DESIGN D6–D10) against DynamoDB Local, with a scripted
 * fake transport and a manual clock. The runtime's queue and scheduler only record messages
 * (test/support/store.ts); the tests hand them to `processDeliveryMessage` themselves, so every
 * retry wait is checked without sleeping.
 */

import { describe, expect, it } from 'vitest';
import type { DeliveryMessage } from '../../shared/runtime.js';
import { processDeliveryMessage, type ProcessOutcome } from '../../shared/domain/webhook-deliveries/dispatcher.js';
import { getDelivery } from '../../shared/domain/webhook-deliveries/reads.js';
import { sweep } from '../../shared/domain/webhook-deliveries/sweeper.js';
import type { WebhookRequest } from '../../shared/domain/webhook-deliveries/transport/port.js';
import {
  HTTP_500,
  OK,
  allDeliveries,
  ctx,
  newEndpoint,
  newProjectEvent,
  oneDelivery,
  IDLE_SWEEP,
  useWebhookDeliveryFixture,
} from '../support/fixtures/webhook-delivery.js';
import { HOUR_MS } from '../../shared/clock.js';

useWebhookDeliveryFixture();

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
    expect(await sweep(ctx.runtime)).toEqual(IDLE_SWEEP);
    expect(ctx.runtime.drain()).toEqual({ queued: [], scheduled: [] });

    // Past the 60 s lease (and the sweeper's grace): the attempt is re-queued and sent again.
    ctx.clock.advance(60_000 + 60_000 + 1_000);
    expect(await sweep(ctx.runtime)).toEqual({ ...IDLE_SWEEP, requeued: 1 });
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
    expect(await sweep(ctx.runtime)).toEqual(IDLE_SWEEP);
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
    expect(await sweep(ctx.runtime)).toEqual(IDLE_SWEEP);
    ctx.clock.advance(60_000 + 2_000);
    expect(await sweep(ctx.runtime)).toEqual({ ...IDLE_SWEEP, requeued: 1 });
    const { queued } = ctx.runtime.drain();
    expect(queued).toEqual([
      { message: { kind: 'dead_letter', team_id: ctx.teamId, delivery_id: delivery.id, attempt: 8 }, delaySeconds: 0 },
    ]);
    expect(await processDeliveryMessage(ctx.runtime, queued[0].message)).toBe('dead_lettered');
    expect((await getDelivery(ctx.runtime, ctx.principal, delivery.id)).status).toBe('dead');
    expect(await sweep(ctx.runtime)).toEqual(IDLE_SWEEP);
  });

  it('the sweeper re-queues a lost retry timer and fans out an event whose stream record was lost', async () => {
    await newEndpoint();
    const { delivery, message } = await oneDelivery();
    expect(await processDeliveryMessage(ctx.runtime, message)).toBe('retry_scheduled');
    ctx.runtime.drain(); // the 10 s message is "lost"
    const lostEvent = await newProjectEvent(); // never fanned out
    ctx.clock.advance(10_000 + 60_000 + 1_000);
    expect(await sweep(ctx.runtime)).toEqual({ ...IDLE_SWEEP, requeued: 1, fannedOut: 1 });
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
});
