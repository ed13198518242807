import type { Clock } from '../../clock.js';
import { isoTime } from '../../clock.js';
import type { StoredEvent } from '../../events/outbox.js';
import { newDeliveryId } from '../../ids.js';
import { deliveryExpiresAt } from './policy.js';
import type { StoredDelivery } from './stored.js';

/** Creation of webhook deliveries (DESIGN D6): a new delivery as `deliveryStore` (shared/store) writes it. */

/**
 * New pending delivery of `event` to one endpoint, attempt 1 due now, kept {@link deliveryExpiresAt} (30 days); `body`
 * is the exact redacted POST body. With `skipped` (disabled endpoint, D6) it is `skipped` instead, where replays find
 * it.
 */
export function newDeliveryItem(
  clock: Clock,
  teamId: string,
  endpointId: string,
  event: Pick<StoredEvent, 'id' | 'type'>,
  body: string,
  options: { skipped?: boolean } = {},
): StoredDelivery & { expires_at: number } {
  const nowMs = clock.nowMs();
  const id = newDeliveryId(nowMs);
  if (options.skipped) {
    return {
      id,
      team_id: teamId,
      endpoint_id: endpointId,
      event_id: event.id,
      event_type: event.type,
      status: 'skipped',
      attempts: 0,
      next_attempt_at: null,
      last_attempt_at: null,
      dead_lettered_at: null,
      skipped_at: isoTime(nowMs),
      created_at: isoTime(nowMs),
      due_at_ms: null,
      lease_expires_at_ms: null,
      attempt_log: [],
      body,
      expires_at: deliveryExpiresAt(nowMs),
    };
  }
  return {
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
    skipped_at: null,
    created_at: isoTime(nowMs),
    due_at_ms: nowMs,
    lease_expires_at_ms: null,
    attempt_log: [],
    body,
    expires_at: deliveryExpiresAt(nowMs),
  };
}
