import type { Principal } from '../../auth/principal.js';
import { ProblemError } from '../../errors.js';
import type { Runtime } from '../../runtime.js';
import type { Store } from '../../store/store.js';
import type { Page } from '../../store/pages.js';
import { deliveryStore } from '../../store/webhook-deliveries/deliveries.js';
import type { DeliveryAttempt, ListWebhookDeliveriesQuery, WebhookDelivery } from './schema.js';
import type { StoredDelivery, StoredDeliveryAttempt } from './stored.js';

/** Reads of webhook deliveries (DESIGN D7, D12): the public view, single reads and the team's list. */

/** The public view of a stored delivery; `withAttempts` adds `attempt_log` (single reads). */
export function publicDelivery(stored: StoredDelivery, withAttempts: boolean): WebhookDelivery {
  const delivery: WebhookDelivery = {
    id: stored.id,
    endpoint_id: stored.endpoint_id,
    event_id: stored.event_id,
    event_type: stored.event_type,
    status: stored.status,
    attempts: stored.attempts,
    next_attempt_at: stored.next_attempt_at ?? null,
    last_attempt_at: stored.last_attempt_at ?? null,
    dead_lettered_at: stored.dead_lettered_at ?? null,
    skipped_at: stored.skipped_at ?? null,
    created_at: stored.created_at,
  };
  if (withAttempts) delivery.attempt_log = (stored.attempt_log ?? []).map(withAttemptDetail);
  return delivery;
}

/** An attempt record with every detail field, null where a record written before the detail existed lacks it. */
function withAttemptDetail(record: StoredDeliveryAttempt): DeliveryAttempt {
  return {
    ...record,
    planned_at: record.planned_at ?? null,
    connect_ms: record.connect_ms ?? null,
    remote_address: record.remote_address ?? null,
    tls_version: record.tls_version ?? null,
  };
}

/** Reads a stored delivery (strongly consistent) or null. */
export async function loadDelivery(store: Store, teamId: string, deliveryId: string): Promise<StoredDelivery | null> {
  return deliveryStore.load(store, teamId, deliveryId);
}

/** Reads one delivery of the principal's team with its attempt records. Errors: NOT_FOUND when absent or foreign. */
export async function getDelivery(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  deliveryId: string,
): Promise<WebhookDelivery> {
  const delivery = await loadDelivery(runtime.store, principal.teamId, deliveryId);
  if (!delivery) throw new ProblemError('NOT_FOUND', `No webhook delivery ${deliveryId}.`);
  return publicDelivery(delivery, true);
}

/**
 * Lists the team's deliveries, newest first, optionally filtered by endpoint, status and event type,
 * paged (DESIGN D12). Filters are applied by DynamoDB, so a page may be short while `next_cursor` is
 * set. Errors: VALIDATION_FAILED for a cursor of another list.
 */
export async function listDeliveries(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  query: Pick<ListWebhookDeliveriesQuery, 'limit' | 'cursor' | 'endpoint_id' | 'status' | 'event_type'>,
): Promise<Page<WebhookDelivery>> {
  const page = await deliveryStore.page(runtime.store, principal.teamId, query);
  return { data: page.data.map((delivery) => publicDelivery(delivery, false)), next_cursor: page.next_cursor };
}
