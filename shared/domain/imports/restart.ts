import { restartStalledJobs } from '../resumable-jobs.js';
import type { Runtime } from '../../runtime.js';
import { importStore } from '../../store/imports.js';

/** The sweeper's part of imports (DESIGN D34), apart from the worker so the sweeper's bundle stays small (D23). */

/**
 * Queues the next page of every unfinished import whose last progress is older than `beforeMs` (epoch ms): its worker
 * crashed or its message was lost (the sweeper calls this). Returns the number of jobs restarted.
 */
export function restartStalledImports(
  runtime: Pick<Runtime, 'store' | 'deliveryQueue'>,
  beforeMs: number,
): Promise<number> {
  return restartStalledJobs(
    runtime,
    beforeMs,
    (store, before, key) => importStore.pageStalled(store, before, key),
    (job) => ({
      kind: 'import_page',
      team_id: job.team_id,
      project_id: job.project_id,
      import_id: job.id,
    }),
  );
}
