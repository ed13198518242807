import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { webhookReplaysModule } from './operations.js';
import { cancelReplayJob, getReplayJob } from './repository.js';

type Operations = typeof webhookReplaysModule.operations;

/** `GET /v1/webhook-replays/{id}`: the job and its progress. */
export const getWebhookReplay: OperationHandler<Operations['getWebhookReplay']> = async (
  input,
  { runtime, principal },
) => getReplayJob(runtime, principal, input.id);

/** `POST /v1/webhook-replays/{id}/cancel` (and MCP `tasks/cancel`): the job, cancelled. */
export const cancelWebhookReplay: OperationHandler<Operations['cancelWebhookReplay']> = async (
  input,
  { runtime, principal },
) => cancelReplayJob(runtime, principal, input.id);

/** Every handler of the webhook replays module. */
export const webhookReplaysHandlers = { getWebhookReplay, cancelWebhookReplay } satisfies HandlersOf<
  typeof webhookReplaysModule
>;
