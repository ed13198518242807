import * as z from '../../schemas/zod.js';
import { API_VERSION } from '../../catalogues/version.js';
import { WEBHOOK_EVENT_NAMES, type WebhookEventDefinition } from '../../catalogues/webhook-events.js';
import { IdSchemas } from '../../ids.js';
import { ListQuery, Timestamp, Uuid, listOf } from '../../schemas/common.js';

/**
 * The events API's shapes (for automation platforms: "sample" and "perform list"
 * calls): the envelope exactly as delivered (interface "Events" → "Envelope"), its list, the list
 * query and the resend request. The envelope of each event, with its own `data` schema, is also the
 * OpenAPI 3.1 `webhooks` section (`shared/http/openapi.ts`).
 */

/** The fields of every envelope (interface "Envelope"); `data` is each event's own object. */
const envelopeFields = {
  id: IdSchemas.event().check(z.describe('`evt_` + ULID; equals the SVC-Event-Id header. Use it to de-duplicate.')),
  type: z.enum(WEBHOOK_EVENT_NAMES).check(z.describe('The event name; equals the SVC-Event-Name header.')),
  created_at: Timestamp,
  api_version: z.string().check(z.describe(`The API version stamp (${API_VERSION}).`)),
  project_id: z.nullable(Uuid).check(z.describe('Null for team-scoped and billing events.')),
};

/** A webhook envelope of any event (`data` as that event's schema says, see `webhook-events.json`). */
export const EventEnvelope = z
  .object({
    ...envelopeFields,
    data: z
      .record(z.string(), z.unknown())
      .check(
        z.describe(
          'Event-specific; see the event\u2019s schema in webhook-events.json or the OpenAPI webhooks section.',
        ),
      ),
  })
  .register(z.globalRegistry, { id: 'EventEnvelope' });
/** An envelope (see {@link EventEnvelope}). */
export type EventEnvelopeBody = z.infer<typeof EventEnvelope>;

/** The envelope of one event with its own `type` and `data` schema (the OpenAPI `webhooks` entry of that event). */
export function envelopeSchemaOf(definition: WebhookEventDefinition) {
  return z.object({ ...envelopeFields, type: z.literal(definition.name), data: definition.data_schema });
}

/** A page of envelopes, newest first (DESIGN D12). */
export const EventList = listOf(EventEnvelope, 'EventList');

/** `{id}` path parameters of an event. */
export const EventIdParams = z.strictObject({
  id: IdSchemas.event().check(z.describe('The event id (evt_ followed by a ULID).')),
});

/** Query of `GET /v1/events`: filters by type, project and creation time (inclusive bounds). */
export const ListEventsQuery = z.extend(ListQuery, {
  type: z.optional(z.enum(WEBHOOK_EVENT_NAMES)).check(z.describe('Only events of this type.')),
  project_id: z.optional(Uuid).check(z.describe('Only events of this project.')),
  created_after: z.optional(Timestamp).check(z.describe('Only events created at or after this time.')),
  created_before: z.optional(Timestamp).check(z.describe('Only events created at or before this time.')),
});
/** A validated events query (see {@link ListEventsQuery}). */
export type ListEventsQuery = z.infer<typeof ListEventsQuery>;

/** Body of `POST /v1/events/{id}/resend`: the endpoint to send the event to again. */
export const ResendEventRequest = z
  .strictObject({
    endpoint_id: Uuid.check(z.describe('The webhook endpoint that gets the event again (one new delivery).')),
  })
  .register(z.globalRegistry, { id: 'ResendEventRequest' });
