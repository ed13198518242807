import * as z from '../../schemas/zod.js';
import { WEBHOOK_EVENT_NAMES } from '../../catalogues/webhook-events.js';
import { IdSchemas } from '../../ids.js';
import { ListQuery, Timestamp, Uuid, listOf } from '../../schemas/common.js';
import { MAX_ATTEMPTS } from './policy.js';
import { ATTEMPT_FAILURE_KINDS } from './transport/port.js';

/**
 * The webhook delivery's shapes (interface "Webhook delivery", DESIGN D7, D12): the delivery, its
 * attempt records, the list query and replay-dead. The closed lists are written here once.
 */

/**
 * Delivery statuses (DESIGN D7; `delivering` is the lease while an attempt is in flight; `skipped`:
 * the endpoint was disabled when the event was fanned out, no attempt was made, D6).
 */
export const DELIVERY_STATUSES = ['pending', 'delivering', 'succeeded', 'dead', 'skipped'] as const;

/** The statuses a replay job brings back to `pending` (DESIGN D25). */
export const REPLAYABLE_STATUSES = ['dead', 'skipped'] as const;
/** A delivery status (see {@link DELIVERY_STATUSES}). */
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/**
 * Why a recorded attempt failed: every transport failure kind (`./transport/port.ts`) plus
 * `endpoint_disabled` (the endpoint was disabled or deleted, or the event is gone: no request was sent).
 */
const DELIVERY_FAILURE_KINDS = [...ATTEMPT_FAILURE_KINDS, 'endpoint_disabled'] as const;

/**
 * One recorded attempt (DESIGN D7: time, HTTP status or failure kind, duration, first 1 KiB of the body;
 * plus the resolved IP, TLS version, connect and total milliseconds, and the planned time beside
 * the actual start). Records written before the detail existed read with null details.
 */
export const DeliveryAttempt = z
  .object({
    attempt: z.number().check(z.int(), z.gte(1), z.lte(MAX_ATTEMPTS)),
    planned_at: z
      .nullable(Timestamp)
      .check(
        z.describe('When the attempt was due (the retry timeline), beside attempted_at, when it actually started.'),
      ),
    attempted_at: Timestamp.check(z.describe('When the attempt actually started.')),
    status: z.nullable(z.number().check(z.int())).check(z.describe('HTTP status, or null when no response came.')),
    failure_kind: z
      .nullable(z.enum(DELIVERY_FAILURE_KINDS))
      .check(z.describe('Why the attempt failed; null when it succeeded.')),
    duration_ms: z
      .number()
      .check(z.int(), z.describe('Total milliseconds of the attempt: DNS, connect, TLS, request and response.')),
    connect_ms: z
      .nullable(z.number().check(z.int()))
      .check(
        z.describe(
          'Milliseconds to open the connection (TCP and TLS handshake); null when an open connection was reused or none was made.',
        ),
      ),
    remote_address: z
      .nullable(z.string())
      .check(
        z.describe('The IP address the host name resolved to and the attempt connected to; null when none was chosen.'),
      ),
    tls_version: z
      .nullable(z.string())
      .check(z.describe('The negotiated TLS version (e.g. TLSv1.3); null when no TLS session was made.')),
    response_body: z.string().check(z.describe('First 1 KiB of the response body.')),
    retry_after_seconds: z
      .optional(z.nullable(z.number().check(z.int(), z.gte(0))))
      .check(
        z.describe(
          'Seconds the receiver asked to wait with Retry-After on a 429 or 503 answer; the next attempt was not planned earlier (within the 24-hour maximum wait). Absent otherwise.',
        ),
      ),
  })
  .register(z.globalRegistry, { id: 'DeliveryAttempt' });
/** One recorded attempt (see {@link DeliveryAttempt}). */
export type DeliveryAttempt = z.infer<typeof DeliveryAttempt>;
/** Former name of {@link DeliveryAttempt}, kept for its callers. */
export type DeliveryAttemptRecord = DeliveryAttempt;

/** A webhook delivery of one event to one endpoint (interface "Webhook delivery", DESIGN D7). */
export const WebhookDelivery = z
  .object({
    id: IdSchemas.delivery().check(z.describe('`dlv_` + ULID')),
    endpoint_id: Uuid,
    event_id: IdSchemas.event().check(z.describe('`evt_` + ULID')),
    event_type: z.enum(WEBHOOK_EVENT_NAMES),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().check(z.int(), z.gte(0), z.lte(MAX_ATTEMPTS)),
    next_attempt_at: z.nullable(Timestamp),
    last_attempt_at: z.nullable(Timestamp),
    dead_lettered_at: z.nullable(Timestamp),
    skipped_at: z
      .nullable(Timestamp)
      .check(
        z.describe(
          'Set when the delivery was recorded as skipped (its endpoint was disabled when the event was fanned out).',
        ),
      ),
    created_at: Timestamp,
    attempt_log: z
      .optional(z.array(DeliveryAttempt))
      .check(z.describe('The attempts, oldest first (single reads only).')),
  })
  .register(z.globalRegistry, { id: 'WebhookDelivery' });
/** A webhook delivery (see {@link WebhookDelivery}). */
export type WebhookDelivery = z.infer<typeof WebhookDelivery>;

/** A page of deliveries (DESIGN D12). */
export const WebhookDeliveryList = listOf(WebhookDelivery, 'WebhookDeliveryList');

/** `{id}` path parameters of a delivery. */
export const DeliveryIdParams = z.strictObject({
  id: IdSchemas.delivery().check(z.describe('The delivery id (dlv_ followed by a ULID).')),
});

/** Query of `GET /v1/webhook-deliveries` (and the `list_webhook_deliveries` tool's arguments). */
export const ListWebhookDeliveriesQuery = z.extend(ListQuery, {
  endpoint_id: z.optional(Uuid).check(z.describe('Only deliveries to this endpoint.')),
  status: z.optional(z.enum(DELIVERY_STATUSES)).check(z.describe('Only deliveries with this status.')),
  event_type: z.optional(z.enum(WEBHOOK_EVENT_NAMES)).check(z.describe('Only deliveries of this event.')),
});
/** A validated list query (see {@link ListWebhookDeliveriesQuery}). */
export type ListWebhookDeliveriesQuery = z.infer<typeof ListWebhookDeliveriesQuery>;

/**
 * Body of `POST /v1/webhook-deliveries/replay-dead` (and the `replay_dead_webhook_deliveries` tool's
 * arguments): which deliveries a replay job brings back (interface "States": replay-dead; DESIGN D25).
 */
export const ReplayDeadRequest = z
  .strictObject({
    since_hours: z
      .number()
      .check(
        z.int(),
        z.gte(1),
        z.lte(720),
        z.describe('Hours back from now, 1 to 720, applied to dead_lettered_at (skipped_at for status skipped).'),
      ),
    until: z
      .optional(Timestamp)
      .check(z.describe('Only deliveries dead-lettered (or skipped) at or before this time; default now.')),
    endpoint_id: z.optional(Uuid).check(z.describe('Only deliveries to this endpoint.')),
    event_type: z.optional(z.enum(WEBHOOK_EVENT_NAMES)).check(z.describe('Only deliveries of this event.')),
    status: z.optional(z.enum(REPLAYABLE_STATUSES)).check(z.describe('dead (the default) or skipped deliveries.')),
    dry_run: z
      .optional(z.boolean())
      .check(z.describe('true: count the matching deliveries only; nothing is re-queued (default false).')),
  })
  .register(z.globalRegistry, { id: 'ReplayDeadRequest' });
/** A validated replay request (see {@link ReplayDeadRequest}). */
export type ReplayDeadRequest = z.infer<typeof ReplayDeadRequest>;
