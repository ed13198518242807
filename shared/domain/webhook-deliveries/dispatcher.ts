import { isoTime } from '../../clock.js';
import type { DeliveryMessage, PipelineMessage, Runtime } from '../../runtime.js';
import { CAP_FULL_DELAY_SECONDS } from '../webhook-endpoints/policy.js';
import { acquireDeliverySlot, recordFailedAttempt, releaseDeliverySlot, successfulAttemptUpdate, type StoredWebhookEndpoint } from '../webhook-endpoints/repository.js';
import { processReplayBatch, type ReplayBatchOutcome } from '../webhook-replays/worker.js';
import { markDead, processDeadLetterMessage } from './dead-letter.js';
import { deliveryBody, signedDeliveryHeaders } from './fan-out.js';
import { LEASE_MS, MAX_QUEUE_DELAY_SECONDS } from './policy.js';
import { loadEvent, takeLease, writeAttemptOutcome, writeDeferral, type StoredDelivery } from './repository.js';
import type { DeliveryAttempt } from './schema.js';
import { afterAttempt, appendAttempt, stoppedAttempt, type AttemptTransition } from './state-machine.js';

/**
 * The dispatcher (DESIGN D7): handles one delivery-queue message — one attempt, or the dead-letter
 * timer — and hands the next timer to the queue or the scheduler.
 */

/** Outcome of {@link processDeliveryMessage}, for logs and tests. */
export type ProcessOutcome = 'skipped' | 'deferred' | AttemptTransition['outcome'] | 'dead_lettered' | 'endpoint_disabled' | ReplayBatchOutcome;

/**
 * Hands a message to the queue when it is due within {@link MAX_QUEUE_DELAY_SECONDS} (15 minutes, SQS
 * `DelaySeconds`), otherwise to the scheduler (an EventBridge Scheduler one-time schedule) (DESIGN D7).
 * `dueAtMs` is epoch MILLISECONDS; a past time is sent at once.
 */
export async function enqueueAt(runtime: Pick<Runtime, 'clock' | 'deliveryQueue' | 'retryScheduler'>, message: DeliveryMessage, dueAtMs: number): Promise<void> {
  const delaySeconds = Math.max(0, (dueAtMs - runtime.clock.nowMs()) / 1000);
  if (delaySeconds <= MAX_QUEUE_DELAY_SECONDS) await runtime.deliveryQueue.send([message], delaySeconds);
  else await runtime.retryScheduler.schedule(message, dueAtMs);
}

/**
 * Handles one queue message (the dispatcher's unit of work, DESIGN D7, D24, D25):
 * - `attempt`: lease (which also reads the delivery and the body stored at fan-out) → a slot of the
 *   endpoint's concurrency cap (which also reads the endpoint) → POST → record the attempt → succeeded, or pending with the next attempt scheduled per
 *   RETRY_WAIT_SECONDS, or (after attempt 8) pending with the 72-hour dead-letter timer. Updates the
 *   endpoint's `consecutive_failures` and disables it at 20 (interface "States"). When the cap is full
 *   the lease is given back, the attempt is not counted and the message comes back after
 *   CAP_FULL_DELAY_SECONDS (`deferred`). An endpoint that is disabled or deleted stops the delivery: it
 *   is dead-lettered at once (kind `endpoint_disabled`) so `replay-dead` can bring it back after re-enabling.
 * - `dead_letter`: marks a delivery still waiting after its 8th failure as `dead` and copies it to
 *   the dead-letter table, in one transaction.
 * - `replay_batch`: runs the next batch of a replay job.
 * Duplicate and stale messages return `skipped`. Each attempt made and each delivery made dead is
 * reported to `runtime.metrics` when the runtime has them (DESIGN D23). Throws only on store errors (the
 * queue retries).
 */
export async function processDeliveryMessage(runtime: Runtime, message: PipelineMessage): Promise<ProcessOutcome> {
  if (message.kind === 'replay_batch') return processReplayBatch(runtime, message);
  if (message.kind === 'dead_letter') return processDeadLetterMessage(runtime, message);
  const leaseMs = runtime.clock.nowMs();
  const delivery = await takeLease(runtime.store, message, leaseMs);
  if (!delivery) return 'skipped';
  const slot = await acquireDeliverySlot(runtime.store, message.team_id, delivery.endpoint_id, delivery.id, leaseMs + LEASE_MS, leaseMs);
  if (slot.kind === 'full') {
    const dueAtMs = runtime.clock.nowMs() + CAP_FULL_DELAY_SECONDS * 1000;
    if (await writeDeferral(runtime.store, { ...message, kind: 'attempt' }, dueAtMs)) await runtime.deliveryQueue.send([message], CAP_FULL_DELAY_SECONDS);
    return 'deferred';
  }
  const startedMs = runtime.clock.nowMs();
  const plannedAt = delivery.due_at_ms === null || delivery.due_at_ms === undefined ? null : isoTime(delivery.due_at_ms);
  // The body was stored at fan-out; a delivery stored before that reads its event (gone: stopped).
  const body = slot.kind === 'acquired' ? (delivery.body ?? (await bodyFromEvent(runtime, delivery, slot.endpoint))) : null;
  if (slot.kind === 'stopped' || body === null) {
    if (slot.kind === 'acquired') await releaseDeliverySlot(runtime.store, message.team_id, delivery.endpoint_id, delivery.id);
    await markDead(runtime, delivery, stoppedAttempt(message.attempt, startedMs, plannedAt), message.attempt - 1);
    return 'endpoint_disabled';
  }
  const endpoint = slot.endpoint;
  const headers = signedDeliveryHeaders(endpoint, { id: delivery.event_id, type: delivery.event_type }, body, startedMs);
  const result = await runtime.transport.send({ url: endpoint.url, headers, body, allowedIps: endpoint.allowed_ips });
  runtime.metrics?.attemptFinished(result.ok, result.duration_ms);
  const record: DeliveryAttempt = {
    attempt: message.attempt,
    planned_at: plannedAt,
    attempted_at: isoTime(startedMs),
    status: result.status,
    failure_kind: result.failure_kind,
    duration_ms: Math.round(result.duration_ms),
    connect_ms: result.connect_ms ?? null,
    remote_address: result.remote_address ?? null,
    tls_version: result.tls_version ?? null,
    response_body: result.response_body,
  };
  return recordAttempt(runtime, delivery, message, record, result.ok);
}

/** The POST body of a delivery stored without one (before bodies were stored): built from its event, or null when the event is gone. */
async function bodyFromEvent(runtime: Runtime, delivery: StoredDelivery, endpoint: StoredWebhookEndpoint): Promise<string | null> {
  const event = await loadEvent(runtime.store, delivery.team_id, delivery.event_id);
  return event ? deliveryBody(endpoint.owner_abilities, event) : null;
}

/**
 * Records a finished attempt (state machine {@link afterAttempt}) and gives the endpoint slot back: a
 * success in one transaction with the endpoint's reset of `consecutive_failures` (DESIGN D14: one
 * request); a failure, then its count on the endpoint. Then queues the next timer. Returns `skipped`
 * when our lease was lost meanwhile (the dispatcher that took the attempt over records it).
 */
async function recordAttempt(runtime: Runtime, delivery: StoredDelivery, message: DeliveryMessage, record: DeliveryAttempt, ok: boolean): Promise<ProcessOutcome> {
  const transition = afterAttempt(message, ok, runtime.clock.nowMs(), runtime.timeScale);
  const log = appendAttempt(delivery.attempt_log, record);
  const alongside = ok ? successfulAttemptUpdate(message.team_id, delivery.endpoint_id, delivery.id) : undefined;
  if (!(await writeAttemptOutcome(runtime.store, message, record, log, transition, alongside))) {
    await releaseDeliverySlot(runtime.store, message.team_id, delivery.endpoint_id, delivery.id);
    return 'skipped';
  }
  if (!ok) await recordFailedAttempt(runtime, message.team_id, delivery.endpoint_id, delivery.id);
  if (transition.next) await enqueueAt(runtime, transition.next, transition.dueAtMs);
  return transition.outcome;
}
