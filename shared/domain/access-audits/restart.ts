import { restartStalledJobs } from '../resumable-jobs.js';
import type { Runtime } from '../../runtime.js';
import { accessAuditStore } from '../../store/access-audits.js';

/**
 * The sweeper's part of access audits (DESIGN D34), apart from the worker so the sweeper's bundle stays small (D23).
 */

/**
 * Queues the next page of every unfinished audit whose last progress is older than `beforeMs` (epoch ms): its worker
 * crashed or its message was lost (the sweeper calls this). Returns the number of audits restarted.
 */
export function restartStalledAccessAudits(
  runtime: Pick<Runtime, 'store' | 'deliveryQueue'>,
  beforeMs: number,
): Promise<number> {
  return restartStalledJobs(
    runtime,
    beforeMs,
    (store, before, key) => accessAuditStore.pageStalled(store, before, key),
    (job) => ({ kind: 'access_audit_page', team_id: job.team_id, project_id: job.project_id, audit_id: job.id }),
  );
}
