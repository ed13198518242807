import type { Principal } from '../../auth/principal.js';
import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { banSubscriber as ban, kickSubscriber as kick, unbanSubscriber as unban } from './moderation.js';
import { subscribersModule } from './operations.js';
import { updateSubscriber as update } from './changes.js';
import { exportSubscribers as exportPage, listSubscribers as list } from './lists.js';
import { createSubscriber as create, getSubscriber as read, visibleSubscriber } from './repository.js';
import type { SubscriberModeration } from './schema.js';

type Operations = typeof subscribersModule.operations;

/** The subscriber as `principal` may see it (DESIGN D10): without `project-user:view`, no e-mail or phone. */
const visibleTo = visibleSubscriber;

/** A moderation result as `principal` may see it (see {@link visibleTo}). */
function moderationVisibleTo(principal: Principal, result: SubscriberModeration): SubscriberModeration {
  return { ...result, subscriber: visibleTo(principal, result.subscriber) };
}

/** `GET /v1/projects/{project_id}/subscribers` / `list_subscribers`. */
export const listSubscribers: OperationHandler<Operations['listSubscribers']> = async (
  { project_id, ...query },
  { runtime, principal },
) => list(runtime.store, principal, project_id, query);

/** `POST /v1/projects/{project_id}/subscribers`. */
export const createSubscriber: OperationHandler<Operations['createSubscriber']> = async (
  { project_id, ...input },
  { runtime, principal },
) => visibleTo(principal, await create(runtime, principal, project_id, input));

/** `GET /v1/projects/{project_id}/subscribers/export`. */
export const exportSubscribers: OperationHandler<Operations['exportSubscribers']> = async (
  { project_id, ...query },
  { runtime, principal },
) => exportPage(runtime.store, principal, project_id, query);

/** `GET /v1/subscribers/{id}` / `get_subscriber`. */
export const getSubscriber: OperationHandler<Operations['getSubscriber']> = async (input, { runtime, principal }) =>
  visibleTo(principal, await read(runtime.store, principal, input.id));

/** `POST /v1/subscribers/{id}`. */
export const updateSubscriber: OperationHandler<Operations['updateSubscriber']> = async (
  { id, ...changes },
  { runtime, principal },
) => visibleTo(principal, await update(runtime, principal, id, changes));

/** `POST /v1/subscribers/{id}/ban` / `ban_subscriber`. */
export const banSubscriber: OperationHandler<Operations['banSubscriber']> = async (input, { runtime, principal }) =>
  moderationVisibleTo(principal, await ban(runtime, principal, input.id, input.reason ?? null));

/** `POST /v1/subscribers/{id}/unban`. */
export const unbanSubscriber: OperationHandler<Operations['unbanSubscriber']> = async (input, { runtime, principal }) =>
  moderationVisibleTo(principal, await unban(runtime, principal, input.id));

/** `POST /v1/subscribers/{id}/kick` / `kick_subscriber`. */
export const kickSubscriber: OperationHandler<Operations['kickSubscriber']> = async (input, { runtime, principal }) =>
  moderationVisibleTo(principal, await kick(runtime, principal, input.id, input.reason ?? null));

/** Every handler of the subscribers module. */
export const subscribersHandlers = {
  listSubscribers,
  createSubscriber,
  exportSubscribers,
  getSubscriber,
  updateSubscriber,
  banSubscriber,
  unbanSubscriber,
  kickSubscriber,
} satisfies HandlersOf<typeof subscribersModule>;
