import { SealedSecret } from '../../credentials/envelope.js';
import { Timestamp, Uuid } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { AccessCodeBatch, GenerateAccessCodesRequest } from './schema.js';

/**
 * A batch generation run in the background (an MCP task, DESIGN D5, D18): `running` until the batch is active
 * (`completed`), stopped by a cancel (`cancelled`, nothing of it left active) or by an error (`failed`, with its
 * problem). The codes themselves are kept sealed on the job item until the first read of the completed task.
 */
const BATCH_JOB_STATUSES = ['running', 'completed', 'failed', 'cancelled'] as const;

/** Batches above this many codes run as a task for a client that declares the Tasks extension. */
export const INLINE_BATCH_MAX = 100;

/** Runs of the worker a job may take (the first and the sweeper's restarts of a stopped one); then it fails. */
export const BATCH_JOB_MAX_RUNS = 3;

/** How long a job item (and so its sealed codes) is kept (SECONDS): the table's TTL deletes it after. */
export const BATCH_JOB_TTL_SECONDS = 24 * 3600;

/** A batch job's public view: its progress, the batch once written and, once failed, the problem. */
export const AccessCodeBatchJob = z.object({
  id: Uuid,
  status: z.enum(BATCH_JOB_STATUSES),
  project_id: Uuid,
  requested: z.number().check(z.int(), z.positive(), z.describe('Codes requested.')),
  written: z.number().check(z.int(), z.nonnegative(), z.describe('Codes written so far.')),
  batch_id: z.nullable(Uuid).check(z.describe('The batch being written (active once completed), or null before.')),
  problem: z.nullable(z.object({ code: z.string(), detail: z.string() })),
  created_at: Timestamp,
  updated_at: Timestamp,
});
/** See {@link AccessCodeBatchJob}. */
export type AccessCodeBatchJob = z.infer<typeof AccessCodeBatchJob>;

/** `{id}` of a batch job. */
export const AccessCodeBatchJobIdParams = z.strictObject({ id: Uuid.check(z.describe('The batch job id.')) });

/**
 * A batch job item as stored (`keys.accessCodeBatchJob`): the public view, its team, the validated request (defaults
 * applied), the wrapped data key its codes are sealed with (made when the job starts: the worker only opens keys), the
 * runs of the worker so far (`runs`, absent before the first), the sealed codes (the tool's result, from completion to
 * the first read), the batch once completed and `expires_at`, the TTL (epoch SECONDS).
 */
const StoredAccessCodeBatchJobRecord = z.extend(AccessCodeBatchJob, {
  team_id: Uuid,
  request: z.extend(z.omit(GenerateAccessCodesRequest, { prefix: true }), {
    project_id: Uuid,
    prefix: z.optional(z.string()),
  }),
  data_key: z.string(),
  runs: z.optional(z.number().check(z.int(), z.nonnegative())),
  sealed_codes: z.optional(SealedSecret),
  batch: z.optional(AccessCodeBatch),
  expires_at: z.number(),
});
/** A stored batch job (see {@link StoredAccessCodeBatchJobRecord}). */
export type StoredAccessCodeBatchJob = z.output<typeof StoredAccessCodeBatchJobRecord>;

/** Parses a batch job item (throws StoredRecordError naming its key, never a value, when it does not match). */
export const parseStoredAccessCodeBatchJob = recordParser(entity.accessCodeBatchJob, StoredAccessCodeBatchJobRecord);

/** The public view of a stored job. */
export function publicBatchJob(job: StoredAccessCodeBatchJob): AccessCodeBatchJob {
  const { id, status, project_id, requested, written, batch_id, problem, created_at, updated_at } = job;
  return { id, status, project_id, requested, written, batch_id, problem, created_at, updated_at };
}

/** The encryption context of a job's sealed codes: its team and id (a sealed value copied elsewhere does not open). */
export function batchJobContext(teamId: string, jobId: string): Readonly<Record<string, string>> {
  return { kind: 'access_code_batch_job', team_id: teamId, job_id: jobId };
}
