import { isoTime } from '../../clock.js';
import { sealSecretWithKey } from '../../credentials/envelope.js';
import { ProblemError } from '../../errors.js';
import { integrationsOf } from '../../integrations.js';
import { logger } from '../../logger.js';
import type { AccessCodeBatchMessage, Runtime } from '../../runtime.js';
import { endRunningJob, loadBatchJob, updateRunningJob } from '../../store/access-codes/jobs.js';
import { discardPendingBatch } from '../../store/access-codes/writes.js';
import { ConditionFailedError } from '../../store/store.js';
import { batchJobContext, type StoredAccessCodeBatchJob } from './batch-job.js';
import { writeBatch, type GenerationJob } from './generation.js';
import { requirePlanOfProject } from './plan.js';

/**
 * The access-code batch worker (DESIGN D5, D18): one `access_code_batch` message runs a job's whole generation, its
 * chunks written one at a time, each raising the job's `written` in its own transaction on condition that the job
 * still runs (a cancel stops the next chunk); the batch turns active with the job `completed` and its codes sealed.
 * A message run again for a job still running (a crash) discards the batch it had begun and starts a new one.
 */

/** What one `access_code_batch` message did. */
export type AccessCodeBatchOutcome =
  'access_code_batch_completed' | 'access_code_batch_cancelled' | 'access_code_batch_failed' | 'skipped';

/** The problem of a chunk written after the job stopped. */
const stopped = (jobId: string) => () =>
  new ProblemError('CONFLICT', `Access code batch job ${jobId} is no longer running.`);

/** The {@link GenerationJob} hooks of `job`: its progress and completion in the batch's transactions. */
function generationJob(runtime: Runtime, job: StoredAccessCodeBatchJob): GenerationJob {
  const now = () => isoTime(runtime.clock.nowMs());
  return {
    begin: (tx, batch) => updateRunningJob(tx, job, { batchId: batch.id }, now(), stopped(job.id)),
    wrote: (tx, count) => updateRunningJob(tx, job, { count }, now(), stopped(job.id)),
    complete: async (generated) => {
      const sealed = await sealSecretWithKey(
        integrationsOf(runtime).keyEncryptionKey,
        job.data_key,
        JSON.stringify(generated),
        batchJobContext(job.team_id, job.id),
      );
      return (tx) => updateRunningJob(tx, job, { sealed, batch: generated.batch }, now(), stopped(job.id));
    },
  };
}

/**
 * Runs the job of an `access_code_batch` message to its end: completed, cancelled meanwhile, or failed (its problem
 * recorded; never the codes). Returns the {@link AccessCodeBatchOutcome}; throws only on store errors while recording
 * a failure.
 */
export async function processAccessCodeBatch(
  runtime: Runtime,
  message: AccessCodeBatchMessage,
): Promise<AccessCodeBatchOutcome> {
  const job = await loadBatchJob(runtime.store, message.team_id, message.job_id);
  if (!job || job.status !== 'running') return 'skipped';
  const { project_id: projectId, plan_id: planId } = job.request;
  if (job.batch_id)
    await discardPendingBatch(runtime.store, job.team_id, projectId, job.batch_id).catch((error: unknown) => {
      if (!(error instanceof ConditionFailedError)) throw error;
    });
  try {
    const plan = await requirePlanOfProject(runtime.store, { teamId: job.team_id }, projectId, planId);
    await writeBatch(runtime, job.team_id, plan, job.request, generationJob(runtime, job));
    return 'access_code_batch_completed';
  } catch (error) {
    const problem =
      error instanceof ProblemError
        ? { code: error.code, detail: error.detail }
        : { code: 'INTERNAL_ERROR', detail: 'The codes could not be written; generate the batch again.' };
    const failed = await endRunningJob(
      runtime.store,
      job.team_id,
      job.id,
      { status: 'failed', problem },
      isoTime(runtime.clock.nowMs()),
    );
    if (!failed) return 'access_code_batch_cancelled';
    if (!(error instanceof ProblemError))
      logger.error('access code batch job failed', { job_id: job.id, error: error as Error });
    return 'access_code_batch_failed';
  }
}
