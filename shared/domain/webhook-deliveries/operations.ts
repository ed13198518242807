import { defineModule, defineOperation } from '../../operations/definition.js';
import { DeliveryIdParams, ListWebhookDeliveriesQuery, ReplayDeadRequest, ReplayDeadResponse, WebhookDelivery, WebhookDeliveryList } from './schema.js';

/** The webhook delivery operations (interface "Webhook delivery", "States"; DESIGN D7, D13). All are team-wide. */
export const webhookDeliveriesModule = defineModule({
  folder: 'webhook-deliveries',
  operations: {
    listWebhookDeliveries: defineOperation({
      id: 'listWebhookDeliveries',
      summary: 'List deliveries, newest first.',
      tag: 'Webhooks',
      ability: 'webhook-delivery:view-any',
      teamWide: true,
      query: ListWebhookDeliveriesQuery,
      output: WebhookDeliveryList,
      events: [],
      rest: { method: 'GET', path: '/v1/webhook-deliveries', successStatus: 200 },
      tool: { name: 'list_webhook_deliveries', title: 'List webhook deliveries', kind: 'read', description: 'List webhook deliveries, newest first.' },
    }),
    getWebhookDelivery: defineOperation({
      id: 'getWebhookDelivery',
      summary: 'Get one delivery with its attempts.',
      tag: 'Webhooks',
      ability: 'webhook-delivery:view-any',
      teamWide: true,
      params: DeliveryIdParams,
      output: WebhookDelivery,
      events: [],
      rest: { method: 'GET', path: '/v1/webhook-deliveries/{id}', successStatus: 200 },
      tool: { name: 'get_webhook_delivery', title: 'Get webhook delivery', kind: 'read', description: 'Read one webhook delivery and its attempts.' },
    }),
    retryWebhookDelivery: defineOperation({
      id: 'retryWebhookDelivery',
      summary: 'Re-queue one dead delivery (attempts reset to 0).',
      tag: 'Webhooks',
      ability: 'webhook-delivery:retry',
      teamWide: true,
      params: DeliveryIdParams,
      output: WebhookDelivery,
      events: [],
      rest: { method: 'POST', path: '/v1/webhook-deliveries/{id}/retry', successStatus: 202 },
      tool: { name: 'retry_webhook_delivery', title: 'Retry webhook delivery', kind: 'update', description: 'Re-queue one dead delivery as pending with attempts reset to 0.' },
    }),
    replayDeadWebhookDeliveries: defineOperation({
      id: 'replayDeadWebhookDeliveries',
      summary: 'Re-queue dead deliveries dead-lettered within since_hours.',
      tag: 'Webhooks',
      ability: 'webhook-delivery:retry',
      teamWide: true,
      body: ReplayDeadRequest,
      output: ReplayDeadResponse,
      events: [],
      rest: { method: 'POST', path: '/v1/webhook-deliveries/replay-dead', successStatus: 202 },
      tool: {
        name: 'replay_dead_webhook_deliveries',
        title: 'Replay dead webhook deliveries',
        kind: 'update',
        description: 'Re-queue every dead delivery whose dead_lettered_at is within the last since_hours hours; returns the count.',
      },
    }),
  },
});
