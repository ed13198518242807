import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { sendTestEvent } from '../webhook-deliveries/fan-out.js';
import { webhookEndpointsModule } from './operations.js';
import {
  createWebhookEndpoint as create,
  deleteWebhookEndpoint as remove,
  rotateWebhookEndpointSecret as rotate,
  updateWebhookEndpoint as update,
} from './changes.js';
import { getWebhookEndpoint as read, listWebhookEndpoints as list } from './repository.js';

type Operations = typeof webhookEndpointsModule.operations;

/** `POST /v1/webhook-endpoints` / `create_webhook_endpoint`: the endpoint and its secret, shown once. */
export const createWebhookEndpoint: OperationHandler<Operations['createWebhookEndpoint']> = async (
  input,
  { runtime, principal },
) => create(runtime, principal, input);

/** `GET /v1/webhook-endpoints` / `list_webhook_endpoints`. */
export const listWebhookEndpoints: OperationHandler<Operations['listWebhookEndpoints']> = async (
  input,
  { runtime, principal },
) => list(runtime, principal, input);

/** `GET /v1/webhook-endpoints/{id}` / `get_webhook_endpoint`. */
export const getWebhookEndpoint: OperationHandler<Operations['getWebhookEndpoint']> = async (
  input,
  { runtime, principal },
) => read(runtime, principal, input.id);

/** `POST /v1/webhook-endpoints/{id}` / `update_webhook_endpoint`. */
export const updateWebhookEndpoint: OperationHandler<Operations['updateWebhookEndpoint']> = async (
  { id, ...changes },
  { runtime, principal },
) => update(runtime, principal, id, changes);

/** `DELETE /v1/webhook-endpoints/{id}` / `delete_webhook_endpoint`. */
export const deleteWebhookEndpoint: OperationHandler<Operations['deleteWebhookEndpoint']> = async (
  input,
  { runtime, principal },
) => remove(runtime, principal, input.id);

/**
 * `POST /v1/webhook-endpoints/{id}/rotate-secret` / `rotate_webhook_endpoint_secret`: API rotation (`v1` only at once,
 * DESIGN D8).
 */
export const rotateWebhookEndpointSecret: OperationHandler<Operations['rotateWebhookEndpointSecret']> = async (
  input,
  { runtime, principal },
) => rotate(runtime, principal, input.id, 'api');

/**
 * The dashboard's Rotate secret button (DESIGN D8, D21): the same operation (`rotateWebhookEndpointSecret`:
 * its ability, idempotency and activity entry) whose old secret keeps signing as `v0` for 24 hours beside
 * the new `v1`. Not bound to a REST route or tool: the API's rotation replaces the secret at once.
 */
export const rotateWebhookEndpointSecretWithDualSigning: OperationHandler<
  Operations['rotateWebhookEndpointSecret']
> = async (input, { runtime, principal }) => rotate(runtime, principal, input.id, 'dashboard');

/** `POST /v1/webhook-endpoints/{id}/test` / `send_test_webhook_event`. */
export const sendTestWebhookEvent: OperationHandler<Operations['sendTestWebhookEvent']> = async (
  input,
  { runtime, principal },
) => sendTestEvent(runtime, principal, input.id);

/** Every handler of the webhook endpoints module. */
export const webhookEndpointsHandlers = {
  createWebhookEndpoint,
  listWebhookEndpoints,
  getWebhookEndpoint,
  updateWebhookEndpoint,
  deleteWebhookEndpoint,
  rotateWebhookEndpointSecret,
  sendTestWebhookEvent,
} satisfies HandlersOf<typeof webhookEndpointsModule>;
