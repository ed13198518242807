import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { paymentProviderAdapters } from '../../providers/adapters.js';
import { plansModule } from './operations.js';
import { deletePlan as remove, setPlanStatus, updatePlan as update } from './changes.js';
import { createPlan as create } from './creation.js';
import { getPlan as read, listPlans as list } from './repository.js';
import { syncPlan as sync } from './sync.js';

type Operations = typeof plansModule.operations;

// The handlers that may sync a plan pass the service's payment-provider adapters (Stripe's SDK included);
// the repository itself stays free of provider SDKs (DESIGN D23).

/** `GET /v1/projects/{project_id}/plans` / `list_plans`. */
export const listPlans: OperationHandler<Operations['listPlans']> = async (
  { project_id, ...query },
  { runtime, principal },
) => list(runtime.store, principal, project_id, query);

/** `POST /v1/projects/{project_id}/plans` / `create_plan`. */
export const createPlan: OperationHandler<Operations['createPlan']> = async (
  { project_id, ...plan },
  { runtime, principal },
) => create(runtime, principal, project_id, plan, { adapters: paymentProviderAdapters(runtime) });

/** `GET /v1/plans/{id}` / `get_plan`. */
export const getPlan: OperationHandler<Operations['getPlan']> = async (input, { runtime, principal }) =>
  read(runtime.store, principal, input.id);

/** `POST /v1/plans/{id}` / `update_plan`. */
export const updatePlan: OperationHandler<Operations['updatePlan']> = async (
  { id, ...changes },
  { runtime, principal },
) => update(runtime, principal, id, changes, { adapters: paymentProviderAdapters(runtime) });

/** `DELETE /v1/plans/{id}`. */
export const deletePlan: OperationHandler<Operations['deletePlan']> = async (input, { runtime, principal }) =>
  remove(runtime, principal, input.id);

/** `POST /v1/plans/{id}/activate`. */
export const activatePlan: OperationHandler<Operations['activatePlan']> = async (input, { runtime, principal }) =>
  setPlanStatus(runtime, principal, input.id, 'active');

/** `POST /v1/plans/{id}/deactivate`. */
export const deactivatePlan: OperationHandler<Operations['deactivatePlan']> = async (input, { runtime, principal }) =>
  setPlanStatus(runtime, principal, input.id, 'inactive');

/** `POST /v1/plans/{id}/sync`. */
export const syncPlan: OperationHandler<Operations['syncPlan']> = async (input, { runtime, principal }) =>
  sync(runtime, principal, input.id, { adapters: paymentProviderAdapters(runtime) });

/** Every handler of the plans module. */
export const plansHandlers = {
  listPlans,
  createPlan,
  getPlan,
  updatePlan,
  deletePlan,
  activatePlan,
  deactivatePlan,
  syncPlan,
} satisfies HandlersOf<typeof plansModule>;
