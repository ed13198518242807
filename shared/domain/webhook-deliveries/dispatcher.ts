import { isoTime } from '../../clock.js';
import type { DeliveryMessage, DeliveryQueueMessage, PreparedAttempt, Runtime } from '../../runtime.js';
import { CAP_FULL_DELAY_SECONDS } from '../webhook-endpoints/policy.js';
import { acquireDeliverySlot, recordFailedAttempt, slotRefusal } from '../webhook-endpoints/delivery-slots.js';
import type { StoredWebhookEndpoint } from '../webhook-endpoints/record.js';
import { cachedWebhookEndpoint, rememberWebhookEndpoint, signingSecretsOf } from '../webhook-endpoints/repository.js';
import { deliveryAttempts } from '../../store/webhook-deliveries/attempts.js';
import { endpointSlots } from '../../store/webhook-endpoints/slots.js';
import { processReplayBatch, type ReplayBatchOutcome } from '../webhook-replays/worker.js';
import { markDead, processDeadLetterMessage } from './dead-letter.js';
import { signedDeliveryHeaders } from './fan-out.js';
import { MAX_ATTEMPT_LOG, MAX_QUEUE_DELAY_SECONDS, leaseTerms } from './policy.js';
import type { DeliveryAttempt } from './schema.js';
import type { StoredDeliveryAttempt } from './stored.js';
import { afterAttempt, appendAttempt, stoppedAttempt, type AttemptTransition } from './state-machine.js';

/**
 * The dispatcher (DESIGN D7): handles one delivery-queue message — one attempt, or the dead-letter
 * timer — and hands the next timer to the queue or the scheduler.
 */

/** The HTTP status with which a receiver retires its endpoint (DESIGN D29: disabled at once). */
const GONE = 410;

/** Outcome of {@link processDeliveryMessage}, for logs and tests. */
export type ProcessOutcome =
  'skipped' | 'deferred' | AttemptTransition['outcome'] | 'dead_lettered' | 'endpoint_disabled' | ReplayBatchOutcome;

/**
 * Hands a message to the queue when it is due within {@link MAX_QUEUE_DELAY_SECONDS} (15 minutes, SQS
 * `DelaySeconds`), otherwise to the scheduler (an EventBridge Scheduler one-time schedule) (DESIGN D7).
 * `dueAtMs` is epoch MILLISECONDS; a past time is sent at once.
 */
async function enqueueAt(
  runtime: Pick<Runtime, 'clock' | 'deliveryQueue' | 'retryScheduler'>,
  message: DeliveryMessage,
  dueAtMs: number,
): Promise<void> {
  const delaySeconds = Math.max(0, (dueAtMs - runtime.clock.nowMs()) / 1000);
  if (delaySeconds <= MAX_QUEUE_DELAY_SECONDS) await runtime.deliveryQueue.send([message], delaySeconds);
  else await runtime.retryScheduler.schedule(message, dueAtMs);
}

/**
 * Handles one delivery-queue message (D7, D24, D25, D29): `attempt` (lease + slot → POST → outcome; `deferred` when
 * the cap is full), `dead_letter`, `replay_batch`; duplicates and stale messages → `skipped`. Throws only on store
 * errors and when the endpoint's secrets do not open (the queue retries). Job messages go to `processJobMessage`.
 */
export async function processDeliveryMessage(runtime: Runtime, message: DeliveryQueueMessage): Promise<ProcessOutcome> {
  if (message.kind === 'replay_batch') return processReplayBatch(runtime, message);
  if (message.kind === 'dead_letter') return processDeadLetterMessage(runtime, message);
  // Attempt 1 from fan-out carries what it sends: lease and slot in one transaction, so a success costs 2 requests (3
  // the long way).
  if (message.prepared && message.endpoint_id) {
    const taken = await leaseWithSlot(runtime, message, message.endpoint_id, message.prepared);
    if (taken === 'deferred') return 'deferred';
    if (taken) return attempt(runtime, message, taken, 'append');
  }
  const lease = leaseTerms(runtime.clock.nowMs());
  const delivery = await deliveryAttempts.lease(runtime.store, message, lease);
  if (!delivery) return 'skipped';
  const slot = await acquireDeliverySlot(
    runtime.store,
    message.team_id,
    delivery.endpoint_id,
    delivery.id,
    lease.leaseUntilMs,
    lease.nowMs,
  );
  if (slot.kind === 'full') return defer(runtime, message, { leased: true });
  const plannedAtMs = delivery.due_at_ms ?? null;
  if (slot.kind === 'stopped') {
    // Disabled or deleted endpoint: dead-lettered at once, so `replay-dead` can bring it back after re-enabling.
    await markDead(
      runtime,
      delivery,
      stoppedAttempt(message.attempt, runtime.clock.nowMs(), plannedAtMs === null ? null : isoTime(plannedAtMs)),
      message.attempt - 1,
    );
    return 'endpoint_disabled';
  }
  const sending: Sending = {
    endpoint: slot.endpoint,
    event_id: delivery.event_id,
    event_type: delivery.event_type,
    body: delivery.body,
    due_at_ms: plannedAtMs,
  };
  return attempt(runtime, message, sending, delivery.attempt_log ?? []);
}

/** What one attempt sends, and to which endpoint (as stored, with its sealed secrets). */
type Sending = Omit<PreparedAttempt, 'due_at_ms'> & { endpoint: StoredWebhookEndpoint; due_at_ms: number | null };

/**
 * Takes lease and slot in one transaction from the cached endpoint: what to send, `deferred` (cap full, no lease), or
 * null (take the long way). A stale copy is replaced by the endpoint as found and retried once.
 */
async function leaseWithSlot(
  runtime: Runtime,
  message: DeliveryMessage,
  endpointId: string,
  prepared: PreparedAttempt,
): Promise<Sending | 'deferred' | null> {
  let endpoint = await cachedWebhookEndpoint(runtime.store, message.team_id, endpointId);
  for (let round = 0; endpoint?.is_active && round < 2; round++) {
    const lease = leaseTerms(runtime.clock.nowMs());
    const nowMs = lease.nowMs;
    const taken = await deliveryAttempts.leaseWithSlot(
      runtime.store,
      message,
      endpointSlots.item(endpoint, message.delivery_id, lease.leaseUntilMs),
      lease,
      MAX_ATTEMPT_LOG,
    );
    if (taken.kind === 'leased') return { ...prepared, endpoint };
    if (taken.kind !== 'slot_refused') return null;
    const refusal = slotRefusal(taken.endpoint, endpoint, nowMs);
    if (refusal === 'full') return defer(runtime, message, { leased: false });
    if (refusal === 'stopped' || !taken.endpoint) return null;
    // The endpoint as found (parsed once, by the lease transaction) is the current one: keep it (a stale copy is tried
    // again with it at once).
    endpoint = taken.endpoint;
    rememberWebhookEndpoint(runtime.store, endpoint);
    if (refusal === 'reclaim') return null;
  }
  return null;
}

/**
 * Puts the attempt off by CAP_FULL_DELAY_SECONDS without counting it (D24; `deliveryAttempts.defer`, with
 * the lease given back when `leased`) and queues the message again then. Returns `deferred`.
 */
async function defer(runtime: Runtime, message: DeliveryMessage, options: { leased: boolean }): Promise<'deferred'> {
  const dueAtMs = runtime.clock.nowMs() + CAP_FULL_DELAY_SECONDS * 1000;
  if (await deliveryAttempts.defer(runtime.store, message, dueAtMs, options)) {
    const again = message.prepared ? { ...message, prepared: { ...message.prepared, due_at_ms: dueAtMs } } : message;
    await runtime.deliveryQueue.send([again], CAP_FULL_DELAY_SECONDS);
  }
  return 'deferred';
}

/**
 * Signs and POSTs `sending` under the lease of `message`'s attempt, then records it
 * ({@link recordAttempt}); `log` is the attempt log read with the lease, or `append` when it was not read.
 */
async function attempt(
  runtime: Runtime,
  message: DeliveryMessage,
  sending: Sending,
  log: readonly StoredDeliveryAttempt[] | 'append',
): Promise<ProcessOutcome> {
  const { endpoint, body } = sending;
  // Opened once per process and endpoint revision (D16): no key request for the deliveries after the first.
  // When they do not open (the key refused or unreachable) nothing is sent and the slot is given back at
  // once; the lease runs out and the sweeper re-queues the attempt.
  const secrets = await signingSecretsOf(runtime, endpoint).catch(async (error: unknown) => {
    await endpointSlots.release(runtime.store, message.team_id, endpoint.id, message.delivery_id);
    throw error;
  });
  const startedMs = runtime.clock.nowMs();
  const headers = signedDeliveryHeaders(
    { ...secrets, previous_secret_expires_at_ms: endpoint.previous_secret_expires_at_ms },
    { id: sending.event_id, type: sending.event_type },
    body,
    startedMs,
  );
  const result = await runtime.transport.send({ url: endpoint.url, headers, body, allowedIps: endpoint.allowed_ips });
  runtime.metrics?.attemptFinished(result.ok, result.duration_ms);
  const record: DeliveryAttempt = {
    attempt: message.attempt,
    planned_at: sending.due_at_ms === null ? null : isoTime(sending.due_at_ms),
    attempted_at: isoTime(startedMs),
    status: result.status,
    failure_kind: result.failure_kind,
    duration_ms: Math.round(result.duration_ms),
    connect_ms: result.connect_ms ?? null,
    remote_address: result.remote_address ?? null,
    tls_version: result.tls_version ?? null,
    response_body: result.response_body,
    // Only when the receiver asked (a 429 or 503 with Retry-After): the record stays as before otherwise.
    ...(result.retry_after_seconds != null ? { retry_after_seconds: result.retry_after_seconds } : {}),
  };
  return recordAttempt(runtime, message, endpoint.id, log, record, result.ok);
}

/**
 * Records a finished attempt (state machine {@link afterAttempt}) and gives the endpoint slot back: a
 * success in one transaction with the endpoint's reset of `consecutive_failures` (DESIGN D14: one
 * request); a failure, then its count on the endpoint. Then queues the next timer. `log` is the attempt
 * log as read with the lease, or `append` (the record is appended to the stored log). Returns `skipped`
 * when our lease was lost meanwhile (the dispatcher that took the attempt over records it).
 */
async function recordAttempt(
  runtime: Runtime,
  message: DeliveryMessage,
  endpointId: string,
  log: readonly StoredDeliveryAttempt[] | 'append',
  record: DeliveryAttempt,
  ok: boolean,
): Promise<ProcessOutcome> {
  const transition = afterAttempt(
    message,
    ok,
    runtime.clock.nowMs(),
    runtime.timeScale,
    record.retry_after_seconds ?? null,
  );
  const newLog = log === 'append' ? log : appendAttempt(log, record);
  const alongside = ok
    ? endpointSlots.successfulAttemptItem(message.team_id, endpointId, message.delivery_id)
    : undefined;
  if (!(await deliveryAttempts.recordOutcome(runtime.store, message, record, newLog, transition, alongside))) {
    await endpointSlots.release(runtime.store, message.team_id, endpointId, message.delivery_id);
    return 'skipped';
  }
  // 410 Gone: the receiver says the endpoint is gone for good (Standard Webhooks): disabled at once.
  if (!ok)
    await recordFailedAttempt(runtime, message.team_id, endpointId, message.delivery_id, {
      gone: record.status === GONE,
    });
  if (transition.next) await enqueueAt(runtime, transition.next, transition.dueAtMs);
  return transition.outcome;
}
