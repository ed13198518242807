import type { Principal } from '../../auth/principal.js';
import { canAccessProject } from '../../auth/authorize.js';
import { isoTime } from '../../clock.js';
import { newWrappedDataKey, openSecret } from '../../credentials/envelope.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { integrationsOf } from '../../integrations.js';
import type { Runtime } from '../../runtime.js';
import {
  deleteBatchCodes,
  endRunningJob,
  loadBatchJob,
  putBatchJob,
  takeSealedCodes,
} from '../../store/access-codes/jobs.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import {
  BATCH_JOB_TTL_SECONDS,
  batchJobContext,
  publicBatchJob,
  type AccessCodeBatchJob,
  type StoredAccessCodeBatchJob,
} from './batch-job.js';
import { checkGeneration, type GenerateAccessCodesInput } from './generation.js';
import type { AccessCodeBatch, GeneratedAccessCodes } from './schema.js';
import { ttlAttribute } from '../../store/ttl.js';

/**
 * Access-code batches generated in the background (DESIGN D5, D18): a job is started by `generate_access_codes` over
 * MCP 2026-07-28 with the Tasks extension and more than 100 codes, run by `batch-job-worker.ts` off the delivery queue,
 * read and cancelled as a task. The codes are sealed on the job item until the first read of the completed job takes
 * them.
 */

/** A job as a task reads it: the job and, once completed, the tool's result (codes empty when taken before). */
export interface BatchJobRead {
  job: AccessCodeBatchJob;
  /** The completed job's result: `shown` is true when this read took the codes, false when an earlier one had. */
  result: { generated: GeneratedAccessCodes; shown: boolean } | null;
}

/**
 * Checks the request like an inline generation, then stores a `running` job (with a new wrapped data key for its codes)
 * and queues its `access_code_batch` message. Returns the job. Errors: NOT_FOUND, VALIDATION_FAILED, CONFLICT.
 */
export async function startBatchJob(
  runtime: Runtime,
  principal: Principal,
  input: GenerateAccessCodesInput,
): Promise<AccessCodeBatchJob> {
  await checkGeneration(runtime, principal, input);
  const nowMs = runtime.clock.nowMs();
  const now = isoTime(nowMs);
  const id = newUuid();
  const teamId = principal.teamId;
  const job: StoredAccessCodeBatchJob = {
    id,
    status: 'running',
    project_id: input.project_id,
    requested: input.count,
    written: 0,
    batch_id: null,
    problem: null,
    created_at: now,
    updated_at: now,
    team_id: teamId,
    request: input,
    data_key: await newWrappedDataKey(integrationsOf(runtime).keyEncryptionKey, batchJobContext(teamId, id)),
    expires_at: ttlAttribute(nowMs, BATCH_JOB_TTL_SECONDS),
  };
  await unitOfWork(runtime, teamId, (tx) => putBatchJob(tx, job));
  await runtime.deliveryQueue.send([{ kind: 'access_code_batch', team_id: teamId, job_id: id }], 0);
  return publicBatchJob(job);
}

/** The principal's job, unexpired; NOT_FOUND when absent, expired, of another team or outside its project scope. */
async function requireJob(
  runtime: Pick<Runtime, 'store' | 'clock'>,
  principal: Principal,
  jobId: string,
): Promise<StoredAccessCodeBatchJob> {
  const job = await loadBatchJob(runtime.store, principal.teamId, jobId);
  if (!job || job.expires_at * 1000 <= runtime.clock.nowMs() || !canAccessProject(principal, job.project_id))
    throw new ProblemError('NOT_FOUND', `No access code batch job ${jobId}.`);
  return job;
}

/**
 * Reads a job of the principal's team; with `take`, a completed job's result too, its codes only for the one read that
 * takes them off the item (then never stored again). Errors: NOT_FOUND.
 */
export async function readBatchJob(
  runtime: Runtime,
  principal: Principal,
  jobId: string,
  take: boolean,
): Promise<BatchJobRead> {
  const job = await requireJob(runtime, principal, jobId);
  if (!take || job.status !== 'completed' || !job.batch) return { job: publicBatchJob(job), result: null };
  const batch: AccessCodeBatch = job.batch;
  const sealed = await takeSealedCodes(runtime.store, principal.teamId, jobId);
  if (!sealed) return { job: publicBatchJob(job), result: { generated: { batch, codes: [] }, shown: false } };
  const opened = await openSecret(
    integrationsOf(runtime).keyEncryptionKey,
    sealed,
    batchJobContext(principal.teamId, jobId),
  );
  const generated = JSON.parse(opened) as GeneratedAccessCodes;
  return { job: publicBatchJob(job), result: { generated: { batch, codes: generated.codes }, shown: true } };
}

/**
 * Cancels a running job of the principal's team: no further chunk of its batch is written, and what was written is
 * deleted (no batch of it is ever active). A job cancelled before is returned as it is (its leftovers deleted again).
 * Errors: NOT_FOUND; CONFLICT when the job completed or failed.
 */
export async function cancelBatchJob(
  runtime: Runtime,
  principal: Principal,
  jobId: string,
): Promise<AccessCodeBatchJob> {
  const found = await requireJob(runtime, principal, jobId);
  const job =
    (await endRunningJob(
      runtime.store,
      principal.teamId,
      jobId,
      { status: 'cancelled' },
      isoTime(runtime.clock.nowMs()),
    )) ?? (await requireJob(runtime, principal, jobId));
  if (job.status !== 'cancelled')
    throw new ProblemError(
      'CONFLICT',
      `Access code batch job ${jobId} is ${job.status}; only a running job can be cancelled.`,
    );
  if (job.batch_id) await deleteBatchCodes(runtime, principal.teamId, found.project_id, job.batch_id);
  return publicBatchJob(job);
}
