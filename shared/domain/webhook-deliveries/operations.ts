import { defineModule, defineOperation } from '../../operations/definition.js';
import { WebhookReplay } from '../webhook-replays/schema.js';
import {
  DeliveryIdParams,
  ListWebhookDeliveriesQuery,
  ReplayDeadRequest,
  WebhookDelivery,
  WebhookDeliveryList,
} from './schema.js';

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
      tool: {
        name: 'list_webhook_deliveries',
        title: 'List webhook deliveries',
        kind: 'read',
        description: 'List webhook deliveries, newest first.',
      },
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
      tool: {
        name: 'get_webhook_delivery',
        title: 'Get webhook delivery',
        kind: 'read',
        description: 'Read one webhook delivery and its attempts.',
      },
    }),
    retryWebhookDelivery: defineOperation({
      id: 'retryWebhookDelivery',
      summary: 'Re-queue one dead or skipped delivery (attempts reset to 0).',
      tag: 'Webhooks',
      ability: 'webhook-delivery:retry',
      teamWide: true,
      params: DeliveryIdParams,
      output: WebhookDelivery,
      events: [],
      rest: { method: 'POST', path: '/v1/webhook-deliveries/{id}/retry', successStatus: 202 },
      tool: {
        name: 'retry_webhook_delivery',
        title: 'Retry webhook delivery',
        kind: 'update',
        description: 'Re-queue one dead or skipped delivery as pending with attempts reset to 0.',
      },
    }),
    replayDeadWebhookDeliveries: defineOperation({
      id: 'replayDeadWebhookDeliveries',
      summary:
        'Start a replay job that re-queues the dead (or skipped) deliveries matching the filters, in the background; answers 202 with the job.',
      tag: 'Webhooks',
      ability: 'webhook-delivery:retry',
      teamWide: true,
      body: ReplayDeadRequest,
      output: WebhookReplay,
      events: [],
      rest: { method: 'POST', path: '/v1/webhook-deliveries/replay-dead', successStatus: 202 },
      tool: {
        name: 'replay_dead_webhook_deliveries',
        title: 'Replay dead webhook deliveries',
        kind: 'update',
        description:
          'Start a replay job: every dead delivery dead-lettered within the last since_hours hours (optionally until a time, to one endpoint, of one event type, or skipped deliveries instead) is re-queued in the background; dry_run only counts. Returns the job (matched, replayed, status); read its progress with GET /v1/webhook-replays/{id}.',
      },
    }),
  },
});
