import { isoTime } from '../../clock.js';
import type { HandlersOf, InternalHandlersOf, OperationHandler } from '../../operations/handler.js';
import { requireProjectAccess } from '../../auth/authorize.js';
import { messageStore } from '../../store/messages.js';
import { subscriberStore } from '../../store/subscribers.js';
import { readPlatformUserClaim } from '../members/repository.js';
import { subscriberNotFound } from '../subscribers/repository.js';
import { messagesModule } from './operations.js';
import { createBroadcast, getBroadcast, listBroadcasts } from './broadcast-handlers.js';

// Each route's Lambda imports its handler by name from this module (DESIGN D13, D23).
export { createBroadcast, getBroadcast, listBroadcasts };
import { Message } from './schema.js';
import { recordParser } from '../../store/records.js';
import { entity } from '../../store/keys.js';

type Operations = typeof messagesModule.operations;
type InternalOperations = NonNullable<typeof messagesModule.internal>;

const parseMessage = recordParser(entity.message, Message);

/**
 * `GET /v1/projects/{project_id}/messages?subscriber_id=`: one subscriber's messages, newest first (DESIGN D12, D32).
 * Errors: NOT_FOUND (project or subscriber absent, foreign or outside the token's projects), VALIDATION_FAILED.
 */
export const listMessages: OperationHandler<Operations['listMessages']> = async (
  { project_id, subscriber_id, ...query },
  { runtime, principal },
) => {
  requireProjectAccess(principal, project_id);
  if (!(await subscriberStore.exists(runtime.store, principal.teamId, project_id, subscriber_id)))
    throw subscriberNotFound(subscriber_id);
  return messageStore.listPage(runtime.store, principal.teamId, project_id, subscriber_id, query, parseMessage);
};

export const messagesHandlers = { listMessages, createBroadcast, listBroadcasts, getBroadcast } satisfies HandlersOf<
  typeof messagesModule
>;

/**
 * The bots' `/start` and `/stop` (DESIGN D32): the subscriber the platform user is linked to can now get bot
 * messages (start: also withdraws an opt-out and a recorded block), or opts out of non-essential messages (stop).
 * `found: false` for a platform user linked to no subscriber.
 */
const recordBotCommand: OperationHandler<InternalOperations['recordBotCommand']> = async (
  input,
  { runtime, principal },
) => {
  const claim = await readPlatformUserClaim(runtime.store, principal.teamId, input.project_id, input.platform_user_id);
  const subscriberId = claim?.subscriber_id;
  if (!subscriberId) return { found: false };
  const subscriber = { teamId: principal.teamId, projectId: input.project_id, subscriberId };
  const now = isoTime(runtime.clock.nowMs());
  if (input.command === 'stop') await messageStore.setPreference(runtime.store, subscriber, 'opted_out_at', now);
  else {
    await messageStore.setPreference(runtime.store, subscriber, 'bot_started_at', now);
    await messageStore.setPreference(runtime.store, subscriber, 'bot_blocked_at', null);
    await messageStore.setPreference(runtime.store, subscriber, 'opted_out_at', null);
  }
  return { found: true };
};

export const messagesInternalHandlers = { recordBotCommand } satisfies InternalHandlersOf<typeof messagesModule>;
