import pMap from 'p-map';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { webhookEvent } from '../catalogues/webhook-events.js';
import type { Principal } from '../auth/tokens.js';
import { isoTime } from '../clock.js';
import { ProblemError } from '../errors.js';
import { newDeliveryId } from '../ids.js';
import type { DeliveryMessage, Runtime } from '../runtime.js';
import { keys, sortKeyPrefix } from '../store/keys.js';
import { decodeCursor, encodeCursor } from '../store/store.js';
import { AUTO_DISABLE_THRESHOLD, allWebhookEndpoints, loadWebhookEndpoint, type StoredWebhookEndpoint } from './endpoints.js';
import { envelopeOf, outboxEvent, type StoredEvent } from './events.js';
import { EVENT_ID_HEADER, EVENT_NAME_HEADER, SIGNATURE_HEADER, signatureHeader } from './signing.js';
import type { AttemptResult } from './transport.js';

/** Up to 8 attempts per delivery (interface "Delivery rules" 4). */
export const MAX_ATTEMPTS = 8;
/**
 * Wait before attempt N, in seconds, indexed by N (interface "Delivery rules" 4, DESIGN D7):
 * attempt 1 at once, then 10 s, 30 s, 2 min, 10 min, 1 h, 6 h, 24 h.
 */
export const RETRY_WAIT_SECONDS: readonly number[] = [0, 0, 10, 30, 120, 600, 3_600, 21_600, 86_400];
/** After the 8th failure the delivery waits 72 hours before it is dead-lettered (seconds). */
export const DEAD_LETTER_WAIT_SECONDS = 72 * 3_600;
/** Waits up to this many seconds go through SQS `DelaySeconds`; longer ones through EventBridge Scheduler. */
export const MAX_QUEUE_DELAY_SECONDS = 900;
/** How long an in-flight attempt holds its lease (milliseconds, real time): the 10 s budget plus margin. */
export const LEASE_MS = 60_000;
/** Attempt records kept per delivery (the newest). */
const MAX_ATTEMPT_LOG = 40;
/** Deliveries and their attempt logs are kept 30 days after creation (TTL housekeeping). */
const DELIVERY_RETENTION_SECONDS = 30 * 24 * 3_600;

/** Delivery statuses (DESIGN D7). */
export type DeliveryStatus = 'pending' | 'delivering' | 'succeeded' | 'dead';

/** One recorded attempt (DESIGN D7). */
export interface DeliveryAttemptRecord {
  attempt: number;
  attempted_at: string;
  status: number | null;
  failure_kind: AttemptResult['failure_kind'] | 'endpoint_disabled';
  duration_ms: number;
  response_body: string;
}

/** A delivery as the API returns it (interface "Webhook delivery"). */
export interface WebhookDelivery {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  dead_lettered_at: string | null;
  created_at: string;
  attempt_log?: DeliveryAttemptRecord[];
}

interface StoredDelivery extends WebhookDelivery {
  team_id: string;
  /** Epoch ms of the next attempt (pending) or of dead-lettering (pending after attempt 8). */
  due_at_ms: number | null;
  lease_expires_at_ms: number | null;
  attempt_log: DeliveryAttemptRecord[];
}

function publicDelivery(item: StoredDelivery, withAttempts: boolean): WebhookDelivery {
  const delivery: WebhookDelivery = {
    id: item.id,
    endpoint_id: item.endpoint_id,
    event_id: item.event_id,
    event_type: item.event_type,
    status: item.status,
    attempts: item.attempts,
    next_attempt_at: item.next_attempt_at ?? null,
    last_attempt_at: item.last_attempt_at ?? null,
    dead_lettered_at: item.dead_lettered_at ?? null,
    created_at: item.created_at,
  };
  if (withAttempts) delivery.attempt_log = item.attempt_log ?? [];
  return delivery;
}

/** gsi1 sort key of the pending-deliveries index: zero-padded due time, then the id. */
function dueSortKey(dueAtMs: number, deliveryId: string): string {
  return `${String(Math.max(0, Math.floor(dueAtMs))).padStart(15, '0')}#${deliveryId}`;
}

/** A real wait (seconds) shortened by the local TIME_SCALE, in milliseconds. */
function scaledWaitMs(runtime: Runtime, seconds: number): number {
  return (seconds * 1000) / runtime.timeScale;
}

/**
 * Hands a message to the queue when it is due within 15 minutes (SQS `DelaySeconds`), otherwise to
 * the scheduler (EventBridge Scheduler one-time schedule) (DESIGN D7).
 */
export async function enqueueAt(runtime: Runtime, message: DeliveryMessage, dueAtMs: number): Promise<void> {
  const delaySeconds = Math.max(0, (dueAtMs - runtime.clock.nowMs()) / 1000);
  if (delaySeconds <= MAX_QUEUE_DELAY_SECONDS) await runtime.deliveryQueue.send([message], delaySeconds);
  else await runtime.retryScheduler.schedule(message, dueAtMs);
}

function newDeliveryItem(runtime: Runtime, teamId: string, endpointId: string, event: Pick<StoredEvent, 'id' | 'type'>): StoredDelivery & Record<string, unknown> {
  const nowMs = runtime.clock.nowMs();
  const id = newDeliveryId(nowMs);
  return {
    ...keys.delivery(teamId, id),
    entity: 'delivery',
    id,
    team_id: teamId,
    endpoint_id: endpointId,
    event_id: event.id,
    event_type: event.type,
    status: 'pending',
    attempts: 0,
    next_attempt_at: isoTime(nowMs),
    last_attempt_at: null,
    dead_lettered_at: null,
    created_at: isoTime(nowMs),
    due_at_ms: nowMs,
    lease_expires_at_ms: null,
    attempt_log: [],
    gsi1pk: keys.pendingDeliveriesIndex,
    gsi1sk: dueSortKey(nowMs, id),
    expires_at: Math.floor(nowMs / 1000) + DELIVERY_RETENTION_SECONDS,
  };
}

/**
 * Fans one outbox event out (DESIGN D6): one delivery per active endpoint of the team that subscribes
 * to the event and whose owner holds the event's minimum ability. The deliveries and the event's
 * "fanned out" mark are written in one transaction guarded on the mark, so a repeated stream record
 * or relay pass creates nothing twice. Then each delivery's attempt 1 is queued at once (a lost
 * queue send is picked up by the sweeper). Returns the number of deliveries created.
 */
export async function fanOutEvent(runtime: Runtime, event: StoredEvent): Promise<number> {
  const minimumAbility = webhookEvent(event.type).minimum_ability;
  const endpoints = (await allWebhookEndpoints(runtime, event.team_id)).filter(
    (endpoint) => endpoint.is_active && endpoint.events.includes(event.type) && endpoint.owner_abilities.includes(minimumAbility),
  );
  const deliveries = endpoints.map((endpoint) => newDeliveryItem(runtime, event.team_id, endpoint.id, event));
  try {
    await runtime.store.document.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: runtime.store.tableName,
              Key: keys.event(event.team_id, event.id),
              UpdateExpression: 'SET fanned_out_at = :now, delivery_count = :count REMOVE gsi1pk, gsi1sk',
              ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(fanned_out_at)',
              ExpressionAttributeValues: { ':now': isoTime(runtime.clock.nowMs()), ':count': deliveries.length },
            },
          },
          ...deliveries.map((Item) => ({ Put: { TableName: runtime.store.tableName, Item, ConditionExpression: 'attribute_not_exists(pk)' } })),
        ],
      }),
    );
  } catch (error) {
    if (error instanceof TransactionCanceledException) return 0; // already fanned out (or the event is gone)
    throw error;
  }
  if (deliveries.length) {
    await runtime.deliveryQueue.send(
      deliveries.map((delivery) => ({ kind: 'attempt', team_id: event.team_id, delivery_id: delivery.id, attempt: 1 })),
      0,
    );
  }
  return deliveries.length;
}

/**
 * Removes subscriber `email` and `phone` from a payload unless the endpoint owner holds
 * `project-user:view` (interface "Data exposure", DESIGN D10; consent was applied when the event was made).
 */
export function redactPayload(data: unknown, ownerAbilities: readonly string[]): unknown {
  if (ownerAbilities.includes('project-user:view')) return data;
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).filter(([key]) => key !== 'email' && key !== 'phone').map(([key, inner]) => [key, strip(inner)]));
    }
    return value;
  };
  return strip(data);
}

/** Builds the exact body and headers of one delivery POST (interface "Webhook trust"). */
export function buildDeliveryRequest(endpoint: StoredWebhookEndpoint, event: StoredEvent, nowMs: number): { body: string; headers: Record<string, string> } {
  const envelope = envelopeOf(event);
  const body = JSON.stringify({ ...envelope, data: redactPayload(envelope.data, endpoint.owner_abilities) });
  const dualSigning = endpoint.previous_secret && endpoint.previous_secret_expires_at_ms && endpoint.previous_secret_expires_at_ms > nowMs;
  return {
    body,
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': 'MembershipService-Webhooks/2026-05-01',
      [SIGNATURE_HEADER]: signatureHeader({
        secret: endpoint.secret,
        previousSecret: dualSigning ? endpoint.previous_secret : null,
        timestampSeconds: Math.floor(nowMs / 1000),
        rawBody: body,
      }),
      [EVENT_ID_HEADER]: event.id,
      [EVENT_NAME_HEADER]: event.type,
    },
  };
}

async function loadDelivery(runtime: Runtime, teamId: string, deliveryId: string): Promise<StoredDelivery | null> {
  const result = await runtime.store.document.send(new GetCommand({ TableName: runtime.store.tableName, Key: keys.delivery(teamId, deliveryId), ConsistentRead: true }));
  return (result.Item as StoredDelivery | undefined) ?? null;
}

/**
 * Takes the `delivering` lease for attempt `attempt` with one conditional update, so a duplicate or
 * stale message never causes a second concurrent attempt (DESIGN D7). Succeeds when the delivery is
 * pending with `attempt - 1` attempts made and due, or when a previous holder of this same attempt
 * crashed (its lease expired). Returns the delivery after the update, or null when not ours.
 */
async function takeLease(runtime: Runtime, message: DeliveryMessage): Promise<StoredDelivery | null> {
  const nowMs = runtime.clock.nowMs();
  try {
    const result = await runtime.store.document.send(
      new UpdateCommand({
        TableName: runtime.store.tableName,
        Key: keys.delivery(message.team_id, message.delivery_id),
        UpdateExpression: 'SET #status = :delivering, attempts = :attempt, lease_expires_at_ms = :lease, gsi1sk = :sweep',
        ConditionExpression:
          '(#status = :pending AND attempts = :previous AND due_at_ms <= :due_limit) OR (#status = :delivering AND attempts = :attempt AND lease_expires_at_ms < :now)',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':delivering': 'delivering',
          ':pending': 'pending',
          ':attempt': message.attempt,
          ':previous': message.attempt - 1,
          ':lease': nowMs + LEASE_MS,
          ':now': nowMs,
          // Timers may fire a moment early (the local clock, SQS granularity): allow one second.
          ':due_limit': nowMs + 1_000,
          // While in flight the row sits in the pending index at its lease expiry, so the sweeper re-queues a crashed attempt.
          ':sweep': dueSortKey(nowMs + LEASE_MS, message.delivery_id),
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return result.Attributes as StoredDelivery;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return null;
    throw error;
  }
}

/** Outcome of {@link processDeliveryMessage}, for logs and tests. */
export type ProcessOutcome = 'skipped' | 'succeeded' | 'retry_scheduled' | 'awaiting_dead_letter' | 'dead_lettered' | 'endpoint_disabled';

/**
 * Handles one queue message (the dispatcher's unit of work, DESIGN D7):
 * - `attempt`: lease → POST → record the attempt → succeeded, or pending with the next attempt
 *   scheduled per {@link RETRY_WAIT_SECONDS}, or (after attempt 8) pending with the 72-hour dead-letter
 *   timer. Updates the endpoint's `consecutive_failures` and disables it at 20 (interface "States").
 *   An endpoint that is disabled or deleted stops the delivery: it is dead-lettered at once (kind
 *   `endpoint_disabled`) so `replay-dead` can bring it back after re-enabling.
 * - `dead_letter`: marks a delivery still waiting after its 8th failure as `dead` and copies it to
 *   the dead-letter table, in one transaction.
 * Duplicate and stale messages return `skipped`. Throws only on store errors (the queue retries).
 */
export async function processDeliveryMessage(runtime: Runtime, message: DeliveryMessage): Promise<ProcessOutcome> {
  if (message.kind === 'dead_letter') return deadLetter(runtime, message);
  const delivery = await takeLease(runtime, message);
  if (!delivery) return 'skipped';
  const [endpoint, eventResult] = await Promise.all([
    loadWebhookEndpoint(runtime, message.team_id, delivery.endpoint_id),
    runtime.store.document.send(new GetCommand({ TableName: runtime.store.tableName, Key: keys.event(message.team_id, delivery.event_id) })),
  ]);
  const event = eventResult.Item as StoredEvent | undefined;
  const startedMs = runtime.clock.nowMs();
  if (!endpoint || !endpoint.is_active || !event) {
    const record: DeliveryAttemptRecord = { attempt: message.attempt, attempted_at: isoTime(startedMs), status: null, failure_kind: 'endpoint_disabled', duration_ms: 0, response_body: '' };
    await markDead(runtime, delivery, record, message.attempt - 1);
    return 'endpoint_disabled';
  }
  const request = buildDeliveryRequest(endpoint, event, startedMs);
  const result = await runtime.transport.send({ url: endpoint.url, headers: request.headers, body: request.body, allowedIps: endpoint.allowed_ips });
  const record: DeliveryAttemptRecord = {
    attempt: message.attempt,
    attempted_at: isoTime(startedMs),
    status: result.status,
    failure_kind: result.failure_kind,
    duration_ms: Math.round(result.duration_ms),
    response_body: result.response_body,
  };
  return recordAttempt(runtime, delivery, message, record, result.ok, endpoint.consecutive_failures ?? 0);
}

async function recordAttempt(runtime: Runtime, delivery: StoredDelivery, message: DeliveryMessage, record: DeliveryAttemptRecord, ok: boolean, consecutiveFailures: number): Promise<ProcessOutcome> {
  const nowMs = runtime.clock.nowMs();
  const log = [...(delivery.attempt_log ?? []), record].slice(-MAX_ATTEMPT_LOG);
  const Key = keys.delivery(message.team_id, message.delivery_id);
  const leaseIsOurs = { ConditionExpression: '#status = :delivering AND attempts = :attempt', names: { '#status': 'status' } };
  let outcome: ProcessOutcome;
  let update: { expression: string; values: Record<string, unknown>; remove?: string };
  let next: { message: DeliveryMessage; dueAtMs: number } | null = null;
  if (ok) {
    outcome = 'succeeded';
    update = { expression: '#status = :succeeded, next_attempt_at = :null, due_at_ms = :null, lease_expires_at_ms = :null', values: { ':succeeded': 'succeeded' }, remove: 'gsi1pk, gsi1sk' };
  } else if (message.attempt < MAX_ATTEMPTS) {
    outcome = 'retry_scheduled';
    const dueAtMs = nowMs + scaledWaitMs(runtime, RETRY_WAIT_SECONDS[message.attempt + 1]);
    next = { message: { kind: 'attempt', team_id: message.team_id, delivery_id: message.delivery_id, attempt: message.attempt + 1 }, dueAtMs };
    update = { expression: '#status = :pending, next_attempt_at = :next, due_at_ms = :due, lease_expires_at_ms = :null, gsi1pk = :index, gsi1sk = :sort', values: { ':pending': 'pending', ':next': isoTime(dueAtMs), ':due': dueAtMs, ':index': keys.pendingDeliveriesIndex, ':sort': dueSortKey(dueAtMs, message.delivery_id) } };
  } else {
    outcome = 'awaiting_dead_letter';
    const dueAtMs = nowMs + scaledWaitMs(runtime, DEAD_LETTER_WAIT_SECONDS);
    next = { message: { kind: 'dead_letter', team_id: message.team_id, delivery_id: message.delivery_id, attempt: MAX_ATTEMPTS }, dueAtMs };
    update = { expression: '#status = :pending, next_attempt_at = :null, due_at_ms = :due, lease_expires_at_ms = :null, gsi1pk = :index, gsi1sk = :sort', values: { ':pending': 'pending', ':due': dueAtMs, ':index': keys.pendingDeliveriesIndex, ':sort': dueSortKey(dueAtMs, message.delivery_id) } };
  }
  try {
    await runtime.store.document.send(
      new UpdateCommand({
        TableName: runtime.store.tableName,
        Key,
        UpdateExpression: `SET ${update.expression}, last_attempt_at = :attempted_at, attempt_log = :log${update.remove ? ` REMOVE ${update.remove}` : ''}`,
        ConditionExpression: leaseIsOurs.ConditionExpression,
        ExpressionAttributeNames: leaseIsOurs.names,
        ExpressionAttributeValues: { ...update.values, ':null': null, ':delivering': 'delivering', ':attempt': message.attempt, ':attempted_at': record.attempted_at, ':log': log },
      }),
    );
  } catch (error) {
    // Our lease expired and another dispatcher took this attempt over: it records the outcome.
    if (error instanceof ConditionalCheckFailedException) return 'skipped';
    throw error;
  }
  await recordEndpointOutcome(runtime, message.team_id, delivery.endpoint_id, ok, consecutiveFailures);
  if (next) await enqueueAt(runtime, next.message, next.dueAtMs);
  return outcome;
}

/**
 * Counts a success (resets `consecutive_failures`) or a failure for the endpoint; at 20 consecutive
 * failures, across any events, the endpoint is disabled (`is_active=false`, `disabled_at`; interface "States").
 */
async function recordEndpointOutcome(runtime: Runtime, teamId: string, endpointId: string, ok: boolean, consecutiveFailures: number): Promise<void> {
  const Key = keys.webhookEndpoint(teamId, endpointId);
  try {
    if (ok) {
      // The endpoint was read for this attempt: a counter already at 0 needs no write.
      if (consecutiveFailures === 0) return;
      await runtime.store.document.send(
        new UpdateCommand({ TableName: runtime.store.tableName, Key, UpdateExpression: 'SET consecutive_failures = :zero', ConditionExpression: 'attribute_exists(pk) AND consecutive_failures <> :zero', ExpressionAttributeValues: { ':zero': 0 } }),
      );
      return;
    }
    const now = isoTime(runtime.clock.nowMs());
    // One update: count the failure, and disable when this failure reaches the threshold.
    const result = await runtime.store.document.send(
      new UpdateCommand({ TableName: runtime.store.tableName, Key, UpdateExpression: 'ADD consecutive_failures :one', ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeValues: { ':one': 1 }, ReturnValues: 'UPDATED_NEW' }),
    );
    if (Number(result.Attributes?.consecutive_failures) >= AUTO_DISABLE_THRESHOLD) {
      await runtime.store.document.send(
        new UpdateCommand({
          TableName: runtime.store.tableName,
          Key,
          UpdateExpression: 'SET is_active = :false, disabled_at = :now, updated_at = :now',
          ConditionExpression: 'is_active = :true AND consecutive_failures >= :threshold',
          ExpressionAttributeValues: { ':false': false, ':true': true, ':now': now, ':threshold': AUTO_DISABLE_THRESHOLD },
        }),
      );
    }
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}

/** Moves a delivery to `dead` and copies it to the dead-letter table in one transaction. */
async function markDead(runtime: Runtime, delivery: StoredDelivery, record: DeliveryAttemptRecord | null, attempts: number): Promise<boolean> {
  const nowMs = runtime.clock.nowMs();
  const deadLetteredAt = isoTime(nowMs);
  const log = record ? [...(delivery.attempt_log ?? []), record].slice(-MAX_ATTEMPT_LOG) : delivery.attempt_log ?? [];
  try {
    await runtime.store.document.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: runtime.store.tableName,
              Key: keys.delivery(delivery.team_id, delivery.id),
              UpdateExpression: 'SET #status = :dead, dead_lettered_at = :at, attempts = :attempts, next_attempt_at = :null, due_at_ms = :null, lease_expires_at_ms = :null, attempt_log = :log REMOVE gsi1pk, gsi1sk',
              ConditionExpression: '#status = :expected_status AND attempts = :expected_attempts',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':dead': 'dead', ':at': deadLetteredAt, ':attempts': attempts, ':null': null, ':log': log, ':expected_status': delivery.status, ':expected_attempts': delivery.attempts },
            },
          },
          {
            Put: {
              TableName: runtime.store.deadLetterTableName,
              Item: {
                ...keys.deadLetter(delivery.team_id, deadLetteredAt, delivery.id),
                delivery_id: delivery.id,
                team_id: delivery.team_id,
                endpoint_id: delivery.endpoint_id,
                event_id: delivery.event_id,
                event_type: delivery.event_type,
                attempts,
                dead_lettered_at: deadLetteredAt,
                attempt_log: log,
                expires_at: Math.floor(nowMs / 1000) + DELIVERY_RETENTION_SECONDS,
              },
            },
          },
        ],
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof TransactionCanceledException) return false;
    throw error;
  }
}

async function deadLetter(runtime: Runtime, message: DeliveryMessage): Promise<ProcessOutcome> {
  const delivery = await loadDelivery(runtime, message.team_id, message.delivery_id);
  if (!delivery || delivery.status !== 'pending' || delivery.attempts !== MAX_ATTEMPTS || delivery.due_at_ms === null || delivery.due_at_ms > runtime.clock.nowMs() + 1_000) {
    return 'skipped';
  }
  return (await markDead(runtime, delivery, null, MAX_ATTEMPTS)) ? 'dead_lettered' : 'skipped';
}

/**
 * Re-queues one dead delivery: `dead` → `pending`, attempts 0, attempt 1 sent at once; its copy leaves
 * the dead-letter table (interface "States": dead → pending). Returns the delivery as the retry left
 * it (pending, attempts 0). Errors: NOT_FOUND, CONFLICT (not dead, or changed concurrently).
 */
export async function retryDelivery(runtime: Runtime, principal: Principal, deliveryId: string): Promise<WebhookDelivery> {
  const delivery = await loadDelivery(runtime, principal.teamId, deliveryId);
  if (!delivery) throw new ProblemError('NOT_FOUND', `No webhook delivery ${deliveryId}.`);
  if (delivery.status !== 'dead') throw new ProblemError('CONFLICT', `Only dead deliveries can be retried; this one is ${delivery.status}.`);
  const nowMs = runtime.clock.nowMs();
  if (!(await requeueDead(runtime, delivery, nowMs))) throw new ProblemError('CONFLICT', 'The delivery changed while it was being retried; read it again.');
  await runtime.deliveryQueue.send([attemptOne(delivery)], 0);
  return publicDelivery({ ...delivery, status: 'pending', attempts: 0, next_attempt_at: isoTime(nowMs), dead_lettered_at: null }, false);
}

const attemptOne = (delivery: Pick<StoredDelivery, 'id' | 'team_id'>): DeliveryMessage => ({ kind: 'attempt', team_id: delivery.team_id, delivery_id: delivery.id, attempt: 1 });

/**
 * The dead → pending transition in one transaction: the delivery row is reset (attempts 0, due now,
 * back in the pending index) on condition that it is still dead with this `dead_lettered_at`, and its
 * dead-letter copy is deleted. Returns false when the condition failed (already re-queued). The
 * caller queues attempt 1.
 */
async function requeueDead(runtime: Runtime, delivery: Pick<StoredDelivery, 'id' | 'team_id' | 'dead_lettered_at'>, nowMs: number): Promise<boolean> {
  try {
    await runtime.store.document.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: runtime.store.tableName,
              Key: keys.delivery(delivery.team_id, delivery.id),
              // A re-queued delivery lives another retention period from now (TTL housekeeping).
              UpdateExpression: 'SET #status = :pending, attempts = :zero, next_attempt_at = :next, due_at_ms = :now, dead_lettered_at = :null, gsi1pk = :index, gsi1sk = :sort, expires_at = :expires',
              ConditionExpression: '#status = :dead AND dead_lettered_at = :dead_lettered_at',
              ExpressionAttributeNames: { '#status': 'status' },
              ExpressionAttributeValues: { ':pending': 'pending', ':zero': 0, ':next': isoTime(nowMs), ':now': nowMs, ':null': null, ':index': keys.pendingDeliveriesIndex, ':sort': dueSortKey(nowMs, delivery.id), ':dead': 'dead', ':dead_lettered_at': delivery.dead_lettered_at, ':expires': Math.floor(nowMs / 1000) + DELIVERY_RETENTION_SECONDS },
            },
          },
          { Delete: { TableName: runtime.store.deadLetterTableName, Key: keys.deadLetter(delivery.team_id, delivery.dead_lettered_at!, delivery.id) } },
        ],
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof TransactionCanceledException) return false;
    throw error;
  }
}

/** Concurrent dead → pending transactions during replay-dead. */
const REPLAY_CONCURRENCY = 50;

/**
 * Re-queues every dead delivery of the team whose `dead_lettered_at` lies within the last
 * `sinceHours` hours (interface "States": replay-dead). Reads the dead-letter table by key range, 500
 * at a time; runs the dead → pending transactions {@link REPLAY_CONCURRENCY} at a time (a pool, so one
 * slow transaction does not hold the others), and queues attempt 1 of the re-queued ones in batches of
 * 10 messages. Returns `{ replayed }`, the count re-queued (a delivery re-queued concurrently by
 * someone else is not counted).
 */
export async function replayDeadDeliveries(runtime: Runtime, principal: Principal, sinceHours: number): Promise<{ replayed: number }> {
  const nowMs = runtime.clock.nowMs();
  const since = isoTime(nowMs - sinceHours * 3_600_000);
  const partition = keys.teamPartition(principal.teamId);
  let replayed = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await runtime.store.document.send(
      new QueryCommand({
        TableName: runtime.store.deadLetterTableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': partition, ':from': `${sortKeyPrefix.deadLetter}${since}`, ':to': `${sortKeyPrefix.deadLetter}~` },
        ExclusiveStartKey: startKey,
        Limit: 500,
      }),
    );
    const pending = (page.Items ?? []).map((item) => ({ id: item.delivery_id as string, team_id: principal.teamId, dead_lettered_at: item.dead_lettered_at as string }));
    const messages: DeliveryMessage[] = [];
    const flush = async (all: boolean) => {
      while (messages.length >= 10 || (all && messages.length > 0)) await runtime.deliveryQueue.send(messages.splice(0, 10), 0);
    };
    await pMap(
      pending,
      async (delivery) => {
        if (!(await requeueDead(runtime, delivery, nowMs))) return;
        replayed++;
        messages.push(attemptOne(delivery));
        await flush(false);
      },
      { concurrency: REPLAY_CONCURRENCY },
    );
    await flush(true);
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return { replayed };
}

/** Reads one delivery with its attempt records. NOT_FOUND when absent or foreign. */
export async function getDelivery(runtime: Runtime, principal: Principal, deliveryId: string): Promise<WebhookDelivery> {
  const delivery = await loadDelivery(runtime, principal.teamId, deliveryId);
  if (!delivery) throw new ProblemError('NOT_FOUND', `No webhook delivery ${deliveryId}.`);
  return publicDelivery(delivery, true);
}

/**
 * Lists the team's deliveries, newest first, optionally filtered by endpoint, status and event type,
 * paged (DESIGN D12). Filters are applied by DynamoDB, so a page may be short while `next_cursor` is set.
 */
export async function listDeliveries(
  runtime: Runtime,
  principal: Principal,
  query: { limit: number; cursor?: string; endpoint_id?: string; status?: DeliveryStatus; event_type?: string },
): Promise<{ data: WebhookDelivery[]; next_cursor: string | null }> {
  const partition = keys.teamPartition(principal.teamId);
  const filters: string[] = [];
  const values: Record<string, unknown> = { ':pk': partition, ':prefix': sortKeyPrefix.delivery };
  const names: Record<string, string> = {};
  if (query.endpoint_id) {
    filters.push('endpoint_id = :endpoint');
    values[':endpoint'] = query.endpoint_id;
  }
  if (query.status) {
    filters.push('#status = :status');
    names['#status'] = 'status';
    values[':status'] = query.status;
  }
  if (query.event_type) {
    filters.push('event_type = :event_type');
    values[':event_type'] = query.event_type;
  }
  const result = await runtime.store.document.send(
    new QueryCommand({
      TableName: runtime.store.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: filters.length ? filters.join(' AND ') : undefined,
      ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
      Limit: query.limit,
      ExclusiveStartKey: decodeCursor(query.cursor, partition, { sortKeyPrefix: sortKeyPrefix.delivery }),
    }),
  );
  return { data: (result.Items as StoredDelivery[]).map((item) => publicDelivery(item, false)), next_cursor: encodeCursor(result.LastEvaluatedKey) };
}

/**
 * "Send test event" (DESIGN D6): writes a `webhook_endpoint.test` event and its one delivery to this
 * endpoint in one transaction (whatever the endpoint subscribes to), then queues attempt 1.
 * Errors: NOT_FOUND, CONFLICT (endpoint disabled).
 */
export async function sendTestEvent(runtime: Runtime, principal: Principal, endpointId: string): Promise<WebhookDelivery> {
  const endpoint = await loadWebhookEndpoint(runtime, principal.teamId, endpointId);
  if (!endpoint) throw new ProblemError('NOT_FOUND', `No webhook endpoint ${endpointId}.`);
  if (!endpoint.is_active) throw new ProblemError('CONFLICT', 'The endpoint is disabled; re-enable it with is_active: true first.');
  const { event, put } = outboxEvent(runtime.store, runtime.clock, {
    teamId: principal.teamId,
    type: 'webhook_endpoint.test',
    projectId: null,
    data: { webhook_endpoint_id: endpointId, message: 'This is a test event sent from the membership service.' },
    deliveredDirectly: { deliveryCount: 1 },
  });
  const delivery = newDeliveryItem(runtime, principal.teamId, endpointId, event);
  await runtime.store.document.send(
    new TransactWriteCommand({ TransactItems: [put, { Put: { TableName: runtime.store.tableName, Item: delivery, ConditionExpression: 'attribute_not_exists(pk)' } }] }),
  );
  await runtime.deliveryQueue.send([{ kind: 'attempt', team_id: principal.teamId, delivery_id: delivery.id, attempt: 1 }], 0);
  return publicDelivery(delivery, false);
}

/**
 * The sweeper (runs every 5 minutes on AWS, every few seconds locally): re-queues every delivery whose
 * due time (next attempt, dead-letter timer, or expired lease) passed more than `graceMs` ago — its
 * timer or message was lost — and fans out outbox events older than `graceMs` that were never fanned
 * out. Nothing waits forever. Returns the counts.
 */
export async function sweep(runtime: Runtime, graceMs = 60_000): Promise<{ requeued: number; fannedOut: number }> {
  const nowMs = runtime.clock.nowMs();
  let requeued = 0;
  let fannedOut = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await runtime.store.document.send(
      new QueryCommand({
        TableName: runtime.store.tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :index AND gsi1sk < :limit',
        ExpressionAttributeValues: { ':index': keys.pendingDeliveriesIndex, ':limit': dueSortKey(nowMs - graceMs, '') },
        ExclusiveStartKey: startKey,
        Limit: 500,
      }),
    );
    const messages: DeliveryMessage[] = [];
    for (const item of (page.Items ?? []) as StoredDelivery[]) {
      if (item.status === 'pending' && item.attempts >= MAX_ATTEMPTS) messages.push({ kind: 'dead_letter', team_id: item.team_id, delivery_id: item.id, attempt: MAX_ATTEMPTS });
      else if (item.status === 'pending') messages.push({ kind: 'attempt', team_id: item.team_id, delivery_id: item.id, attempt: item.attempts + 1 });
      else if (item.status === 'delivering') messages.push({ kind: 'attempt', team_id: item.team_id, delivery_id: item.id, attempt: item.attempts });
    }
    for (let index = 0; index < messages.length; index += 10) await runtime.deliveryQueue.send(messages.slice(index, index + 10), 0);
    requeued += messages.length;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  fannedOut = await relayOutbox(runtime, nowMs - graceMs);
  return { requeued, fannedOut };
}

/** Events fanned out at once by {@link relayOutbox} (each fan-out is its own transaction). */
const RELAY_CONCURRENCY = 8;

/**
 * Fans out every outbox event created before `beforeMs` (epoch ms) that has not been fanned out.
 * The local runtime calls it right after each commit (`beforeMs` = now); the sweeper with a grace period.
 */
export async function relayOutbox(runtime: Runtime, beforeMs: number): Promise<number> {
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await runtime.store.document.send(
      new QueryCommand({
        TableName: runtime.store.tableName,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :outbox',
        ExpressionAttributeValues: { ':outbox': keys.outboxIndex },
        ExclusiveStartKey: startKey,
        Limit: 100,
      }),
    );
    const due = ((page.Items ?? []) as StoredEvent[]).filter((item) => Date.parse(item.created_at) <= beforeMs);
    await pMap(due, (item) => fanOutEvent(runtime, item), { concurrency: RELAY_CONCURRENCY });
    count += due.length;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return count;
}
