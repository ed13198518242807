import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { subscriptionsModule } from './operations.js';
import { createSubscription as create } from './creation.js';
import { getSubscription as read, listSubscriptions as list } from './queries.js';
import {
  cancelSubscription as cancel,
  changeSubscriptionPlan as changePlan,
  triggerSubscription,
} from './transitions.js';

import { checkProjectAccess as checkAccess } from './access.js';

type Operations = typeof subscriptionsModule.operations;

/** `GET /v1/projects/{project_id}/access` (the web access check). */
export const checkProjectAccess: OperationHandler<Operations['checkProjectAccess']> = async (
  { project_id, ...query },
  { runtime, principal },
) => checkAccess(runtime.store, principal, project_id, query);

/** `GET /v1/projects/{project_id}/subscriptions` / `list_subscriptions`. */
export const listSubscriptions: OperationHandler<Operations['listSubscriptions']> = async (
  { project_id, ...query },
  { runtime, principal },
) => list(runtime.store, principal, project_id, query);

/** `POST /v1/projects/{project_id}/subscriptions`. */
export const createSubscription: OperationHandler<Operations['createSubscription']> = async (
  { project_id, ...input },
  { runtime, principal },
) => create(runtime, principal, project_id, input);

/** `GET /v1/subscriptions/{id}` / `get_subscription`. */
export const getSubscription: OperationHandler<Operations['getSubscription']> = async (input, { runtime, principal }) =>
  read(runtime.store, principal, input.id);

/** `POST /v1/subscriptions/{id}/cancel` / `cancel_subscription`. */
export const cancelSubscription: OperationHandler<Operations['cancelSubscription']> = async (
  { id, ...input },
  { runtime, principal },
) => cancel(runtime, principal, id, input);

/** `POST /v1/subscriptions/{id}/pause` / `pause_subscription`. */
export const pauseSubscription: OperationHandler<Operations['pauseSubscription']> = async (
  input,
  { runtime, principal },
) => triggerSubscription(runtime, principal, input.id, 'pause');

/** `POST /v1/subscriptions/{id}/resume` / `resume_subscription`. */
export const resumeSubscription: OperationHandler<Operations['resumeSubscription']> = async (
  input,
  { runtime, principal },
) => triggerSubscription(runtime, principal, input.id, 'resume');

/** `POST /v1/subscriptions/{id}/suspend`. */
export const suspendSubscription: OperationHandler<Operations['suspendSubscription']> = async (
  input,
  { runtime, principal },
) => triggerSubscription(runtime, principal, input.id, 'suspend');

/** `POST /v1/subscriptions/{id}/unsuspend`. */
export const unsuspendSubscription: OperationHandler<Operations['unsuspendSubscription']> = async (
  input,
  { runtime, principal },
) => triggerSubscription(runtime, principal, input.id, 'unsuspend');

/** `POST /v1/subscriptions/{id}/change-plan`. */
export const changeSubscriptionPlan: OperationHandler<Operations['changeSubscriptionPlan']> = async (
  input,
  { runtime, principal },
) => changePlan(runtime, principal, input.id, input.plan_id);

/** Every handler of the subscriptions module. */
export const subscriptionsHandlers = {
  listSubscriptions,
  createSubscription,
  getSubscription,
  cancelSubscription,
  pauseSubscription,
  resumeSubscription,
  suspendSubscription,
  unsuspendSubscription,
  changeSubscriptionPlan,
  checkProjectAccess,
} satisfies HandlersOf<typeof subscriptionsModule>;
