/**
 * The webhook delivery state machine (interface "States" → "Webhook delivery" and "Webhook endpoint",
 * "Events" → "Delivery rules", "Webhook trust"; DESIGN D6–D10) against DynamoDB Local, with a scripted
 * fake transport and a manual clock. The runtime's queue and scheduler only record messages
 * (test/support/store.ts); the tests hand them to `processDeliveryMessage` themselves, so every
 * retry wait is checked without sleeping.
 */
import { randomUUID } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Ability } from '../../shared/catalogues/abilities.js';
import type { WebhookEventName } from '../../shared/catalogues/webhook-events.js';
import { isoTime, type ManualClock } from '../../shared/clock.js';
import { ProblemError } from '../../shared/errors.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { CreatePlanRequest } from '../../shared/domain/plans/schema.js';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { CreateSubscriberRequest } from '../../shared/domain/subscribers/schema.js';
import { createSubscription } from '../../shared/domain/subscriptions/creation.js';
import { CreateSubscriptionRequest } from '../../shared/domain/subscriptions/schema.js';
import type { DeliveryMessage } from '../../shared/runtime.js';
import { type Principal } from '../../shared/auth/principal.js';
import { retryDelivery } from '../../shared/domain/webhook-deliveries/dead-letter.js';
import { ReplayDeadRequest } from '../../shared/domain/webhook-deliveries/schema.js';
import { createReplayJob, getReplayJob } from '../../shared/domain/webhook-replays/repository.js';
import { processDeliveryMessage, type ProcessOutcome } from '../../shared/domain/webhook-deliveries/dispatcher.js';
import {
  fanOutEvent,
  fanOutEvents,
  redactPayload,
  sendTestEvent,
} from '../../shared/domain/webhook-deliveries/fan-out.js';
import { getDelivery, listDeliveries } from '../../shared/domain/webhook-deliveries/reads.js';
import { WORKER_SHARDS } from '../../shared/domain/webhook-deliveries/worker-index.js';
import type { WebhookDelivery } from '../../shared/domain/webhook-deliveries/schema.js';
import { SWEEP_GRACE_MS, SWEEP_INTERVAL_SECONDS } from '../../shared/domain/webhook-deliveries/policy.js';

const SWEEP_INTERVAL_MS = SWEEP_INTERVAL_SECONDS * 1000;
import { relayOutbox, sweep } from '../../shared/domain/webhook-deliveries/sweeper.js';
import {
  createWebhookEndpoint,
  rotateWebhookEndpointSecret,
  updateWebhookEndpoint,
} from '../../shared/domain/webhook-endpoints/changes.js';
import { getWebhookEndpoint } from '../../shared/domain/webhook-endpoints/repository.js';
import type { StoredEvent } from '../../shared/events/outbox.js';
import { keys } from '../../shared/store/keys.js';
import type { Store } from '../../shared/store/store.js';
import type {
  AttemptResult,
  WebhookRequest,
  WebhookTransport,
} from '../../shared/domain/webhook-deliveries/transport/port.js';
import { recordingStore, withStore } from '../support/guarantees.js';
import { checkSignature } from '../support/signature.js';
import { revokeToken } from '../../shared/domain/tokens/repository.js';
import {
  countingStore,
  createTestRuntime,
  seedTeam,
  seedToken,
  testClock,
  type TestRuntime,
} from '../support/store.js';

// ---------------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------------

const OK: AttemptResult = {
  ok: true,
  status: 200,
  failure_kind: null,
  failure_message: null,
  duration_ms: 17,
  response_body: 'thanks',
  remote_address: '203.0.113.10',
};
const HTTP_500: AttemptResult = {
  ok: false,
  status: 500,
  failure_kind: 'http_status',
  failure_message: 'HTTP 500',
  duration_ms: 42,
  response_body: 'boom',
  remote_address: '203.0.113.10',
};

/**
 * A fake transport: answers each request with the next scripted result (or `fallback` when the
 * script is empty) and records every request it was given.
 */
function fakeTransport(fallback: AttemptResult = HTTP_500) {
  const requests: WebhookRequest[] = [];
  const script: AttemptResult[] = [];
  const state = { fallback, delayMs: 0 };
  const transport: WebhookTransport = {
    async send(request) {
      requests.push(request);
      if (state.delayMs) await new Promise((resolve) => setTimeout(resolve, state.delayMs));
      return { ...(script.shift() ?? state.fallback) };
    },
  };
  return {
    transport,
    requests,
    /** Results for the next calls, in order. */
    script: (...results: AttemptResult[]) => script.push(...results),
    /** The result once the script is used up. */
    setFallback: (result: AttemptResult) => {
      state.fallback = result;
    },
    /** Makes every call take this long (real milliseconds, kept tiny). */
    setDelay: (ms: number) => {
      state.delayMs = ms;
    },
  };
}

/** The interface table: wait before attempts 2..8, in seconds (not read from the code under test). */
const SPEC_WAITS_SECONDS = [10, 30, 120, 600, 3_600, 21_600, 86_400];
const HOUR_MS = 3_600_000;

interface Context {
  clock: ManualClock;
  runtime: TestRuntime;
  fake: ReturnType<typeof fakeTransport>;
  principal: Principal;
  teamId: string;
}

let ctx: Context;

beforeEach(async () => {
  // Every test gets its own tables: the sweeper and the outbox relay read table-wide indexes.
  // The clock starts at real time: DynamoDB Local deletes items whose TTL lies in the real past.
  const clock = testClock();
  const fake = fakeTransport();
  const runtime = await createTestRuntime({ clock, transport: fake.transport });
  const { team, principal } = await seedTeam(runtime.store, clock);
  // The team's own `team.created` is fanned out (to no endpoint yet), so each test starts with an empty outbox.
  await relayOutbox(runtime, clock.nowMs());
  ctx = { clock, runtime, fake, principal, teamId: team.id };
});

async function newEndpoint(
  events: WebhookEventName[] = ['project.created'],
  principal: Principal = ctx.principal,
  extra: { url?: string; allowed_ips?: string[]; max_concurrency?: number } = {},
) {
  return createWebhookEndpoint(ctx.runtime, principal, {
    name: `hook ${randomUUID().slice(0, 8)}`,
    url: 'https://receiver.example/hooks',
    events,
    ...extra,
  });
}

/** Creates a project (which writes `project.created` to the outbox) and returns its stored event. */
async function newProjectEvent(): Promise<StoredEvent> {
  const project = await createProject(ctx.runtime, ctx.principal, {
    name: `Project ${randomUUID().slice(0, 8)}`,
    platform_type: 'discord',
  });
  const events = await teamEvents();
  const event = events.find((candidate) => (candidate.data as { project?: { id: string } }).project?.id === project.id);
  expect(event).toBeDefined();
  return event!;
}

/** Every event item in the team's partition. */
async function teamEvents(): Promise<StoredEvent[]> {
  const result = await ctx.runtime.store.document.send(
    new QueryCommand({
      TableName: ctx.runtime.store.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': `TEAM#${ctx.teamId}`, ':prefix': 'EVENT#' },
      ConsistentRead: true,
    }),
  );
  return (result.Items ?? []) as StoredEvent[];
}

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

async function allDeliveries(): Promise<WebhookDelivery[]> {
  return (await listDeliveries(ctx.runtime, ctx.principal, { limit: 100 })).data;
}

/** A message as the sweeper re-sends it: fan-out's `message` without what it carried (the dispatcher reads the row). */
function recovery(message: DeliveryMessage): DeliveryMessage {
  const { prepared: _carried, ...plain } = message;
  return plain;
}

/** Attempt 1 as fan-out queues it: with what it sends — the event, the body stored on the row, the row's due time. */
async function firstAttemptOf(delivery: WebhookDelivery): Promise<DeliveryMessage> {
  const row = await ctx.runtime.store.get(keys.delivery(ctx.teamId, delivery.id));
  expect(typeof row?.body).toBe('string');
  return {
    kind: 'attempt',
    team_id: ctx.teamId,
    delivery_id: delivery.id,
    endpoint_id: delivery.endpoint_id,
    attempt: 1,
    prepared: {
      event_id: delivery.event_id,
      event_type: delivery.event_type,
      body: row!.body as string,
      due_at_ms: Date.parse(delivery.created_at),
    },
  };
}

/** Fans out one new project event and returns its single delivery plus the attempt-1 message. */
async function oneDelivery(): Promise<{ event: StoredEvent; delivery: WebhookDelivery; message: DeliveryMessage }> {
  const event = await newProjectEvent();
  expect(await fanOutEvent(ctx.runtime, event)).toBe(1);
  const { queued, scheduled } = ctx.runtime.drain();
  expect(scheduled).toEqual([]);
  expect(queued).toHaveLength(1);
  const delivery = (await allDeliveries()).find((candidate) => candidate.event_id === event.id)!;
  expect(queued[0]).toEqual({ message: await firstAttemptOf(delivery), delaySeconds: 0 });
  return { event, delivery, message: queued[0].message };
}

/**
 * A tiny event loop over the recorded queue and scheduler: repeatedly takes the earliest-due message,
 * moves the clock to its due time (never backwards), processes it, and collects what it queued.
 * Stops when nothing is left. Returns the outcomes in order.
 */
async function runAll(initial: Array<{ message: DeliveryMessage; dueMs: number }> = []): Promise<ProcessOutcome[]> {
  const agenda = [...initial];
  const collect = () => {
    const { queued, scheduled } = ctx.runtime.drain();
    for (const entry of queued)
      agenda.push({ message: entry.message, dueMs: ctx.clock.nowMs() + entry.delaySeconds * 1000 });
    for (const entry of scheduled) agenda.push({ message: entry.message, dueMs: entry.atMs });
  };
  collect();
  const outcomes: ProcessOutcome[] = [];
  for (let guard = 0; agenda.length > 0; guard++) {
    if (guard > 1_000) throw new Error('runAll did not settle');
    agenda.sort((a, b) => a.dueMs - b.dueMs);
    const next = agenda.shift()!;
    if (next.dueMs > ctx.clock.nowMs()) ctx.clock.set(next.dueMs);
    outcomes.push(await processDeliveryMessage(ctx.runtime, next.message));
    collect();
  }
  return outcomes;
}

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

async function expectProblem(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ProblemError);
  expect((error as ProblemError).code).toBe(code);
}

// ---------------------------------------------------------------------------------------------------
// Fan-out (DESIGN D6)
// ---------------------------------------------------------------------------------------------------

describe('fan-out', () => {
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

/** A second token of the same team holding only `abilities` (test/support/store.ts `seedToken`). */
async function seedTeamMember(abilities: Ability[]): Promise<{ principal: Principal }> {
  return seedToken(ctx.runtime.store, ctx.clock, { teamId: ctx.teamId, abilities });
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
    expect(await sweep(ctx.runtime)).toEqual({ requeued: 0, fannedOut: 0, replays: 0 });
    expect(ctx.runtime.drain()).toEqual({ queued: [], scheduled: [] });

    // Past the 60 s lease (and the sweeper's grace): the attempt is re-queued and sent again.
    ctx.clock.advance(60_000 + 60_000 + 1_000);
    expect(await sweep(ctx.runtime)).toEqual({ requeued: 1, fannedOut: 0, replays: 0 });
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
    expect(await sweep(ctx.runtime)).toEqual({ requeued: 0, fannedOut: 0, replays: 0 });
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
    expect(await sweep(ctx.runtime)).toEqual({ requeued: 0, fannedOut: 0, replays: 0 });
    ctx.clock.advance(60_000 + 2_000);
    expect(await sweep(ctx.runtime)).toEqual({ requeued: 1, fannedOut: 0, replays: 0 });
    const { queued } = ctx.runtime.drain();
    expect(queued).toEqual([
      { message: { kind: 'dead_letter', team_id: ctx.teamId, delivery_id: delivery.id, attempt: 8 }, delaySeconds: 0 },
    ]);
    expect(await processDeliveryMessage(ctx.runtime, queued[0].message)).toBe('dead_lettered');
    expect((await getDelivery(ctx.runtime, ctx.principal, delivery.id)).status).toBe('dead');
    expect(await sweep(ctx.runtime)).toEqual({ requeued: 0, fannedOut: 0, replays: 0 });
  });

  it('the sweeper re-queues a lost retry timer and fans out an event whose stream record was lost', async () => {
    await newEndpoint();
    const { delivery, message } = await oneDelivery();
    expect(await processDeliveryMessage(ctx.runtime, message)).toBe('retry_scheduled');
    ctx.runtime.drain(); // the 10 s message is "lost"
    const lostEvent = await newProjectEvent(); // never fanned out
    ctx.clock.advance(10_000 + 60_000 + 1_000);
    expect(await sweep(ctx.runtime)).toEqual({ requeued: 1, fannedOut: 1, replays: 0 });
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
    expect(await sweep({ ...backlogged, store: recording.store })).toEqual({ requeued: 0, fannedOut: 0, replays: 0 });
    expect(ctx.runtime.drain().queued).toEqual([]);
    expect(new Set(recording.commands)).toEqual(new Set(['QueryCommand'])); // reads of the indexes, no move
    // Nothing moved: a sweep with a queue that cannot tell finds all three.
    expect(await sweep(ctx.runtime)).toEqual({ requeued: 3, fannedOut: 0, replays: 0 });
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
    expect(await sweep(caughtUp)).toEqual({ requeued: 3, fannedOut: 0, replays: 0 });
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
    expect(await sweep(runtime)).toEqual({ requeued: 30, fannedOut: 0, replays: 0 });
    const first = ctx.runtime.drain().queued.map((entry) => entry.message);
    expect(new Set(first.map((message) => message.delivery_id))).toEqual(
      new Set(lost.map((message) => message.delivery_id)),
    );
    expect(first.every((message) => message.kind === 'attempt' && message.attempt === 1)).toBe(true);
    const firstCounts = take();
    expect(firstCounts).toMatchObject({ pendingQueries: WORKER_SHARDS.length, pendingRowsRead: 30, updates: 30 });

    // The next sweeps (AWS runs one every SWEEP_INTERVAL_SECONDS): nothing re-queued, one empty query per shard, no write.
    for (const step of [1_000, SWEEP_INTERVAL_MS / 2, SWEEP_INTERVAL_MS / 2]) {
      ctx.clock.advance(step);
      expect(await sweep(runtime)).toEqual({ requeued: 0, fannedOut: 0, replays: 0 });
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
    expect(await sweep(runtime)).toEqual({ requeued: 0, fannedOut: 0, replays: 0 });
    ctx.clock.advance(1_000);
    expect(await sweep(runtime)).toEqual({ requeued: 20, fannedOut: 0, replays: 0 });
    const again = ctx.runtime.drain().queued.map((entry) => entry.message);
    expect(new Set(again.map((message) => message.delivery_id))).toEqual(
      new Set(first.slice(10).map((message) => message.delivery_id)),
    );
    for (const message of again.slice(0, 15))
      expect(await processDeliveryMessage(ctx.runtime, message)).toBe('succeeded');

    // The 5 still waiting were re-queued twice: the spacing doubles (2 × the interval), so the sweep one spacing on leaves them be.
    ctx.clock.advance(SWEEP_INTERVAL_MS + SWEEP_GRACE_MS + 1_000);
    expect(await sweep(runtime)).toEqual({ requeued: 0, fannedOut: 0, replays: 0 });
    ctx.clock.advance(SWEEP_INTERVAL_MS);
    expect(await sweep(runtime)).toEqual({ requeued: 5, fannedOut: 0, replays: 0 });
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
    expect(await sweep(runtime)).toEqual({ requeued: 0, fannedOut: 0, replays: 0 });
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
    expect(await sweep(runtime, 20_000)).toEqual({ requeued: 0, fannedOut: 1, replays: 0 });
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
    // The sweep's store: once a page holding one of the two has been read, the dispatcher handles it before the sweeper moves it.
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
    expect(await sweep({ ...ctx.runtime, store })).toEqual({ requeued: 1, fannedOut: 0, replays: 0 });
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
    expect(await sweep(ctx.runtime)).toEqual({ requeued: 1, fannedOut: 0, replays: 0 });
    expect(ctx.runtime.drain().queued.map((entry) => entry.message)).toEqual([recovery(leased)]);
    // The waiting one, still not processed, comes again the interval + the grace after it was re-queued.
    ctx.clock.advance(SWEEP_INTERVAL_MS);
    expect(await sweep(ctx.runtime)).toEqual({ requeued: 1, fannedOut: 0, replays: 0 });
    expect(ctx.runtime.drain().queued.map((entry) => entry.message)).toEqual([recovery(waiting)]);
  });
});

// ---------------------------------------------------------------------------------------------------
// Signing (interface "Webhook trust", DESIGN D8)
// ---------------------------------------------------------------------------------------------------

describe('signing and rotation', () => {
  function signatureParts(request: WebhookRequest): Record<string, string> {
    return Object.fromEntries(
      request.headers['SVC-Signature'].split(',').map((part) => part.split('=', 2) as [string, string]),
    );
  }

  async function deliverOne(): Promise<WebhookRequest> {
    const { message } = await oneDelivery();
    expect(await processDeliveryMessage(ctx.runtime, message)).toBe('succeeded');
    return ctx.fake.requests.at(-1)!;
  }

  /**
   * Whether a receiver holding `secret` accepts `request` at the manual clock's time, by the one
   * independent receiver check (test/support/signature.ts). Any rejection but a wrong signature fails.
   */
  async function accepts(request: WebhookRequest, secret: string): Promise<boolean> {
    const rejection = checkSignature({
      header: request.headers['SVC-Signature'],
      rawBody: request.body,
      secret,
      nowSeconds: Math.floor(ctx.clock.nowMs() / 1000),
    });
    if (rejection === 'signature mismatch') return false;
    if (rejection) throw new Error(`receiver rejected the delivery: ${rejection}`);
    return true;
  }

  it('dashboard rotation signs with v1 (new) and v0 (old) for 24 hours, then v1 only; API rotation signs v1 only', async () => {
    ctx.fake.setFallback(OK);
    const created = await newEndpoint();
    const original = created.secret;

    const before = await deliverOne();
    expect(Object.keys(signatureParts(before))).toEqual(['t', 'v1']);
    expect(await accepts(before, original)).toBe(true);

    const rotated = await rotateWebhookEndpointSecret(ctx.runtime, ctx.principal, created.id, 'dashboard');
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(original);

    const dual = await deliverOne();
    const parts = signatureParts(dual);
    expect(Object.keys(parts)).toEqual(['t', 'v1', 'v0']);
    expect(dual.headers['SVC-Signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64},v0=[0-9a-f]{64}$/);
    expect(Number(parts.t)).toBe(Math.floor(ctx.clock.nowMs() / 1000));
    expect(await accepts(dual, rotated.secret)).toBe(true);
    expect(await accepts(dual, original)).toBe(true);
    expect(await accepts(dual, 'whsec_not-the-secret')).toBe(false);
    // v1 belongs to the new secret, v0 to the old one.
    expect(
      await accepts(
        { ...dual, headers: { ...dual.headers, 'SVC-Signature': `t=${parts.t},v1=${parts.v1}` } },
        rotated.secret,
      ),
    ).toBe(true);
    expect(
      await accepts(
        { ...dual, headers: { ...dual.headers, 'SVC-Signature': `t=${parts.t},v0=${parts.v0}` } },
        original,
      ),
    ).toBe(true);
    expect(
      await accepts(
        { ...dual, headers: { ...dual.headers, 'SVC-Signature': `t=${parts.t},v1=${parts.v1}` } },
        original,
      ),
    ).toBe(false);

    // Still dual just before the 24 h window closes.
    ctx.clock.advance(24 * HOUR_MS - 1_000);
    expect(Object.keys(signatureParts(await deliverOne()))).toEqual(['t', 'v1', 'v0']);

    // After 24 hours: v1 with the new secret only.
    ctx.clock.advance(2_000);
    const after = await deliverOne();
    expect(Object.keys(signatureParts(after))).toEqual(['t', 'v1']);
    expect(await accepts(after, rotated.secret)).toBe(true);
    expect(await accepts(after, original)).toBe(false);

    // API rotation: v1 only, at once, with the newest secret.
    const apiRotated = await rotateWebhookEndpointSecret(ctx.runtime, ctx.principal, created.id, 'api');
    const viaApi = await deliverOne();
    expect(Object.keys(signatureParts(viaApi))).toEqual(['t', 'v1']);
    expect(await accepts(viaApi, apiRotated.secret)).toBe(true);
    expect(await accepts(viaApi, rotated.secret)).toBe(false);
  });

  it('an API rotation during a dashboard dual-sign window ends the window', async () => {
    ctx.fake.setFallback(OK);
    const created = await newEndpoint();
    await rotateWebhookEndpointSecret(ctx.runtime, ctx.principal, created.id, 'dashboard');
    const apiRotated = await rotateWebhookEndpointSecret(ctx.runtime, ctx.principal, created.id, 'api');
    const request = await deliverOne();
    expect(Object.keys(signatureParts(request))).toEqual(['t', 'v1']);
    expect(await accepts(request, apiRotated.secret)).toBe(true);
  });

  it('every POST carries the envelope and the trust headers', async () => {
    ctx.fake.setFallback(OK);
    await newEndpoint();
    const { event, message } = await oneDelivery();
    expect(await processDeliveryMessage(ctx.runtime, message)).toBe('succeeded');
    const request = ctx.fake.requests.at(-1)!;
    expect(request.url).toBe('https://receiver.example/hooks');
    expect(request.allowedIps ?? null).toBeNull();
    expect(request.headers['SVC-Event-Id']).toBe(event.id);
    expect(request.headers['SVC-Event-Name']).toBe('project.created');
    expect(request.headers['Content-Type']).toBe('application/json');
    const body = JSON.parse(request.body);
    expect(Object.keys(body).sort()).toEqual(['api_version', 'created_at', 'data', 'id', 'project_id', 'type']);
    expect(body).toMatchObject({
      id: event.id,
      type: 'project.created',
      api_version: '2026-05-01',
      project_id: event.project_id,
      created_at: event.created_at,
    });
    expect(body.data.project.id).toBe(event.project_id);
  });
});

// ---------------------------------------------------------------------------------------------------
// Payload exposure (interface "Data exposure", DESIGN D10)
// ---------------------------------------------------------------------------------------------------

describe('payload exposure', () => {
  it('redactPayload removes email and phone at any depth unless the owner holds project-user:view', () => {
    const data = {
      subscriber: { id: 's1', email: 'a@example.com', phone: '+15550100', display_name: 'A' },
      others: [{ email: 'b@example.com', nested: { phone: '+15550101', keep: 1 } }],
      note: 'email',
    };
    expect(redactPayload(data, ['project-user:view'])).toEqual(data);
    expect(redactPayload(data, ['project:view', 'project-user:view-any'])).toEqual({
      subscriber: { id: 's1', display_name: 'A' },
      others: [{ nested: { keep: 1 } }],
      note: 'email',
    });
    // The input is not modified.
    expect(data.subscriber.email).toBe('a@example.com');
  });

  it('a subscription.created payload carries e-mail and phone only when the owner holds project-user:view AND the subscriber consented (all four cases, D10)', async () => {
    ctx.fake.setFallback(OK);
    const { principal: withView } = await seedTeamMember([
      'webhook-endpoint:manage',
      'project-subscription:view',
      'project-user:view',
    ]);
    const { principal: withoutView } = await seedTeamMember([
      'webhook-endpoint:manage',
      'project-subscription:view',
      'project-user:view-any',
    ]);
    await newEndpoint(['subscription.created'], withView, { url: 'https://seeing.example/hooks' });
    await newEndpoint(['subscription.created'], withoutView, { url: 'https://blind.example/hooks' });

    // Real objects, through the domain: a project, a plan, a consenting and a non-consenting subscriber.
    const project = await createProject(ctx.runtime, ctx.principal, {
      name: 'Exposure club',
      platform_type: 'discord',
    });
    const plan = await createPlan(
      ctx.runtime,
      ctx.principal,
      project.id,
      CreatePlanRequest.parse({ name: 'Gold', amount: 500, currency: 'EUR', interval: 'month' }),
    );
    const consenting = await createSubscriber(
      ctx.runtime,
      ctx.principal,
      project.id,
      CreateSubscriberRequest.parse({
        display_name: 'Ada',
        email: 'ada@example.com',
        phone: '+15550123',
        consent: true,
      }),
    );
    const private_ = await createSubscriber(
      ctx.runtime,
      ctx.principal,
      project.id,
      CreateSubscriberRequest.parse({
        display_name: 'Bo',
        email: 'bo@example.com',
        phone: '+15550124',
        consent: false,
      }),
    );
    await relayOutbox(ctx.runtime, ctx.clock.nowMs()); // events before the subscriptions: not subscribed
    await runAll();
    ctx.fake.requests.length = 0;
    for (const subscriber of [consenting, private_]) {
      await createSubscription(
        ctx.runtime,
        ctx.principal,
        project.id,
        CreateSubscriptionRequest.parse({ subscriber_id: subscriber.id, plan_id: plan.id }),
      );
    }
    await relayOutbox(ctx.runtime, ctx.clock.nowMs());
    expect(await runAll()).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);

    const subscriberIn = (url: string, subscriberId: string) => {
      const bodies = ctx.fake.requests
        .filter((request) => request.url === url)
        .map((request) => JSON.parse(request.body) as { type: string; data: { subscriber: Record<string, unknown> } });
      const body = bodies.find(
        (candidate) => candidate.type === 'subscription.created' && candidate.data.subscriber.id === subscriberId,
      );
      expect(body, `${url} ${subscriberId}`).toBeDefined();
      return body!.data.subscriber;
    };
    // Owner with project-user:view, subscriber consented: contact details travel.
    expect(subscriberIn('https://seeing.example/hooks', consenting.id)).toMatchObject({
      email: 'ada@example.com',
      phone: '+15550123',
    });
    // Every other case: none.
    for (const [url, subscriberId] of [
      ['https://seeing.example/hooks', private_.id],
      ['https://blind.example/hooks', consenting.id],
      ['https://blind.example/hooks', private_.id],
    ] as const) {
      const subscriber = subscriberIn(url, subscriberId);
      expect(subscriber).not.toHaveProperty('email');
      expect(subscriber).not.toHaveProperty('phone');
    }
    const everything = JSON.stringify(ctx.fake.requests.map((request) => request.body));
    expect(everything).not.toContain('bo@example.com');
    expect(everything).not.toContain('+15550124');
  });
});

describe('DynamoDB requests per delivery', () => {
  it("fans a team's events out with 3 requests however many there are, then takes each delivery to succeeded with 3 more", async () => {
    const endpoint = await newEndpoint();
    ctx.fake.setFallback(OK);
    const events = [await newProjectEvent(), await newProjectEvent(), await newProjectEvent()];
    const recording = recordingStore(ctx.runtime.store);
    const runtime = withStore(ctx.runtime, recording.store);

    // The team's endpoints (Query), their owners re-read (BatchGetItem, D6), every event's mark and delivery (one transaction).
    expect(await fanOutEvents(runtime, events)).toBe(3);
    expect(recording.commands).toEqual(['QueryCommand', 'BatchGetCommand', 'TransactWriteCommand']);
    const { queued } = ctx.runtime.drain();
    expect(queued).toHaveLength(3);

    for (const [index, { message }] of queued.entries()) {
      recording.commands.length = 0;
      // Each message carries what it sends: the lease and the endpoint's slot in one transaction, then the outcome with the
      // slot given back. The first also reads the endpoint, which the process then keeps (its revision guards the copy).
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
    // The lease (returns the delivery and its stored body), the endpoint's slot (returns the endpoint), the outcome with the slot given back.
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
    // Refused on the revision (the endpoint comes back with the refusal), then taken with the endpoint as found: no extra read.
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
    // Refused once, then not tried again as is: the lease, the slot (full → the stale one removed → taken), the outcome.
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
