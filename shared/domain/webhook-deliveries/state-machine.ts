import { PREPARED_BODY_MAX_BYTES, type DeliveryMessage } from '../../runtime.js';
import { isoTime } from '../../clock.js';
import {
  DEAD_LETTER_WAIT_SECONDS,
  MAX_ATTEMPTS,
  MAX_ATTEMPT_LOG,
  MAX_RETRY_WAIT_SECONDS,
  TIMER_EARLY_TOLERANCE_MS,
  scaledWaitMs,
  waitBeforeAttemptSeconds,
} from './policy.js';
import type { DeliveryAttempt, DeliveryStatus } from './schema.js';
import type { StoredDeliveryAttempt } from './stored.js';

/**
 * Pure webhook delivery state machine (interface "States", D7): pending → delivering → succeeded; failure N < 8 →
 * pending after RETRY_WAIT_SECONDS; N = 8 → pending with a 72 h dead-letter timer → dead; endpoint disabled → dead; cap
 * full → pending, not counted (D24); dead/skipped → pending by retry or replay (D6, D25). No I/O.
 */

/** The part of a stored delivery the state machine reads. */
export interface DeliveryState {
  id: string;
  team_id: string;
  status: DeliveryStatus;
  /** Attempts made (0–8). */
  attempts: number;
  /**
   * Epoch MILLISECONDS of the next attempt (pending) or of dead-lettering (pending after attempt 8); null otherwise.
   */
  due_at_ms: number | null;
}

/**
 * What recording an attempt leads to: `succeeded`; `retry_scheduled` (pending, the next attempt due at
 * `dueAtMs`); or `awaiting_dead_letter` (pending after the last attempt, the dead-letter timer due at
 * `dueAtMs`, no `next_attempt_at`). `next` is the message to queue for `dueAtMs`.
 */
export type AttemptTransition =
  | { outcome: 'succeeded'; status: 'succeeded'; next: null }
  | { outcome: 'retry_scheduled'; status: 'pending'; dueAtMs: number; nextAttemptAtMs: number; next: DeliveryMessage }
  | {
      outcome: 'awaiting_dead_letter';
      status: 'pending';
      dueAtMs: number;
      nextAttemptAtMs: null;
      next: DeliveryMessage;
    };

/** The message "attempt `attempt` of this delivery" (1–8), naming the delivery's endpoint when known. */
export function attemptMessage(
  delivery: Pick<DeliveryState, 'id' | 'team_id'> & { endpoint_id?: string },
  attempt: number,
): DeliveryMessage {
  const message: DeliveryMessage = { kind: 'attempt', team_id: delivery.team_id, delivery_id: delivery.id, attempt };
  if (delivery.endpoint_id) message.endpoint_id = delivery.endpoint_id;
  return message;
}

/**
 * Attempt 1 of a delivery fan-out (or "send test event") just wrote, carrying what it sends
 * (`prepared`: event id and type, body, due time) when the body is at most
 * {@link PREPARED_BODY_MAX_BYTES} bytes, so the dispatcher need not read the row.
 */
export function firstAttemptMessage(delivery: {
  id: string;
  team_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  body?: string;
  due_at_ms: number | null;
}): DeliveryMessage {
  const message = attemptMessage(delivery, 1);
  if (
    delivery.body !== undefined &&
    delivery.due_at_ms !== null &&
    Buffer.byteLength(delivery.body) <= PREPARED_BODY_MAX_BYTES
  ) {
    message.prepared = {
      event_id: delivery.event_id,
      event_type: delivery.event_type,
      body: delivery.body,
      due_at_ms: delivery.due_at_ms,
    };
  }
  return message;
}

/** The message "dead-letter this delivery if it is still waiting after its last attempt". */
function deadLetterMessage(delivery: Pick<DeliveryState, 'id' | 'team_id'>): DeliveryMessage {
  return { kind: 'dead_letter', team_id: delivery.team_id, delivery_id: delivery.id, attempt: MAX_ATTEMPTS };
}

/**
 * Transition after attempt `message.attempt` ended at `nowMs` (epoch ms): succeeded, pending after {@link
 * waitBeforeAttemptSeconds} (no earlier than `retryAfterSeconds`, ≤ {@link MAX_RETRY_WAIT_SECONDS}), or after the last
 * attempt pending with the dead-letter timer. Waits divided by `timeScale`.
 */
export function afterAttempt(
  message: DeliveryMessage,
  ok: boolean,
  nowMs: number,
  timeScale: number,
  retryAfterSeconds: number | null = null,
): AttemptTransition {
  const delivery = { id: message.delivery_id, team_id: message.team_id, endpoint_id: message.endpoint_id };
  if (ok) return { outcome: 'succeeded', status: 'succeeded', next: null };
  if (message.attempt < MAX_ATTEMPTS) {
    const waitSeconds = Math.max(
      waitBeforeAttemptSeconds(message.attempt + 1),
      Math.min(retryAfterSeconds ?? 0, MAX_RETRY_WAIT_SECONDS),
    );
    const dueAtMs = nowMs + scaledWaitMs(waitSeconds, timeScale);
    return {
      outcome: 'retry_scheduled',
      status: 'pending',
      dueAtMs,
      nextAttemptAtMs: dueAtMs,
      next: attemptMessage(delivery, message.attempt + 1),
    };
  }
  const dueAtMs = nowMs + scaledWaitMs(DEAD_LETTER_WAIT_SECONDS, timeScale);
  return {
    outcome: 'awaiting_dead_letter',
    status: 'pending',
    dueAtMs,
    nextAttemptAtMs: null,
    next: deadLetterMessage(delivery),
  };
}

/** The attempt log with `record` appended, keeping the newest {@link MAX_ATTEMPT_LOG} records. */
export function appendAttempt(
  log: readonly StoredDeliveryAttempt[] | undefined,
  record: DeliveryAttempt,
): StoredDeliveryAttempt[] {
  return [...(log ?? []), record].slice(-MAX_ATTEMPT_LOG);
}

/**
 * The record of an attempt that was not made because the endpoint is disabled or deleted, or the event is gone (failure
 * kind `endpoint_disabled`, no status, 0 ms, no connection; `plannedAt` is when it was due). Such a delivery goes to
 * `dead` at once with `attempt - 1` attempts counted, so replay-dead can bring it back after re-enabling.
 */
export function stoppedAttempt(attempt: number, nowMs: number, plannedAt: string | null = null): DeliveryAttempt {
  return {
    attempt,
    planned_at: plannedAt,
    attempted_at: isoTime(nowMs),
    status: null,
    failure_kind: 'endpoint_disabled',
    duration_ms: 0,
    connect_ms: null,
    remote_address: null,
    tls_version: null,
    response_body: '',
  };
}

/**
 * True when a `dead_letter` message finds the delivery still waiting after its last attempt and its
 * timer due at `nowMs` (epoch ms; {@link TIMER_EARLY_TOLERANCE_MS} early counts). Otherwise the message
 * is stale or a duplicate and does nothing.
 */
export function isDueForDeadLetter(delivery: DeliveryState, nowMs: number): boolean {
  return !(
    delivery.status !== 'pending' ||
    delivery.attempts !== MAX_ATTEMPTS ||
    delivery.due_at_ms === null ||
    delivery.due_at_ms > nowMs + TIMER_EARLY_TOLERANCE_MS
  );
}

/**
 * Only dead and skipped deliveries can be retried by hand or replayed (interface "States": dead → pending; DESIGN D6:
 * skipped → pending).
 */
export function canRetry(delivery: Pick<DeliveryState, 'status'>): boolean {
  return delivery.status === 'dead' || delivery.status === 'skipped';
}

/**
 * The message that restarts a delivery whose timer or message was lost (the sweeper): pending after the
 * last attempt → dead-letter; pending → the next attempt; delivering (lease expired) → the same attempt
 * again. Null for succeeded and dead deliveries.
 */
export function recoveryMessage(delivery: DeliveryState & { endpoint_id?: string }): DeliveryMessage | null {
  if (delivery.status === 'pending' && delivery.attempts >= MAX_ATTEMPTS) return deadLetterMessage(delivery);
  if (delivery.status === 'pending') return attemptMessage(delivery, delivery.attempts + 1);
  if (delivery.status === 'delivering') return attemptMessage(delivery, delivery.attempts);
  return null;
}
