/**
 * The webhook delivery state machine (interface "States" → "Webhook delivery" and "Webhook endpoint",
 * "Events" → "Delivery rules", "Webhook trust"; DESIGN D6–D10) against DynamoDB Local, with a scripted
 * fake transport and a manual clock. The runtime's queue and scheduler only record messages
 * (test/support/store.ts); the tests hand them to `processDeliveryMessage` themselves, so every
 * retry wait is checked without sleeping.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HOUR_MS, isoTime } from '../../shared/clock.js';
import { processDeliveryMessage } from '../../shared/domain/webhook-deliveries/dispatcher.js';
import { fanOutEvent, fanOutEvents, sendTestEvent } from '../../shared/domain/webhook-deliveries/fan-out.js';
import { getDelivery } from '../../shared/domain/webhook-deliveries/reads.js';
import { relayOutbox } from '../../shared/domain/webhook-deliveries/sweeper.js';
import { rotateWebhookEndpointSecret, updateWebhookEndpoint } from '../../shared/domain/webhook-endpoints/changes.js';
import { getWebhookEndpoint } from '../../shared/domain/webhook-endpoints/repository.js';
import { keys } from '../../shared/store/keys.js';
import { recordingStore, withStore } from '../support/guarantees.js';
import { checkSignature } from '../support/signature.js';
import { revokeToken } from '../../shared/domain/tokens/repository.js';
import {
  OK,
  allDeliveries,
  ctx,
  expectProblem,
  firstAttemptOf,
  newEndpoint,
  newProjectEvent,
  oneDelivery,
  recovery,
  seedTeamMember,
  useWebhookDeliveryFixture,
} from '../support/fixtures/webhook-delivery.js';

useWebhookDeliveryFixture();

// ---------------------------------------------------------------------------------------------------
// Fan-out (DESIGN D6)
// ---------------------------------------------------------------------------------------------------

describe('fan-out', () => {
  it('delivers an event fanned out late only to the endpoints that existed when it happened', async () => {
    const before = await newEndpoint(['project.created']);
    const event = await newProjectEvent();
    ctx.clock.advance(1_000);
    await newEndpoint(['project.created']); // made after the event, before the relay got to it
    expect(await fanOutEvent(ctx.runtime, event)).toBe(1);
    expect((await allDeliveries()).map((delivery) => delivery.endpoint_id)).toEqual([before.id]);
  });

  it('creates one delivery per subscribed endpoint whose owner holds the minimum ability, once: pending when active, skipped when disabled (D6)', async () => {
    const subscribedA = await newEndpoint(['project.created', 'plan.created']);
    const subscribedB = await newEndpoint(['project.created']);
    await newEndpoint(['plan.created']); // not subscribed to project.created
    const disabled = await newEndpoint(['project.created']);
    await updateWebhookEndpoint(ctx.runtime, ctx.principal, disabled.id, { is_active: false });
    // An owner who no longer holds `project:view` (the minimum ability of project.created): the token
    // that created the endpoint was revoked since; fan-out re-reads the owner (D6).
    const { principal: formerOwner } = await seedTeamMember(['webhook-endpoint:manage', 'project:view']);
    await newEndpoint(['project.created'], formerOwner);
    await revokeToken(ctx.runtime.store, ctx.clock, ctx.teamId, formerOwner.tokenId);

    const event = await newProjectEvent();
    expect(await fanOutEvent(ctx.runtime, event)).toBe(3);

    // The disabled endpoint's delivery is recorded as skipped: no attempt, no message, no counter change (D6).
    const [skipped, ...deliveries] = (await allDeliveries()).sort((a, b) =>
      a.endpoint_id === disabled.id ? -1 : b.endpoint_id === disabled.id ? 1 : 0,
    );
    expect(skipped).toMatchObject({
      endpoint_id: disabled.id,
      event_id: event.id,
      status: 'skipped',
      attempts: 0,
      next_attempt_at: null,
      skipped_at: isoTime(ctx.clock.nowMs()),
    });
    expect(await getWebhookEndpoint(ctx.runtime, ctx.principal, disabled.id)).toMatchObject({
      consecutive_failures: 0,
      is_active: false,
    });
    expect(deliveries.map((delivery) => delivery.endpoint_id).sort()).toEqual([subscribedA.id, subscribedB.id].sort());
    for (const delivery of deliveries) {
      expect(delivery).toMatchObject({
        event_id: event.id,
        event_type: 'project.created',
        status: 'pending',
        attempts: 0,
        dead_lettered_at: null,
        created_at: isoTime(ctx.clock.nowMs()),
      });
      expect(delivery.id).toMatch(/^dlv_[0-9A-HJKMNP-TV-Z]{26}$/);
    }
    const { queued, scheduled } = ctx.runtime.drain();
    expect(scheduled).toEqual([]);
    expect(queued.map((entry) => entry.delaySeconds)).toEqual([0, 0]);
    expect(queued.map((entry) => entry.message.delivery_id).sort()).toEqual(
      deliveries.map((delivery) => delivery.id).sort(),
    );
    expect(
      queued.every(
        (entry) =>
          entry.message.kind === 'attempt' && entry.message.attempt === 1 && entry.message.team_id === ctx.teamId,
      ),
    ).toBe(true);

    // Twice for the same event (a repeated stream record), then the relay and the sweeper: nothing new.
    expect(await fanOutEvent(ctx.runtime, event)).toBe(0);
    expect(await relayOutbox(ctx.runtime, ctx.clock.nowMs() + HOUR_MS)).toBe(0);
    expect(await allDeliveries()).toHaveLength(3);
    expect(ctx.runtime.drain()).toEqual({ queued: [], scheduled: [] });
  });

  it('the outbox relay fans out an event that was never fanned out', async () => {
    const endpoint = await newEndpoint();
    const event = await newProjectEvent();
    expect(await relayOutbox(ctx.runtime, ctx.clock.nowMs())).toBe(1);
    const deliveries = await allDeliveries();
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ endpoint_id: endpoint.id, event_id: event.id });
    expect(await fanOutEvent(ctx.runtime, event)).toBe(0);
  });
});

describe('send test event', () => {
  it('delivers webhook_endpoint.test to that one endpoint, whatever it subscribes to; CONFLICT when disabled', async () => {
    ctx.fake.setFallback(OK);
    const target = await newEndpoint(['plan.created'], ctx.principal, { url: 'https://target.example/hooks' });
    await newEndpoint(['webhook_endpoint.test'], ctx.principal, { url: 'https://other.example/hooks' });
    const delivery = await sendTestEvent(ctx.runtime, ctx.principal, target.id);
    expect(delivery).toMatchObject({
      endpoint_id: target.id,
      event_type: 'webhook_endpoint.test',
      status: 'pending',
      attempts: 0,
    });
    const { queued } = ctx.runtime.drain();
    expect(queued).toEqual([{ message: await firstAttemptOf(delivery), delaySeconds: 0 }]);
    // Already fanned out: the relay creates nothing more.
    expect(await relayOutbox(ctx.runtime, ctx.clock.nowMs() + HOUR_MS)).toBe(0);
    expect(await processDeliveryMessage(ctx.runtime, queued[0].message)).toBe('succeeded');
    expect(ctx.fake.requests.map((request) => request.url)).toEqual(['https://target.example/hooks']);
    const body = JSON.parse(ctx.fake.requests[0].body);
    expect(body).toMatchObject({
      id: delivery.event_id,
      type: 'webhook_endpoint.test',
      project_id: null,
      data: { webhook_endpoint_id: target.id },
    });

    await updateWebhookEndpoint(ctx.runtime, ctx.principal, target.id, { is_active: false });
    await expectProblem(sendTestEvent(ctx.runtime, ctx.principal, target.id), 'CONFLICT');
    await expectProblem(sendTestEvent(ctx.runtime, ctx.principal, randomUUID()), 'NOT_FOUND');
  });
});

describe('DynamoDB requests per delivery', () => {
  it("fans a team's events out with 3 requests however many there are, then takes each delivery to succeeded with 3 more", async () => {
    const endpoint = await newEndpoint();
    ctx.fake.setFallback(OK);
    const events = [await newProjectEvent(), await newProjectEvent(), await newProjectEvent()];
    const recording = recordingStore(ctx.runtime.store);
    const runtime = withStore(ctx.runtime, recording.store);

    // The team's endpoints (Query), their owners re-read (BatchGetItem, D6), every event's mark and delivery (one
    // transaction).
    expect(await fanOutEvents(runtime, events)).toBe(3);
    expect(recording.commands).toEqual(['QueryCommand', 'BatchGetCommand', 'TransactWriteCommand']);
    const { queued } = ctx.runtime.drain();
    expect(queued).toHaveLength(3);

    for (const [index, { message }] of queued.entries()) {
      recording.commands.length = 0;
      // Each message carries what it sends: the lease and the endpoint's slot in one transaction, then the outcome with
      // the slot given back. The first also reads the endpoint, which the process then keeps (its revision guards the
      // copy).
      expect(await processDeliveryMessage(runtime, message)).toBe('succeeded');
      expect(recording.commands).toEqual([
        ...(index === 0 ? ['GetCommand'] : []),
        'TransactWriteCommand',
        'TransactWriteCommand',
      ]);
    }
    expect(ctx.fake.requests.map((request) => JSON.parse(request.body).id).sort()).toEqual(
      events.map((event) => event.id).sort(),
    );
    for (const delivery of await allDeliveries()) {
      expect(delivery).toMatchObject({ endpoint_id: endpoint.id, status: 'succeeded', attempts: 1 });
      const log = (await getDelivery(ctx.runtime, ctx.principal, delivery.id)).attempt_log;
      expect(log).toEqual([
        expect.objectContaining({
          attempt: 1,
          status: 200,
          remote_address: '203.0.113.10',
          planned_at: delivery.created_at,
        }),
      ]);
    }
    expect((await getWebhookEndpoint(ctx.runtime, ctx.principal, endpoint.id)).consecutive_failures).toBe(0);
    expect((await ctx.runtime.store.get(keys.webhookEndpoint(ctx.teamId, endpoint.id)))?.in_flight).toEqual({});
  });

  it("a message without what it sends (a retry, the sweeper's) takes the lease and the slot apart: 3 requests", async () => {
    await newEndpoint();
    ctx.fake.setFallback(OK);
    const { delivery, message } = await oneDelivery();
    const plain = recovery(message);
    const recording = recordingStore(ctx.runtime.store);
    // The lease (returns the delivery and its stored body), the endpoint's slot (returns the endpoint), the outcome
    // with the slot given back.
    expect(await processDeliveryMessage(withStore(ctx.runtime, recording.store), plain)).toBe('succeeded');
    expect(recording.commands).toEqual(['UpdateCommand', 'UpdateCommand', 'TransactWriteCommand']);
    expect(ctx.fake.requests.map((request) => JSON.parse(request.body).id)).toEqual([delivery.event_id]);
  });

  it('a kept copy of the endpoint is refused once it changes: the new url and secret are used, never the old', async () => {
    const endpoint = await newEndpoint();
    ctx.fake.setFallback(OK);
    const first = await oneDelivery();
    expect(await processDeliveryMessage(ctx.runtime, first.message)).toBe('succeeded');
    // The process now keeps a copy of the endpoint; it changes url and secret behind the copy's back.
    await updateWebhookEndpoint(ctx.runtime, ctx.principal, endpoint.id, { url: 'https://moved.example/hooks' });
    const rotated = await rotateWebhookEndpointSecret(ctx.runtime, ctx.principal, endpoint.id);
    const second = await oneDelivery();
    const recording = recordingStore(ctx.runtime.store);
    expect(await processDeliveryMessage(withStore(ctx.runtime, recording.store), second.message)).toBe('succeeded');
    // Refused on the revision (the endpoint comes back with the refusal), then taken with the endpoint as found: no
    // extra read.
    expect(recording.commands).toEqual(['TransactWriteCommand', 'TransactWriteCommand', 'TransactWriteCommand']);
    const sent = ctx.fake.requests.at(-1)!;
    expect(sent.url).toBe('https://moved.example/hooks');
    expect(
      checkSignature({
        header: sent.headers['SVC-Signature'],
        rawBody: sent.body,
        secret: rotated.secret,
        nowSeconds: Math.floor(ctx.clock.nowMs() / 1000),
      }),
    ).toBeNull();
  });

  /**
   * An endpoint with a cap of 1 that the process has read (one delivery sent), a new delivery with its
   * attempt-1 message, and the endpoint's one slot held by `holder` until `untilMs` (epoch ms).
   */
  async function oneSlotTaken(holder: string, untilMs: number) {
    const endpoint = await newEndpoint(undefined, ctx.principal, { max_concurrency: 1 });
    ctx.fake.setFallback(OK);
    const warm = await oneDelivery();
    expect(await processDeliveryMessage(ctx.runtime, warm.message)).toBe('succeeded');
    const { delivery, message } = await oneDelivery();
    await ctx.runtime.store.update({
      Key: keys.webhookEndpoint(ctx.teamId, endpoint.id),
      UpdateExpression: 'SET in_flight.#holder = :until',
      ExpressionAttributeNames: { '#holder': holder },
      ExpressionAttributeValues: { ':until': untilMs },
    });
    return { endpoint, delivery, message };
  }

  it("a cap full of a crashed attempt's slot (its lease ran out) sends the message the long way, which reclaims the slot", async () => {
    // A dispatcher took the one slot and died: its slot lease ran out a second ago.
    const { endpoint, delivery, message } = await oneSlotTaken('dlv_crashed', ctx.clock.nowMs() - 1_000);
    const recording = recordingStore(ctx.runtime.store);
    expect(await processDeliveryMessage(withStore(ctx.runtime, recording.store), message)).toBe('succeeded');
    // Refused once, then not tried again as is: the lease, the slot (full → the stale one removed → taken), the
    // outcome.
    expect(recording.commands).toEqual([
      'TransactWriteCommand',
      'UpdateCommand',
      'UpdateCommand',
      'UpdateCommand',
      'UpdateCommand',
      'TransactWriteCommand',
    ]);
    expect(await getDelivery(ctx.runtime, ctx.principal, delivery.id)).toMatchObject({
      status: 'succeeded',
      attempts: 1,
    });
    expect((await ctx.runtime.store.get(keys.webhookEndpoint(ctx.teamId, endpoint.id)))?.in_flight).toEqual({});
  });

  it('a full cap found by the one transaction puts the attempt off without a lease or a counted attempt', async () => {
    // Another attempt holds the endpoint's one slot.
    const { endpoint, delivery, message } = await oneSlotTaken('dlv_other', ctx.clock.nowMs() + 60_000);
    const recording = recordingStore(ctx.runtime.store);
    expect(await processDeliveryMessage(withStore(ctx.runtime, recording.store), message)).toBe('deferred');
    expect(recording.commands).toEqual(['TransactWriteCommand', 'UpdateCommand']);
    expect(await getDelivery(ctx.runtime, ctx.principal, delivery.id)).toMatchObject({
      status: 'pending',
      attempts: 0,
      next_attempt_at: isoTime(ctx.clock.nowMs() + 2_000),
    });
    const { queued } = ctx.runtime.drain();
    expect(queued).toEqual([
      {
        message: { ...message, prepared: { ...message.prepared!, due_at_ms: ctx.clock.nowMs() + 2_000 } },
        delaySeconds: 2,
      },
    ]);
    // The slot comes free; the message comes back and goes out, planned at the deferred time.
    await ctx.runtime.store.update({
      Key: keys.webhookEndpoint(ctx.teamId, endpoint.id),
      UpdateExpression: 'REMOVE in_flight.#other',
      ExpressionAttributeNames: { '#other': 'dlv_other' },
    });
    ctx.clock.advance(2_000);
    expect(await processDeliveryMessage(ctx.runtime, queued[0].message)).toBe('succeeded');
    expect((await getDelivery(ctx.runtime, ctx.principal, delivery.id)).attempt_log).toEqual([
      expect.objectContaining({ attempt: 1, status: 200, planned_at: isoTime(ctx.clock.nowMs()) }),
    ]);
  });
});
