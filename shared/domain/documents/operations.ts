import { defineModule, defineOperation } from '../../operations/definition.js';

/** The two public description documents (interface "Endpoints → REST"): no token needed. */
export const documentsModule = defineModule({
  folder: 'documents',
  operations: {
    getOpenApiDocument: defineOperation({
      id: 'getOpenApiDocument',
      summary: 'This API description (OpenAPI 3.1).',
      tag: 'Meta',
      ability: null,
      teamWide: false,
      events: [],
      rest: { method: 'GET', path: '/openapi.json', successStatus: 200 },
    }),
    getWebhookEventsDocument: defineOperation({
      id: 'getWebhookEventsDocument',
      summary: 'Every webhook event with its data schema.',
      tag: 'Meta',
      ability: null,
      teamWide: false,
      events: [],
      rest: { method: 'GET', path: '/webhook-events.json', successStatus: 200 },
    }),
  },
});
