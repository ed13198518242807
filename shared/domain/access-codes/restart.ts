import { restartStalledJobs } from '../resumable-jobs.js';
import type { Runtime } from '../../runtime.js';
import { pageStalledBatchJobs } from '../../store/access-codes/jobs.js';

/**
 * The sweeper's part of access-code batch jobs (DESIGN D18), apart from the worker so the sweeper's bundle stays small.
 */

/**
 * Queues again every running access-code batch job whose last progress is older than `beforeMs` (epoch ms): its worker
 * stopped or its message was lost (the sweeper calls this). Returns the number of jobs queued.
 */
export function restartStalledAccessCodeBatchJobs(
  runtime: Pick<Runtime, 'store' | 'deliveryQueue'>,
  beforeMs: number,
): Promise<number> {
  return restartStalledJobs(runtime, beforeMs, pageStalledBatchJobs, (job) => ({
    kind: 'access_code_batch',
    team_id: job.team_id,
    job_id: job.id,
  }));
}
