/**
 * The webhook delivery state machine (interface "States" → "Webhook delivery" and "Webhook endpoint",
 * "Events" → "Delivery rules", "Webhook trust"; DESIGN D6–D10) against DynamoDB Local, with a scripted
 * fake transport and a manual clock. The runtime's queue and scheduler only record messages
 * (test/support/store.ts); the tests hand them to `processDeliveryMessage` themselves, so every
 * retry wait is checked without sleeping.
 */

import { randomUUID } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { HOUR_MS, isoTime } from '../../shared/clock.js';
import type { DeliveryMessage } from '../../shared/runtime.js';
import { type Principal } from '../../shared/auth/principal.js';
import { retryDelivery } from '../../shared/domain/webhook-deliveries/dead-letter.js';
import { ReplayDeadRequest } from '../../shared/domain/webhook-deliveries/schema.js';
import { createReplayJob, getReplayJob } from '../../shared/domain/webhook-replays/repository.js';
import { processDeliveryMessage } from '../../shared/domain/webhook-deliveries/dispatcher.js';
import { fanOutEvent } from '../../shared/domain/webhook-deliveries/fan-out.js';
import { getDelivery } from '../../shared/domain/webhook-deliveries/reads.js';
import { updateWebhookEndpoint } from '../../shared/domain/webhook-endpoints/changes.js';
import { getWebhookEndpoint } from '../../shared/domain/webhook-endpoints/repository.js';
import { seedTeam } from '../support/store.js';
import {
  OK,
  allDeliveries,
  ctx,
  expectProblem,
  newEndpoint,
  newProjectEvent,
  oneDelivery,
  runAll,
  useWebhookDeliveryFixture,
} from '../support/fixtures/webhook-delivery.js';

useWebhookDeliveryFixture();

/** The interface table: wait before attempts 2..8, in seconds (not read from the code under test). */
const SPEC_WAITS_SECONDS = [10, 30, 120, 600, 3_600, 21_600, 86_400];

/** Every item of the team in the dead-letter table. */
async function deadLetterItems(teamId = ctx.teamId): Promise<Record<string, unknown>[]> {
  const result = await ctx.runtime.store.document.send(
    new QueryCommand({
      TableName: ctx.runtime.store.deadLetterTableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `TEAM#${teamId}` },
      ConsistentRead: true,
    }),
  );
  return result.Items ?? [];
}

/**
 * Replay-dead as the API runs it (DESIGN D25): creates the job, then runs its batch messages (which the
 * recording queue keeps apart) until none is left. Returns the finished job's `replayed` count.
 */
async function replayDeadDeliveries(principal: Principal, sinceHours: number): Promise<{ replayed: number }> {
  const job = await createReplayJob(ctx.runtime, principal, ReplayDeadRequest.parse({ since_hours: sinceHours }));
  for (let batch = ctx.runtime.replayBatches.shift(); batch; batch = ctx.runtime.replayBatches.shift())
    await processDeliveryMessage(ctx.runtime, batch);
  const done = await getReplayJob(ctx.runtime, principal, job.id);
  expect(done).toMatchObject({ status: 'completed', replayed: job.matched });
  return { replayed: done.replayed };
}

// ---------------------------------------------------------------------------------------------------
// Retry timeline, dead-lettering, retry and replay (interface "Delivery rules" 4–5, "States")
// ---------------------------------------------------------------------------------------------------

describe('retry timeline', () => {
  it('walks one delivery through 8 failed attempts with the interface waits, then dead-letters it 72 h later', async () => {
    const endpoint = await newEndpoint();
    const { event, delivery, message: first } = await oneDelivery();
    let message = first;

    for (let attempt = 1; attempt <= 8; attempt++) {
      // Only attempt 1 (from fan-out) carries what it sends; a retry reads it with its lease.
      const { prepared, ...named } = message;
      expect({ named, carries: prepared !== undefined }).toEqual({
        named: {
          kind: 'attempt',
          team_id: ctx.teamId,
          delivery_id: delivery.id,
          endpoint_id: delivery.endpoint_id,
          attempt,
        },
        carries: attempt === 1,
      });
      if (attempt > 1) {
        // Delivered early (the clock has not moved): nothing happens.
        expect(await processDeliveryMessage(ctx.runtime, message)).toBe('skipped');
        expect(ctx.fake.requests).toHaveLength(attempt - 1);
        ctx.clock.advance(SPEC_WAITS_SECONDS[attempt - 2] * 1000);
      }
      const outcome = await processDeliveryMessage(ctx.runtime, message);
      expect({ attempt, outcome }).toEqual({
        attempt,
        outcome: attempt < 8 ? 'retry_scheduled' : 'awaiting_dead_letter',
      });
      expect(ctx.fake.requests).toHaveLength(attempt);
      expect(ctx.fake.requests.at(-1)!.headers['SVC-Event-Id']).toBe(event.id);

      // A duplicate message for the attempt just made: skipped, no POST.
      expect(await processDeliveryMessage(ctx.runtime, message)).toBe('skipped');
      expect(ctx.fake.requests).toHaveLength(attempt);

      const stored = await getDelivery(ctx.runtime, ctx.principal, delivery.id);
      expect(stored.status).toBe('pending');
      expect(stored.attempts).toBe(attempt);
      expect(stored.last_attempt_at).toBe(isoTime(ctx.clock.nowMs()));
      expect(stored.attempt_log).toHaveLength(attempt);
      // The attempt ran when it was due (the clock moved exactly to the planned time); the fake reports no TLS detail.
      expect(stored.attempt_log!.at(-1)).toEqual({
        attempt,
        planned_at: isoTime(ctx.clock.nowMs()),
        attempted_at: isoTime(ctx.clock.nowMs()),
        status: 500,
        failure_kind: 'http_status',
        duration_ms: 42,
        connect_ms: null,
        remote_address: '203.0.113.10',
        tls_version: null,
        response_body: 'boom',
      });

      const { queued, scheduled } = ctx.runtime.drain();
      if (attempt < 8) {
        const waitSeconds = SPEC_WAITS_SECONDS[attempt - 1];
        const next: DeliveryMessage = {
          kind: 'attempt',
          team_id: ctx.teamId,
          delivery_id: delivery.id,
          endpoint_id: delivery.endpoint_id,
          attempt: attempt + 1,
        };
        expect(stored.next_attempt_at).toBe(isoTime(ctx.clock.nowMs() + waitSeconds * 1000));
        if (waitSeconds <= 900) {
          // 10 s, 30 s, 2 min and 10 min: SQS DelaySeconds.
          expect(scheduled).toEqual([]);
          expect(queued).toEqual([{ message: next, delaySeconds: waitSeconds }]);
        } else {
          // 1 h, 6 h, 24 h: an EventBridge Scheduler one-time schedule.
          expect(queued).toEqual([]);
          expect(scheduled).toEqual([{ message: next, atMs: ctx.clock.nowMs() + waitSeconds * 1000 }]);
        }
        message = (queued[0] ?? scheduled[0]).message;
      } else {
        // After the 8th failure: still pending, no further attempt, a dead-letter timer 72 h out.
        expect(stored.next_attempt_at).toBeNull();
        expect(stored.dead_lettered_at).toBeNull();
        expect(queued).toEqual([]);
        expect(scheduled).toEqual([
          {
            message: { kind: 'dead_letter', team_id: ctx.teamId, delivery_id: delivery.id, attempt: 8 },
            atMs: ctx.clock.nowMs() + 72 * HOUR_MS,
          },
        ]);
        message = scheduled[0].message;
      }
    }
    expect((await getWebhookEndpoint(ctx.runtime, ctx.principal, endpoint.id)).consecutive_failures).toBe(8);

    // The dead-letter timer, delivered early, does nothing; 72 h later it marks the delivery dead.
    expect(await processDeliveryMessage(ctx.runtime, message)).toBe('skipped');
    expect((await getDelivery(ctx.runtime, ctx.principal, delivery.id)).status).toBe('pending');
    ctx.clock.advance(72 * HOUR_MS);
    expect(await processDeliveryMessage(ctx.runtime, message)).toBe('dead_lettered');
    const dead = await getDelivery(ctx.runtime, ctx.principal, delivery.id);
    expect(dead).toMatchObject({
      status: 'dead',
      attempts: 8,
      dead_lettered_at: isoTime(ctx.clock.nowMs()),
      next_attempt_at: null,
    });
    expect(dead.attempt_log).toHaveLength(8);
    expect(ctx.fake.requests).toHaveLength(8);
    expect(ctx.runtime.drain()).toEqual({ queued: [], scheduled: [] });

    const copies = await deadLetterItems();
    expect(copies).toHaveLength(1);
    expect(copies[0]).toMatchObject({
      delivery_id: delivery.id,
      endpoint_id: endpoint.id,
      event_id: event.id,
      event_type: 'project.created',
      attempts: 8,
      dead_lettered_at: dead.dead_lettered_at,
    });
    // The copy is lean (the replay job counts and reads copies; the delivery row keeps the attempt log).
    expect(copies[0].attempt_log).toBeUndefined();

    // A repeated timer is a no-op.
    expect(await processDeliveryMessage(ctx.runtime, message)).toBe('skipped');
    expect(await deadLetterItems()).toHaveLength(1);
  });

  it('the whole span is about 4 days of retries plus 72 h before dead-lettering', async () => {
    await newEndpoint();
    const { delivery } = await oneDelivery();
    const start = ctx.clock.nowMs();
    const outcomes = await runAll([
      { message: { kind: 'attempt', team_id: ctx.teamId, delivery_id: delivery.id, attempt: 1 }, dueMs: start },
    ]);
    expect(outcomes).toEqual([...Array(7).fill('retry_scheduled'), 'awaiting_dead_letter', 'dead_lettered']);
    const waits = SPEC_WAITS_SECONDS.reduce((sum, seconds) => sum + seconds, 0) * 1000;
    expect(ctx.clock.nowMs() - start).toBe(waits + 72 * HOUR_MS);
  });

  it('retryDelivery: dead → pending with attempts 0 and attempt 1 at once; CONFLICT when not dead; NOT_FOUND for another team', async () => {
    const endpoint = await newEndpoint();
    const { delivery, message } = await oneDelivery();
    await runAll([{ message, dueMs: ctx.clock.nowMs() }]);
    const dead = await getDelivery(ctx.runtime, ctx.principal, delivery.id);
    expect(dead.status).toBe('dead');
    expect(await deadLetterItems()).toHaveLength(1);

    // Another team cannot see it.
    const { principal: stranger } = await seedTeam(ctx.runtime.store, ctx.clock);
    await expectProblem(retryDelivery(ctx.runtime, stranger, delivery.id), 'NOT_FOUND');
    await expectProblem(retryDelivery(ctx.runtime, ctx.principal, 'dlv_01J0000000000000000000000Z'), 'NOT_FOUND');

    ctx.clock.advance(HOUR_MS);
    const retried = await retryDelivery(ctx.runtime, ctx.principal, delivery.id);
    expect(retried).toMatchObject({
      id: delivery.id,
      status: 'pending',
      attempts: 0,
      dead_lettered_at: null,
      next_attempt_at: isoTime(ctx.clock.nowMs()),
    });
    expect(await deadLetterItems()).toEqual([]);
    const { queued, scheduled } = ctx.runtime.drain();
    expect(scheduled).toEqual([]);
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

    // Retrying a pending delivery is a conflict.
    await expectProblem(retryDelivery(ctx.runtime, ctx.principal, delivery.id), 'CONFLICT');

    ctx.fake.setFallback(OK);
    expect(await processDeliveryMessage(ctx.runtime, queued[0].message)).toBe('succeeded');
    const succeeded = await getDelivery(ctx.runtime, ctx.principal, delivery.id);
    expect(succeeded).toMatchObject({
      status: 'succeeded',
      attempts: 1,
      next_attempt_at: null,
      dead_lettered_at: null,
    });
    expect(succeeded.attempt_log!.at(-1)).toEqual({
      attempt: 1,
      planned_at: isoTime(ctx.clock.nowMs()),
      attempted_at: isoTime(ctx.clock.nowMs()),
      status: 200,
      failure_kind: null,
      duration_ms: 17,
      connect_ms: null,
      remote_address: '203.0.113.10',
      tls_version: null,
      response_body: 'thanks',
    });
    expect(ctx.runtime.drain()).toEqual({ queued: [], scheduled: [] });
    // A success resets the endpoint's failure counter.
    expect((await getWebhookEndpoint(ctx.runtime, ctx.principal, endpoint.id)).consecutive_failures).toBe(0);

    // Succeeded is not dead either; a stale message for it does nothing.
    await expectProblem(retryDelivery(ctx.runtime, ctx.principal, delivery.id), 'CONFLICT');
    expect(await processDeliveryMessage(ctx.runtime, queued[0].message)).toBe('skipped');
    expect(ctx.fake.requests).toHaveLength(9);
  });

  it('replayDeadDeliveries re-queues only deliveries dead-lettered within since_hours, and counts them', async () => {
    const endpoint = await newEndpoint();
    const old = await oneDelivery();
    await runAll([{ message: old.message, dueMs: ctx.clock.nowMs() }]);
    const oldDead = await getDelivery(ctx.runtime, ctx.principal, old.delivery.id);
    expect(oldDead.status).toBe('dead');
    // Reset the endpoint's failure counter (8 so far) so the next 16 failures do not disable it.
    await updateWebhookEndpoint(ctx.runtime, ctx.principal, endpoint.id, { is_active: true });

    ctx.clock.advance(48 * HOUR_MS);
    const recentA = await oneDelivery();
    const recentB = await oneDelivery();
    await runAll([
      { message: recentA.message, dueMs: ctx.clock.nowMs() },
      { message: recentB.message, dueMs: ctx.clock.nowMs() },
    ]);
    ctx.clock.advance(HOUR_MS);
    for (const { delivery } of [recentA, recentB]) {
      const dead = await getDelivery(ctx.runtime, ctx.principal, delivery.id);
      expect(dead.status).toBe('dead');
      expect(Date.parse(dead.dead_lettered_at!)).toBe(ctx.clock.nowMs() - HOUR_MS);
    }
    // `old` died 48 h + one full retry span (about 103 h) + 1 h ago.
    const oldAgeHours = (ctx.clock.nowMs() - Date.parse(oldDead.dead_lettered_at!)) / HOUR_MS;
    expect(oldAgeHours).toBeGreaterThan(150);

    // Another team's replay touches nothing of ours.
    const { principal: stranger } = await seedTeam(ctx.runtime.store, ctx.clock);
    expect(await replayDeadDeliveries(stranger, 24 * 30)).toEqual({ replayed: 0 });

    expect(await replayDeadDeliveries(ctx.principal, 24)).toEqual({ replayed: 2 });
    const { queued, scheduled } = ctx.runtime.drain();
    expect(scheduled).toEqual([]);
    expect(queued.map((entry) => entry.message.delivery_id).sort()).toEqual(
      [recentA.delivery.id, recentB.delivery.id].sort(),
    );
    expect(
      queued.every(
        (entry) => entry.delaySeconds === 0 && entry.message.attempt === 1 && entry.message.kind === 'attempt',
      ),
    ).toBe(true);
    for (const { delivery } of [recentA, recentB]) {
      expect(await getDelivery(ctx.runtime, ctx.principal, delivery.id)).toMatchObject({
        status: 'pending',
        attempts: 0,
        dead_lettered_at: null,
      });
    }
    expect((await getDelivery(ctx.runtime, ctx.principal, old.delivery.id)).status).toBe('dead');
    expect((await deadLetterItems()).map((item) => item.delivery_id)).toEqual([old.delivery.id]);

    // Nothing recent is dead any more; the window must reach back far enough for the old one.
    expect(await replayDeadDeliveries(ctx.principal, 24)).toEqual({ replayed: 0 });
    expect(await replayDeadDeliveries(ctx.principal, Math.floor(oldAgeHours))).toEqual({ replayed: 0 });
    expect(ctx.runtime.drain()).toEqual({ queued: [], scheduled: [] });
    expect(await replayDeadDeliveries(ctx.principal, Math.ceil(oldAgeHours))).toEqual({ replayed: 1 });
    expect(ctx.runtime.drain().queued.map((entry) => entry.message)).toEqual([
      { kind: 'attempt', team_id: ctx.teamId, delivery_id: old.delivery.id, attempt: 1 },
    ]);
    expect(await deadLetterItems()).toEqual([]);

    // A replayed delivery is delivered again.
    ctx.fake.setFallback(OK);
    const outcomes = await runAll(queued.map((entry) => ({ message: entry.message, dueMs: ctx.clock.nowMs() })));
    expect(outcomes).toEqual(['succeeded', 'succeeded']);
  });
});

// ---------------------------------------------------------------------------------------------------
// Endpoint auto-disable (interface "States" → "Webhook endpoint", DESIGN D8)
// ---------------------------------------------------------------------------------------------------

describe('endpoint auto-disable', () => {
  it('20 consecutive failures across deliveries disable the endpoint; a success before resets; re-enabling resumes', async () => {
    const endpoint = await newEndpoint();
    const counter = async () => getWebhookEndpoint(ctx.runtime, ctx.principal, endpoint.id);

    // 19 deliveries fail their first attempt: 19 consecutive failures, still active.
    const firsts: DeliveryMessage[] = [];
    for (let index = 0; index < 19; index++) firsts.push((await oneDelivery()).message);
    for (const message of firsts) expect(await processDeliveryMessage(ctx.runtime, message)).toBe('retry_scheduled');
    expect(await counter()).toMatchObject({ is_active: true, consecutive_failures: 19, disabled_at: null });
    const seconds = ctx.runtime.drain().queued.map((entry) => entry.message);
    expect(seconds).toHaveLength(19);

    // A success before the 20th failure resets the counter.
    ctx.fake.script(OK);
    expect(await processDeliveryMessage(ctx.runtime, (await oneDelivery()).message)).toBe('succeeded');
    expect(await counter()).toMatchObject({ is_active: true, consecutive_failures: 0 });

    // 19 second attempts fail (19), then one third attempt fails: the 20th in a row.
    ctx.clock.advance(10_000);
    for (const message of seconds) expect(await processDeliveryMessage(ctx.runtime, message)).toBe('retry_scheduled');
    expect(await counter()).toMatchObject({ is_active: true, consecutive_failures: 19 });
    const thirds = ctx.runtime.drain().queued.map((entry) => entry.message);
    ctx.clock.advance(30_000);
    expect(await processDeliveryMessage(ctx.runtime, thirds[0])).toBe('retry_scheduled');
    const disabled = await counter();
    expect(disabled).toMatchObject({
      is_active: false,
      consecutive_failures: 20,
      disabled_at: isoTime(ctx.clock.nowMs()),
    });
    const postsWhenDisabled = ctx.fake.requests.length;
    expect(postsWhenDisabled).toBe(19 + 1 + 19 + 1);

    // A queued attempt for the disabled endpoint stops its delivery without a POST.
    expect(await processDeliveryMessage(ctx.runtime, thirds[1])).toBe('endpoint_disabled');
    expect(ctx.fake.requests).toHaveLength(postsWhenDisabled);
    const stopped = await getDelivery(ctx.runtime, ctx.principal, thirds[1].delivery_id);
    expect(stopped.status).toBe('dead');
    expect(stopped.attempts).toBe(2);
    expect(stopped.attempt_log!.at(-1)).toMatchObject({ attempt: 3, status: null, failure_kind: 'endpoint_disabled' });
    ctx.runtime.drain();

    // While disabled, new events create skipped deliveries only: no message, no POST (D6).
    expect(await fanOutEvent(ctx.runtime, await newProjectEvent())).toBe(1);
    expect(ctx.runtime.drain()).toEqual({ queued: [], scheduled: [] });

    // Re-enabling resets the counter and fresh deliveries resume.
    const enabled = await updateWebhookEndpoint(ctx.runtime, ctx.principal, endpoint.id, { is_active: true });
    expect(enabled).toMatchObject({ is_active: true, consecutive_failures: 0, disabled_at: null });
    ctx.fake.setFallback(OK);
    const fresh = await oneDelivery();
    expect(await processDeliveryMessage(ctx.runtime, fresh.message)).toBe('succeeded');
    expect(ctx.fake.requests).toHaveLength(postsWhenDisabled + 1);
    expect(ctx.fake.requests.at(-1)!.headers['SVC-Event-Id']).toBe(fresh.event.id);
    // The remaining retries of the older deliveries go out again as well (their attempt 3 is due).
    expect(await processDeliveryMessage(ctx.runtime, thirds[2])).toBe('succeeded');
  });

  it('disabling by hand sets disabled_at and stops attempts (deliveries are skipped); disabling again keeps the first time', async () => {
    const endpoint = await newEndpoint();
    const disabledAt = isoTime(ctx.clock.nowMs());
    expect(await updateWebhookEndpoint(ctx.runtime, ctx.principal, endpoint.id, { is_active: false })).toMatchObject({
      is_active: false,
      disabled_at: disabledAt,
    });
    ctx.clock.advance(HOUR_MS);
    expect(
      await updateWebhookEndpoint(ctx.runtime, ctx.principal, endpoint.id, { is_active: false, name: 'renamed' }),
    ).toMatchObject({ is_active: false, disabled_at: disabledAt, name: 'renamed' });
    expect(await fanOutEvent(ctx.runtime, await newProjectEvent())).toBe(1);
    expect((await allDeliveries()).map((delivery) => delivery.status)).toEqual(['skipped']);
    expect(ctx.runtime.drain()).toEqual({ queued: [], scheduled: [] });
    expect(await updateWebhookEndpoint(ctx.runtime, ctx.principal, endpoint.id, { is_active: true })).toMatchObject({
      is_active: true,
      disabled_at: null,
    });
    await expectProblem(
      updateWebhookEndpoint(ctx.runtime, ctx.principal, randomUUID(), { is_active: false }),
      'NOT_FOUND',
    );
  });

  it('a failure after a re-enable counts from zero', async () => {
    const endpoint = await newEndpoint();
    const messages: DeliveryMessage[] = [];
    for (let index = 0; index < 20; index++) messages.push((await oneDelivery()).message);
    for (const message of messages) await processDeliveryMessage(ctx.runtime, message);
    expect((await getWebhookEndpoint(ctx.runtime, ctx.principal, endpoint.id)).is_active).toBe(false);
    ctx.runtime.drain();
    await updateWebhookEndpoint(ctx.runtime, ctx.principal, endpoint.id, { is_active: true });
    expect(await processDeliveryMessage(ctx.runtime, (await oneDelivery()).message)).toBe('retry_scheduled');
    expect(await getWebhookEndpoint(ctx.runtime, ctx.principal, endpoint.id)).toMatchObject({
      is_active: true,
      consecutive_failures: 1,
    });
  });
});
