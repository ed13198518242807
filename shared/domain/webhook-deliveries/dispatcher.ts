import { isoTime } from '../../clock.js';
import type { DeliveryMessage, Runtime } from '../../runtime.js';
import { loadWebhookEndpoint, recordEndpointOutcome } from '../webhook-endpoints/repository.js';
import { markDead, processDeadLetterMessage } from './dead-letter.js';
import { buildDeliveryRequest } from './fan-out.js';
import { MAX_QUEUE_DELAY_SECONDS } from './policy.js';
import { loadEvent, takeLease, writeAttemptOutcome, type StoredDelivery } from './repository.js';
import type { DeliveryAttempt } from './schema.js';
import { afterAttempt, appendAttempt, stoppedAttempt, type AttemptTransition } from './state-machine.js';

/**
 * The dispatcher (DESIGN D7): handles one delivery-queue message — one attempt, or the dead-letter
 * timer — and hands the next timer to the queue or the scheduler.
 */

/** Outcome of {@link processDeliveryMessage}, for logs and tests. */
export type ProcessOutcome = 'skipped' | AttemptTransition['outcome'] | 'dead_lettered' | 'endpoint_disabled';

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
 * Handles one queue message (the dispatcher's unit of work, DESIGN D7):
 * - `attempt`: lease → POST → record the attempt → succeeded, or pending with the next attempt
 *   scheduled per RETRY_WAIT_SECONDS, or (after attempt 8) pending with the 72-hour dead-letter
 *   timer. Updates the endpoint's `consecutive_failures` and disables it at 20 (interface "States").
 *   An endpoint that is disabled or deleted stops the delivery: it is dead-lettered at once (kind
 *   `endpoint_disabled`) so `replay-dead` can bring it back after re-enabling.
 * - `dead_letter`: marks a delivery still waiting after its 8th failure as `dead` and copies it to
 *   the dead-letter table, in one transaction.
 * Duplicate and stale messages return `skipped`. Throws only on store errors (the queue retries).
 */
export async function processDeliveryMessage(runtime: Runtime, message: DeliveryMessage): Promise<ProcessOutcome> {
  if (message.kind === 'dead_letter') return processDeadLetterMessage(runtime, message);
  const delivery = await takeLease(runtime.store, message, runtime.clock.nowMs());
  if (!delivery) return 'skipped';
  const [endpoint, event] = await Promise.all([
    loadWebhookEndpoint(runtime, message.team_id, delivery.endpoint_id),
    loadEvent(runtime.store, message.team_id, delivery.event_id),
  ]);
  const startedMs = runtime.clock.nowMs();
  if (!endpoint || !endpoint.is_active || !event) {
    await markDead(runtime, delivery, stoppedAttempt(message.attempt, startedMs), message.attempt - 1);
    return 'endpoint_disabled';
  }
  const request = buildDeliveryRequest(endpoint, event, startedMs);
  const result = await runtime.transport.send({ url: endpoint.url, headers: request.headers, body: request.body, allowedIps: endpoint.allowed_ips });
  const record: DeliveryAttempt = {
    attempt: message.attempt,
    attempted_at: isoTime(startedMs),
    status: result.status,
    failure_kind: result.failure_kind,
    duration_ms: Math.round(result.duration_ms),
    response_body: result.response_body,
  };
  return recordAttempt(runtime, delivery, message, record, result.ok, endpoint.consecutive_failures ?? 0);
}

/**
 * Records a finished attempt (state machine {@link afterAttempt}), counts it on the endpoint, then
 * queues the next timer. Returns `skipped` when our lease was lost meanwhile (the dispatcher that took
 * the attempt over records it).
 */
async function recordAttempt(
  runtime: Runtime,
  delivery: StoredDelivery,
  message: DeliveryMessage,
  record: DeliveryAttempt,
  ok: boolean,
  consecutiveFailures: number,
): Promise<ProcessOutcome> {
  const transition = afterAttempt(message, ok, runtime.clock.nowMs(), runtime.timeScale);
  const log = appendAttempt(delivery.attempt_log, record);
  if (!(await writeAttemptOutcome(runtime.store, message, record, log, transition))) return 'skipped';
  await recordEndpointOutcome(runtime, message.team_id, delivery.endpoint_id, ok, consecutiveFailures);
  if (transition.next) await enqueueAt(runtime, transition.next, transition.dueAtMs);
  return transition.outcome;
}
