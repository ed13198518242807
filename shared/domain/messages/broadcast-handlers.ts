import type { OperationHandler } from '../../operations/handler.js';
import type { broadcastOperations } from './broadcast-operations.js';
import * as broadcasts from './broadcasts.js';

type Operations = typeof broadcastOperations;

/** `POST /v1/projects/{project_id}/broadcasts` (see `broadcasts.createBroadcast`). */
export const createBroadcast: OperationHandler<Operations['createBroadcast']> = (
  { project_id, ...request },
  { runtime, principal },
) => broadcasts.createBroadcast(runtime, principal, project_id, request);

/** `GET /v1/projects/{project_id}/broadcasts` (see `broadcasts.listBroadcasts`). */
export const listBroadcasts: OperationHandler<Operations['listBroadcasts']> = (
  { project_id, ...query },
  { runtime, principal },
) => broadcasts.listBroadcasts(runtime, principal, project_id, query);

/** `GET /v1/projects/{project_id}/broadcasts/{id}` (see `broadcasts.getBroadcast`). */
export const getBroadcast: OperationHandler<Operations['getBroadcast']> = (
  { project_id, id },
  { runtime, principal },
) => broadcasts.getBroadcast(runtime, principal, project_id, id);
