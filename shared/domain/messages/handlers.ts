import { emailSha256 } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { consumeRateLimit } from '../../limits/rate-limit.js';
import type { HandlersOf, InternalHandlersOf, OperationHandler } from '../../operations/handler.js';
import { requireProjectAccess } from '../../auth/authorize.js';
import { messageStore } from '../../store/messages.js';
import { subscriberStore } from '../../store/subscribers.js';
import { readPlatformUserClaim } from '../members/repository.js';
import { SIGN_IN_LINK_LIFETIME_MS } from '../portal-sessions/links.js';
import { subscriberNotFound } from '../subscribers/repository.js';
import { queueMessages } from './creation.js';
import { messagesModule } from './operations.js';
import { createBroadcast, getBroadcast, listBroadcasts } from './broadcast-handlers.js';

// Each route's Lambda imports its handler by name from this module (DESIGN D13, D23).
export { createBroadcast, getBroadcast, listBroadcasts };
import { Message } from './schema.js';
import { unsubscribeWithToken } from './unsubscribe.js';
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

/** Every handler of the messages module. */
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

/**
 * "E-mail me a sign-in link" (DESIGN D32), run as the project's join principal: past the address's limit
 * (`sign-in-link-address`) nothing happens; else each subscriber of the project with that address gets a
 * `sign_in_link` message, at most one per 15-minute slot (its occasion). The answer never says whether the address is
 * known.
 */
const requestSignInLink: OperationHandler<InternalOperations['requestSignInLink']> = async (
  input,
  { runtime, principal },
) => {
  requireProjectAccess(principal, input.project_id);
  try {
    await consumeRateLimit(
      runtime.store,
      runtime.clock,
      'sign-in-link-address',
      `${input.project_id}#${emailSha256(input.email)}`,
    );
  } catch (error) {
    if (error instanceof ProblemError && error.code === 'RATE_LIMITED') return { requested: true };
    throw error;
  }
  const subscriberIds = await subscriberStore.idsWithEmail(
    runtime.store,
    principal.teamId,
    input.project_id,
    input.email,
  );
  const nowMs = runtime.clock.nowMs();
  const slot = isoTime(nowMs - (nowMs % SIGN_IN_LINK_LIFETIME_MS));
  await queueMessages(
    runtime,
    principal.teamId,
    subscriberIds.map((subscriberId) => ({
      kind: 'sign_in_link' as const,
      projectId: input.project_id,
      subscriberId,
      subscriptionId: null,
      occasion: `requested:${slot}`,
      graceDay: null,
    })),
  );
  return { requested: true };
};

/**
 * The unsubscribe page's opt-out (DESIGN D32, RFC 8058): public, the token is the credential; the activity entry goes
 * to the token's team. `unsubscribed: false` for an unknown or expired token (nothing changed).
 */
const unsubscribeFromMessages: OperationHandler<InternalOperations['unsubscribeFromMessages']> = async (
  input,
  { runtime, identify },
) => ({
  unsubscribed: await unsubscribeWithToken(runtime, input.token, { identify: (teamId) => identify?.({ teamId }) }),
});

/** Every handler of the messages module's internal operations. */
export const messagesInternalHandlers = {
  recordBotCommand,
  requestSignInLink,
  unsubscribeFromMessages,
} satisfies InternalHandlersOf<typeof messagesModule>;
