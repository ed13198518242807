import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { createReplayJob } from '../webhook-replays/repository.js';
import { retryDelivery } from './dead-letter.js';
import { webhookDeliveriesModule } from './operations.js';
import { getDelivery, listDeliveries } from './reads.js';

type Operations = typeof webhookDeliveriesModule.operations;

/** `GET /v1/webhook-deliveries` / `list_webhook_deliveries`. */
export const listWebhookDeliveries: OperationHandler<Operations['listWebhookDeliveries']> = async (
  input,
  { runtime, principal },
) => listDeliveries(runtime, principal, input);

/** `GET /v1/webhook-deliveries/{id}` / `get_webhook_delivery`: the delivery with its attempt log. */
export const getWebhookDelivery: OperationHandler<Operations['getWebhookDelivery']> = async (
  input,
  { runtime, principal },
) => getDelivery(runtime, principal, input.id);

/** `POST /v1/webhook-deliveries/{id}/retry` / `retry_webhook_delivery`. */
export const retryWebhookDelivery: OperationHandler<Operations['retryWebhookDelivery']> = async (
  input,
  { runtime, principal },
) => retryDelivery(runtime, principal, input.id);

/** `POST /v1/webhook-deliveries/replay-dead` / `replay_dead_webhook_deliveries`: 202 with a replay job (DESIGN D25). */
export const replayDeadWebhookDeliveries: OperationHandler<Operations['replayDeadWebhookDeliveries']> = async (
  input,
  { runtime, principal },
) => createReplayJob(runtime, principal, input);

/** Every handler of the webhook deliveries module. */
export const webhookDeliveriesHandlers = {
  listWebhookDeliveries,
  getWebhookDelivery,
  retryWebhookDelivery,
  replayDeadWebhookDeliveries,
} satisfies HandlersOf<typeof webhookDeliveriesModule>;
