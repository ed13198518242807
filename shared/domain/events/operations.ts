import { defineOperation, defineModule } from '../../operations/definition.js';
import { WebhookDelivery } from '../webhook-deliveries/schema.js';
import { EventEnvelope, EventIdParams, EventList, ListEventsQuery, ResendEventRequest } from './schema.js';

/**
 * The events API: the envelopes the team's webhooks carry, readable and resendable,
 * so automation platforms can fetch samples and list recent events. Team-wide like deliveries. Each
 * caller sees only the events whose minimum ability it holds, with the payload as an endpoint it owned
 * would get it (DESIGN D6, D10). No tool bindings (the tool catalogue holds the interface's tools).
 */
export const eventsModule = defineModule({
  folder: 'events',
  operations: {
    listEvents: defineOperation({
      id: 'listEvents',
      summary: 'List events, newest first, as their webhooks deliver them.',
      tag: 'Webhooks',
      ability: 'webhook-delivery:view-any',
      teamWide: true,
      query: ListEventsQuery,
      output: EventList,
      events: [],
      rest: { method: 'GET', path: '/v1/events', successStatus: 200 },
    }),
    getEvent: defineOperation({
      id: 'getEvent',
      summary: 'Get one event envelope exactly as delivered.',
      tag: 'Webhooks',
      ability: 'webhook-delivery:view-any',
      teamWide: true,
      params: EventIdParams,
      output: EventEnvelope,
      events: [],
      rest: { method: 'GET', path: '/v1/events/{id}', successStatus: 200 },
    }),
    resendEvent: defineOperation({
      id: 'resendEvent',
      summary: 'Send one event again to one endpoint (a new delivery).',
      tag: 'Webhooks',
      ability: 'webhook-delivery:retry',
      teamWide: true,
      params: EventIdParams,
      body: ResendEventRequest,
      output: WebhookDelivery,
      events: [],
      rest: { method: 'POST', path: '/v1/events/{id}/resend', successStatus: 202 },
    }),
  },
});
