import { isoTime } from '../../clock.js';
import { sealSecretWithKey } from '../../credentials/envelope.js';
import { ProblemError } from '../../errors.js';
import { integrationsOf } from '../../integrations.js';
import { logger } from '../../logger.js';
import type { AccessCodeBatchMessage, Runtime } from '../../runtime.js';
import {
  claimBatchJobRun,
  deleteBatchCodes,
  endRunningJob,
  loadBatchJob,
  updateRunningJob,
} from '../../store/access-codes/jobs.js';
import { isStalled } from '../resumable-jobs.js';
import { BATCH_JOB_MAX_RUNS, batchJobContext, type StoredAccessCodeBatchJob } from './batch-job.js';
import { writeBatch, type GenerationJob } from './generation.js';
import { requirePlanOfProject } from './plan.js';

/**
 * The access-code batch worker (DESIGN D5, D18): one `access_code_batch` message runs a job's whole generation. The run
 * claims the job first (a newer run stops the writes of an older one), deletes the batch an earlier run of it left
 * (a crash), then writes the chunks one at a time, each raising the job's `written` in its own transaction on
 * condition that the job still runs this run (a cancel stops the next chunk); the batch turns active with the job
 * `completed` and its codes sealed. A failure deletes what the run wrote. The sweeper queues a stalled running job
 * ({@link isStalled}) again, up to {@link BATCH_JOB_MAX_RUNS} runs.
 */

/** What one `access_code_batch` message did. */
export type AccessCodeBatchOutcome =
  'access_code_batch_completed' | 'access_code_batch_cancelled' | 'access_code_batch_failed' | 'skipped';

/** The problem of a chunk written after the job stopped or another run claimed it. */
const stopped = (jobId: string) => () =>
  new ProblemError('CONFLICT', `Access code batch job ${jobId} is no longer running.`);

/** The {@link GenerationJob} hooks of run `run` of `job`: its progress and completion in the batch's transactions. */
function generationJob(runtime: Runtime, job: StoredAccessCodeBatchJob, run: number): GenerationJob {
  const now = () => isoTime(runtime.clock.nowMs());
  const ofRun = { team_id: job.team_id, id: job.id, run };
  return {
    begin: (tx, batch) => updateRunningJob(tx, ofRun, { batchId: batch.id }, now(), stopped(job.id)),
    wrote: (tx, count) => updateRunningJob(tx, ofRun, { count }, now(), stopped(job.id)),
    complete: async (generated) => {
      const sealed = await sealSecretWithKey(
        integrationsOf(runtime).keyEncryptionKey,
        job.data_key,
        JSON.stringify(generated),
        batchJobContext(job.team_id, job.id),
      );
      return (tx) => updateRunningJob(tx, ofRun, { sealed, batch: generated.batch }, now(), stopped(job.id));
    },
  };
}

/**
 * Ends run `run` of `job` as failed with `problem` and deletes the batch it had begun. Returns the outcome: failed, or
 * cancelled when the job had stopped or another run claimed it meanwhile (that one cleans up).
 */
async function failRun(
  runtime: Runtime,
  job: StoredAccessCodeBatchJob,
  run: number,
  problem: { code: string; detail: string },
): Promise<AccessCodeBatchOutcome> {
  const failed = await endRunningJob(
    runtime.store,
    job.team_id,
    job.id,
    { status: 'failed', problem, run },
    isoTime(runtime.clock.nowMs()),
  );
  if (!failed) return 'access_code_batch_cancelled';
  if (failed.batch_id) await deleteBatchCodes(runtime, job.team_id, job.request.project_id, failed.batch_id);
  return 'access_code_batch_failed';
}

/**
 * Runs the job of an `access_code_batch` message to its end: completed, cancelled meanwhile, or failed (its problem
 * recorded, never the codes; its batch deleted). `skipped` for a job not running, or one an earlier run has
 * not left stalled ({@link isStalled}: a duplicate message). Throws only on store errors outside the run.
 */
export async function processAccessCodeBatch(
  runtime: Runtime,
  message: AccessCodeBatchMessage,
): Promise<AccessCodeBatchOutcome> {
  const job = await loadBatchJob(runtime.store, message.team_id, message.job_id);
  if (!job || job.status !== 'running') return 'skipped';
  const nowMs = runtime.clock.nowMs();
  const runs = job.runs ?? 0;
  if (runs > 0 && !isStalled(job.updated_at, nowMs)) return 'skipped';
  if (runs >= BATCH_JOB_MAX_RUNS)
    return failRun(runtime, job, runs, {
      code: 'INTERNAL_ERROR',
      detail: `The batch stopped ${runs} times before it was written; generate it again.`,
    });
  const run = runs + 1;
  if (!(await claimBatchJobRun(runtime.store, job, run, nowMs))) return 'skipped';
  const { project_id: projectId, plan_id: planId } = job.request;
  try {
    if (job.batch_id) await deleteBatchCodes(runtime, job.team_id, projectId, job.batch_id);
    const plan = await requirePlanOfProject(runtime.store, { teamId: job.team_id }, projectId, planId);
    await writeBatch(runtime, job.team_id, plan, job.request, generationJob(runtime, job, run));
    return 'access_code_batch_completed';
  } catch (error) {
    const problem =
      error instanceof ProblemError
        ? { code: error.code, detail: error.detail }
        : { code: 'INTERNAL_ERROR', detail: 'The codes could not be written; generate the batch again.' };
    const outcome = await failRun(runtime, job, run, problem);
    if (outcome === 'access_code_batch_failed' && !(error instanceof ProblemError))
      logger.error('access code batch job failed', { job_id: job.id, error: error as Error });
    return outcome;
  }
}
