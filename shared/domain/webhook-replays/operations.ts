import { defineModule, defineOperation } from '../../operations/definition.js';
import { WebhookReplay, WebhookReplayIdParams } from './schema.js';

/**
 * The replay job operations (DESIGN D25). A job is created by `replayDeadWebhookDeliveries` (`POST
 * /v1/webhook-deliveries/replay-dead`, in `../webhook-deliveries/operations.ts`); here it is read and cancelled. No
 * tool binding: the tool catalogue holds the interface's tools, and `replay_dead_webhook_deliveries` returns the job (a
 * task on MCP 2026-07-28, whose `tasks/cancel` runs `cancelWebhookReplay`).
 */
export const webhookReplaysModule = defineModule({
  folder: 'webhook-replays',
  operations: {
    getWebhookReplay: defineOperation({
      id: 'getWebhookReplay',
      summary: 'Get a replay job: its filters, matched and replayed counts and status.',
      tag: 'Webhooks',
      ability: 'webhook-delivery:view-any',
      teamWide: true,
      params: WebhookReplayIdParams,
      output: WebhookReplay,
      events: [],
      rest: { method: 'GET', path: '/v1/webhook-replays/{id}', successStatus: 200 },
    }),
    cancelWebhookReplay: defineOperation({
      id: 'cancelWebhookReplay',
      summary:
        'Cancel a running replay job: no further batch starts (deliveries already re-queued are sent). Cancelling a cancelled job returns it; a completed one is a conflict.',
      tag: 'Webhooks',
      ability: 'webhook-delivery:retry',
      teamWide: true,
      params: WebhookReplayIdParams,
      output: WebhookReplay,
      events: [],
      rest: { method: 'POST', path: '/v1/webhook-replays/{id}/cancel', successStatus: 200 },
    }),
  },
});
