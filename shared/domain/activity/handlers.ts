import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { activityModule } from './operations.js';
import { listActivity as list } from './repository.js';

/** `GET /v1/activity` / `get_activity_log`. */
export const listActivity: OperationHandler<typeof activityModule.operations.listActivity> = async (
  input,
  { runtime, principal },
) => list(runtime.store, principal.teamId, input);

/** Every handler of the activity module. */
export const activityHandlers = { listActivity } satisfies HandlersOf<typeof activityModule>;
