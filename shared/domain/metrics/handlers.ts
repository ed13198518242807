import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { metricsModule } from './operations.js';
import { getProjectMetrics as readProject, getTeamMetrics as readTeam } from './reads.js';

type Operations = typeof metricsModule.operations;

/** `GET /v1/projects/{project_id}/metrics`. */
export const getProjectMetrics: OperationHandler<Operations['getProjectMetrics']> = async (
  { project_id },
  { runtime, principal },
) => readProject(runtime.store, principal, project_id, runtime.clock.nowMs());

/** `GET /v1/metrics`. */
export const getTeamMetrics: OperationHandler<Operations['getTeamMetrics']> = async (_input, { runtime, principal }) =>
  readTeam(runtime.store, principal, runtime.clock.nowMs());

/** Every handler of the metrics module. */
export const metricsHandlers = { getProjectMetrics, getTeamMetrics } satisfies HandlersOf<typeof metricsModule>;
