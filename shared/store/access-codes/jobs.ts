import type { SealedSecret } from '../../credentials/envelope.js';
import { parseStoredAccessCodeBatchJob, type StoredAccessCodeBatchJob } from '../../domain/access-codes/batch-job.js';
import type { AccessCodeBatch } from '../../domain/access-codes/schema.js';
import type { ProblemError } from '../../errors.js';
import { ITEM_ABSENT, conditionally } from '../expressions.js';
import { entity, keys, sortKeyPrefix } from '../keys.js';
import type { Key } from '../requests.js';
import { ConditionFailedError, type Store } from '../store.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../unit-of-work.js';

/**
 * Access-code batch jobs' persistence (DESIGN D14, D18): one item per job in its team's partition
 * (`ACCESS_CODE_BATCH_JOB#<uuid>`, TTL `expires_at`). Every write of a running job is conditional on it still running,
 * so a cancel (or a failure) stops the next chunk of its batch; the sealed codes leave the item in the read that takes
 * them.
 */

/** The condition of every write a running job makes. */
const RUNNING = { condition: '#status = :running', names: { '#status': 'status' } };

/**
 * Codes deleted per transaction by {@link deleteBatchCodes}: two items each (code, reference), leaving room under
 * DynamoDB's 100 items for the request's own (activity entry, billing guard).
 */
const CODES_PER_DELETE = 40;

/** Adds the put of a new job (`running`). */
export function putBatchJob(tx: Transaction, job: StoredAccessCodeBatchJob): void {
  tx.put(
    { ...keys.accessCodeBatchJob(job.team_id, job.id), entity: entity.accessCodeBatchJob, ...job },
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
 * Adds a running job's update at `now` (ISO 8601): `batchId` recorded (`written` back to 0), or `written` raised by
 * `count`, or `sealed` codes and the `batch` stored with status `completed`; `stopped` answers a job no longer running.
 */
export function updateRunningJob(
  tx: Transaction,
  job: Pick<StoredAccessCodeBatchJob, 'team_id' | 'id'>,
  change: { batchId: string } | { count: number } | { sealed: SealedSecret; batch: AccessCodeBatch },
  now: string,
  stopped: () => ProblemError,
): void {
  const values: Record<string, unknown> = { ':running': 'running', ':now': now };
  let expression: string;
  if ('batchId' in change) {
    expression = 'SET batch_id = :batch, written = :zero, updated_at = :now';
    values[':zero'] = 0;
    values[':batch'] = change.batchId;
  } else if ('count' in change) {
    expression = 'SET updated_at = :now ADD written :count';
    values[':count'] = change.count;
  } else {
    expression = 'SET #status = :completed, sealed_codes = :sealed, #batch = :batch, updated_at = :now';
    values[':completed'] = 'completed';
    values[':sealed'] = change.sealed;
    values[':batch'] = change.batch;
  }
  tx.update(keys.accessCodeBatchJob(job.team_id, job.id), {
    expression,
    condition: RUNNING.condition,
    names: 'sealed' in change ? { ...RUNNING.names, '#batch': 'batch' } : RUNNING.names,
    values,
    onConditionFailed: stopped,
  });
}

/**
 * Ends a running job at `now` (ISO 8601) as `cancelled`, or `failed` with `problem`. Returns the job as it is after,
 * or null when it was not running (absent, completed, failed or cancelled before).
 */
export async function endRunningJob(
  store: Store,
  teamId: string,
  jobId: string,
  end: { status: 'cancelled' } | { status: 'failed'; problem: { code: string; detail: string } },
  now: string,
): Promise<StoredAccessCodeBatchJob | null> {
  try {
    const item = await store.update({
      Key: keys.accessCodeBatchJob(teamId, jobId),
      UpdateExpression: `SET #status = :end, updated_at = :now${end.status === 'failed' ? ', problem = :problem' : ''}`,
      ConditionExpression: RUNNING.condition,
      ExpressionAttributeNames: RUNNING.names,
      ExpressionAttributeValues: {
        ':running': 'running',
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
 * Deletes what a stopped job's batch wrote: the batch discarded first (if still pending), then every code item of the
 * batch with its reference item, then the batch item. Lookup items (keyed by the code's digest, not kept on the code)
 * stay, pointing at no code. Returns the number of codes deleted.
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
      ProjectionExpression: 'id',
      ConsistentRead: true,
      ExclusiveStartKey: startKey,
    });
    const ids = page.items.map((item) => String(item.id));
    // One transaction at a time: the first of a request also takes the request's own items.
    for (let index = 0; index < ids.length; index += CODES_PER_DELETE)
      await unitOfWork(runtime, teamId, (tx) => {
        for (const id of ids.slice(index, index + CODES_PER_DELETE)) {
          tx.delete(keys.accessCode(teamId, projectId, batchId, id));
          tx.delete(keys.accessCodeRef(teamId, id), { condition: 'batch_id = :batch', values: { ':batch': batchId } });
        }
      });
    deleted += ids.length;
    startKey = page.lastEvaluatedKey;
  } while (startKey);
  await runtime.store.delete({ Key: batchKey });
  return deleted;
}
