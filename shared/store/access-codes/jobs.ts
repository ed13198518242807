import { isoTime } from '../../clock.js';
import type { SealedSecret } from '../../credentials/envelope.js';
import { parseStoredAccessCodeBatchJob, type StoredAccessCodeBatchJob } from '../../domain/access-codes/batch-job.js';
import { parseStoredAccessCodeKeys } from '../../domain/access-codes/record.js';
import type { AccessCodeBatch } from '../../domain/access-codes/schema.js';
import type { ProblemError } from '../../errors.js';
import { ITEM_ABSENT, conditionally } from '../expressions.js';
import { entity, keys, secondaryIndex, sortKeyPrefix } from '../keys.js';
import { pageStalled, runningSortKey, type StalledPage } from '../running-jobs.js';
import type { Key } from '../requests.js';
import { ConditionFailedError, type Store } from '../store.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../unit-of-work.js';

/**
 * Access-code batch jobs' persistence (DESIGN D14, D18): one item per job in its team's partition
 * (`ACCESS_CODE_BATCH_JOB#<uuid>`, TTL `expires_at`). While running, a job is in the sparse running-jobs index by the
 * time of its last progress, so the sweeper restarts a job whose worker stopped. Each run of the worker claims the job
 * (`runs` raised by one) and every write of a run is conditional on the job still running that run, so a cancel, a
 * failure or a newer run stops the next chunk of its batch; the sealed codes leave the item in the read that takes
 * them.
 */

const INDEX_PK = secondaryIndex.partitionKey;
const INDEX_SK = secondaryIndex.sortKey;

/** The condition of every write of run `run` of a job: still running, and that run its latest. */
function runningRun(run: number) {
  return {
    condition: `#status = :running AND ${run === 0 ? 'attribute_not_exists(runs)' : 'runs = :run'}`,
    names: { '#status': 'status' },
    values: { ':running': 'running', ...(run === 0 ? {} : { ':run': run }) },
  };
}

/**
 * Codes deleted per transaction by {@link deleteBatchCodes}: three items each (code, lookup, reference), leaving room
 * under DynamoDB's 100 items for the request's own (activity entry, billing guard).
 */
const CODES_PER_DELETE = 30;

/** Adds the put of a new job (`running`, in the running-jobs index as of its `updated_at`). */
export function putBatchJob(tx: Transaction, job: StoredAccessCodeBatchJob): void {
  tx.put(
    {
      ...keys.accessCodeBatchJob(job.team_id, job.id),
      entity: entity.accessCodeBatchJob,
      ...job,
      [INDEX_PK]: keys.runningAccessCodeBatchJobsIndex,
      [INDEX_SK]: runningSortKey(Date.parse(job.updated_at), job.id),
    },
    { condition: ITEM_ABSENT },
  );
}

/** The stored job (strongly consistent) or null. Throws StoredRecordError for an item that does not match. */
export async function loadBatchJob(
  store: Store,
  teamId: string,
  jobId: string,
): Promise<StoredAccessCodeBatchJob | null> {
  const item = await store.get(keys.accessCodeBatchJob(teamId, jobId), { consistent: true });
  return item ? parseStoredAccessCodeBatchJob(item) : null;
}

/**
 * Claims a running job for the worker's run `run` (its `runs` + 1, as read) at `nowMs` (epoch ms): `runs` becomes
 * `run`, which stops every write of an earlier run. False when the job stopped or another run claimed it meanwhile.
 */
export function claimBatchJobRun(
  store: Store,
  job: StoredAccessCodeBatchJob,
  run: number,
  nowMs: number,
): Promise<boolean> {
  const seen = runningRun(job.runs ?? 0);
  return conditionally(
    store.update({
      Key: keys.accessCodeBatchJob(job.team_id, job.id),
      UpdateExpression: `SET runs = :next, updated_at = :now, ${INDEX_SK} = :sort`,
      ConditionExpression: seen.condition,
      ExpressionAttributeNames: seen.names,
      ExpressionAttributeValues: {
        ...seen.values,
        ':next': run,
        ':now': isoTime(nowMs),
        ':sort': runningSortKey(nowMs, job.id),
      },
    }),
  );
}

/**
 * Adds an update of run `run` of a running job at `now` (ISO 8601): `batchId` recorded (`written` back to 0), or
 * `written` raised by `count` (both progress in the running-jobs index), or `sealed` codes and the `batch` stored with
 * status `completed` (out of the index); `stopped` answers a job no longer running that run.
 */
export function updateRunningJob(
  tx: Transaction,
  job: Pick<StoredAccessCodeBatchJob, 'team_id' | 'id'> & { run: number },
  change: { batchId: string } | { count: number } | { sealed: SealedSecret; batch: AccessCodeBatch },
  now: string,
  stopped: () => ProblemError,
): void {
  const running = runningRun(job.run);
  const values: Record<string, unknown> = { ...running.values, ':now': now };
  let expression: string;
  if ('sealed' in change) {
    expression = `SET #status = :completed, sealed_codes = :sealed, #batch = :batch, updated_at = :now REMOVE ${INDEX_PK}, ${INDEX_SK}`;
    values[':completed'] = 'completed';
    values[':sealed'] = change.sealed;
    values[':batch'] = change.batch;
  } else {
    values[':sort'] = runningSortKey(Date.parse(now), job.id);
    if ('batchId' in change) {
      expression = `SET batch_id = :batch, written = :zero, updated_at = :now, ${INDEX_SK} = :sort`;
      values[':zero'] = 0;
      values[':batch'] = change.batchId;
    } else {
      expression = `SET updated_at = :now, ${INDEX_SK} = :sort ADD written :count`;
      values[':count'] = change.count;
    }
  }
  tx.update(keys.accessCodeBatchJob(job.team_id, job.id), {
    expression,
    condition: running.condition,
    names: 'sealed' in change ? { ...running.names, '#batch': 'batch' } : running.names,
    values,
    onConditionFailed: stopped,
  });
}

/**
 * Ends a running job at `now` (ISO 8601) as `cancelled`, or `failed` with `problem`, taking it out of the running-jobs
 * index; with `run`, only while that run is its latest. Returns the job as it is after, or null when it was not running
 * (absent, completed, failed or cancelled before) or another run had claimed it.
 */
export async function endRunningJob(
  store: Store,
  teamId: string,
  jobId: string,
  end: { status: 'cancelled' } | { status: 'failed'; problem: { code: string; detail: string }; run?: number },
  now: string,
): Promise<StoredAccessCodeBatchJob | null> {
  const running =
    end.status === 'failed' && end.run !== undefined
      ? runningRun(end.run)
      : { condition: '#status = :running', names: { '#status': 'status' }, values: { ':running': 'running' } };
  try {
    const item = await store.update({
      Key: keys.accessCodeBatchJob(teamId, jobId),
      UpdateExpression: `SET #status = :end, updated_at = :now${end.status === 'failed' ? ', problem = :problem' : ''} REMOVE ${INDEX_PK}, ${INDEX_SK}`,
      ConditionExpression: running.condition,
      ExpressionAttributeNames: running.names,
      ExpressionAttributeValues: {
        ...running.values,
        ':end': end.status,
        ':now': now,
        ...(end.status === 'failed' ? { ':problem': end.problem } : {}),
      },
      ReturnValues: 'ALL_NEW',
    });
    return item ? parseStoredAccessCodeBatchJob(item) : null;
  } catch (error) {
    if (error instanceof ConditionFailedError) return null;
    throw error;
  }
}

/** Running jobs (of any team) whose last progress is older than `beforeMs` (epoch ms): one page (≤ 100). */
export function pageStalledBatchJobs(
  store: Store,
  beforeMs: number,
  startKey: Key | undefined,
): Promise<StalledPage<StoredAccessCodeBatchJob>> {
  return pageStalled(store, keys.runningAccessCodeBatchJobsIndex, beforeMs, startKey, parseStoredAccessCodeBatchJob);
}

/**
 * Takes a completed job's sealed codes off its item: one conditional write, so of concurrent readers exactly one gets
 * them. Null when they were taken before (or the job holds none).
 */
export async function takeSealedCodes(store: Store, teamId: string, jobId: string): Promise<SealedSecret | null> {
  try {
    const old = await store.update({
      Key: keys.accessCodeBatchJob(teamId, jobId),
      UpdateExpression: 'REMOVE sealed_codes',
      ConditionExpression: 'attribute_exists(sealed_codes)',
      ReturnValues: 'ALL_OLD',
    });
    return old ? (parseStoredAccessCodeBatchJob(old).sealed_codes ?? null) : null;
  } catch (error) {
    if (error instanceof ConditionFailedError) return null;
    throw error;
  }
}

/**
 * The partition keys {@link deleteBatchCodes} deletes in, as IAM `dynamodb:LeadingKeys` patterns (`*` for each id): a
 * project's codes and batches, a code's lookup, a code's reference. The batch worker may delete only there.
 */
export const BATCH_CODE_PARTITION_PATTERNS: readonly string[] = [
  keys.accessCodePartition('*', '*'),
  keys.accessCodeLookup('*', '*', '*').pk,
  keys.accessCodeRef('*', '*').pk,
];

/**
 * Deletes what a stopped job's batch wrote: the batch discarded first (if still pending), then every code item of the
 * batch with its lookup (by the code item's `code_sha256`) and reference items, each only while of this batch, then the
 * batch item. Returns the number of codes deleted.
 */
export async function deleteBatchCodes(
  runtime: UnitOfWorkRuntime,
  teamId: string,
  projectId: string,
  batchId: string,
): Promise<number> {
  const batchKey = keys.accessCodeBatch(teamId, projectId, batchId);
  await conditionally(
    runtime.store.update({
      Key: batchKey,
      UpdateExpression: 'SET #state = :discarded',
      ConditionExpression: '#state = :pending',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':discarded': 'discarded', ':pending': 'pending' },
    }),
  );
  let deleted = 0;
  let startKey: Key | undefined;
  do {
    const page = await runtime.store.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: {
        ':pk': keys.accessCodePartition(teamId, projectId),
        ':prefix': sortKeyPrefix.accessCodeInBatch(batchId),
      },
      ProjectionExpression: 'id, code_sha256',
      ConsistentRead: true,
      ExclusiveStartKey: startKey,
    });
    const codes = page.items.map(parseStoredAccessCodeKeys);
    const ofBatch = { condition: 'batch_id = :batch', values: { ':batch': batchId } };
    // One transaction at a time: the first of a request also takes the request's own items.
    for (let index = 0; index < codes.length; index += CODES_PER_DELETE)
      await unitOfWork(runtime, teamId, (tx) => {
        for (const code of codes.slice(index, index + CODES_PER_DELETE)) {
          tx.delete(keys.accessCode(teamId, projectId, batchId, code.id));
          if (code.code_sha256) tx.delete(keys.accessCodeLookup(teamId, projectId, code.code_sha256), ofBatch);
          tx.delete(keys.accessCodeRef(teamId, code.id), ofBatch);
        }
      });
    deleted += codes.length;
    startKey = page.lastEvaluatedKey;
  } while (startKey);
  await runtime.store.delete({ Key: batchKey });
  return deleted;
}
