import type { OperationHandler } from '../../operations/handler.js';
import type { broadcastOperations } from './broadcast-operations.js';
import { createBroadcast, getBroadcast, listBroadcasts } from './broadcasts.js';

type Operations = typeof broadcastOperations;

/** The handlers of the broadcast operations (DESIGN D32), part of the messages module's handlers. */
export const broadcastHandlers = {
  createBroadcast: (({ project_id, ...request }, { runtime, principal }) =>
    createBroadcast(runtime, principal, project_id, request)) satisfies OperationHandler<Operations['createBroadcast']>,
  listBroadcasts: (({ project_id, ...query }, { runtime, principal }) =>
    listBroadcasts(runtime, principal, project_id, query)) satisfies OperationHandler<Operations['listBroadcasts']>,
  getBroadcast: (({ project_id, id }, { runtime, principal }) =>
    getBroadcast(runtime, principal, project_id, id)) satisfies OperationHandler<Operations['getBroadcast']>,
};
