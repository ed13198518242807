import { secondaryIndex } from './keys.js';
import { isoTime } from '../clock.js';
import { ITEM_ABSENT } from './expressions.js';
import type { Item, Key, TransactionItem, UpdateRequest } from './requests.js';
import type { Store } from './store.js';

/**
 * The running-jobs index of the resumable jobs (DESIGN D14, D25, D32, D34: webhook replays, broadcasts, imports,
 * access audits): while a job is to finish, its item is in its kind's partition of the sparse secondary index, sorted
 * by the time of its last progress, so the sweeper finds and restarts a job whose worker stopped.
 */

/** The index sort key of an unfinished job: the epoch MILLISECONDS of its last progress, zero-padded, then its id. */
export function runningSortKey(atMs: number, jobId: string): string {
  return `${String(Math.floor(atMs)).padStart(15, '0')}#${jobId}`;
}

/**
 * The put of a new job's item (`key`, `entity` and the job's attributes) in index partition `partition`, its progress
 * at `nowMs` (epoch ms), on condition that no item has its key.
 */
export function newRunningJobPut(
  key: Key,
  entity: string,
  job: { id: string },
  partition: string,
  nowMs: number,
): TransactionItem {
  return {
    Put: {
      Item: {
        ...key,
        entity,
        ...job,
        [secondaryIndex.partitionKey]: partition,
        [secondaryIndex.sortKey]: runningSortKey(nowMs, job.id),
      },
      ConditionExpression: ITEM_ABSENT,
    },
  };
}

/** One page of stalled jobs: the parsed items and the key to continue from (undefined after the last page). */
export interface StalledPage<T> {
  items: T[];
  lastEvaluatedKey: Key | undefined;
}

/**
 * The jobs of index partition `partition` (of any team) whose last progress is older than `beforeMs` (epoch ms), oldest
 * first: one page (≤ 100) from `startKey`, each item read by `parse` (which throws on an item that does not match).
 */
export async function pageStalled<T>(
  store: Store,
  partition: string,
  beforeMs: number,
  startKey: Key | undefined,
  parse: (item: Item) => T,
): Promise<StalledPage<T>> {
  const result = await store.query({
    IndexName: secondaryIndex.name,
    KeyConditionExpression: `${secondaryIndex.partitionKey} = :index AND ${secondaryIndex.sortKey} < :limit`,
    ExpressionAttributeValues: { ':index': partition, ':limit': runningSortKey(beforeMs, '') },
    ExclusiveStartKey: startKey,
    Limit: 100,
  });
  return { items: result.items.map(parse), lastEvaluatedKey: result.lastEvaluatedKey };
}

/**
 * The update that marks an unfinished job (`queued` or `running`) at `key` `failed` with `error` at `nowMs` (epoch ms)
 * and takes it out of the running-jobs index; alone or in a transaction, its condition fails when the job finished.
 */
export function failedJobUpdate(key: Key, error: string, nowMs: number): UpdateRequest {
  return {
    Key: key,
    UpdateExpression: `SET #status = :failed, #error = :error, completed_at = :now, updated_at = :now REMOVE ${secondaryIndex.partitionKey}, ${secondaryIndex.sortKey}`,
    ConditionExpression: '#status = :queued OR #status = :running',
    ExpressionAttributeNames: { '#status': 'status', '#error': 'error' },
    ExpressionAttributeValues: {
      ':failed': 'failed',
      ':error': error,
      ':now': isoTime(nowMs),
      ':queued': 'queued',
      ':running': 'running',
    },
  };
}

/** What the batch updates need of a job: its id and how many batches it has done. */
interface BatchedJob {
  id: string;
  batches: number;
}

/**
 * The update that records the batch a worker of the job at `key` is about to run (`batch`, and `next`, the cursor
 * after it) at `nowMs` (epoch ms), on condition that the job is running, has done exactly `job.batches` batches and has
 * no batch in progress (a second worker of the same batch writes nothing).
 */
export function batchStartUpdate(
  key: Key,
  job: BatchedJob,
  batch: unknown,
  next: Key | undefined,
  nowMs: number,
): UpdateRequest {
  return {
    Key: key,
    UpdateExpression: `SET #batch = :batch, batch_next = :next, updated_at = :now, ${secondaryIndex.sortKey} = :sort`,
    ConditionExpression: '#status = :running AND batches = :batches AND attribute_not_exists(#batch)',
    ExpressionAttributeNames: { '#status': 'status', '#batch': 'batch' },
    ExpressionAttributeValues: {
      ':batch': batch,
      ':next': next ?? null,
      ':now': isoTime(nowMs),
      ':sort': runningSortKey(nowMs, job.id),
      ':running': 'running',
      ':batches': job.batches,
    },
  };
}

/**
 * The update that records one finished batch of the job at `key` at `nowMs` (epoch ms): each of `counts` (attribute →
 * amount; names that are not DynamoDB reserved words) grows by its amount and the cursor moves to `next` (undefined:
 * the job is `completed` and leaves the running-jobs index), on condition that the job is running and has done exactly
 * `job.batches` batches.
 */
export function batchProgressUpdate(
  key: Key,
  job: BatchedJob,
  counts: Readonly<Record<string, number>>,
  next: Key | undefined,
  nowMs: number,
): UpdateRequest {
  const finished = next === undefined;
  const names = Object.keys(counts);
  const add = names.map((name) => `${name} :${name}`).join(', ');
  const { partitionKey, sortKey } = secondaryIndex;
  return {
    Key: key,
    UpdateExpression: finished
      ? `SET #status = :completed, completed_at = :now, updated_at = :now, #cursor = :null, batches = :next_batch ADD ${add} REMOVE ${partitionKey}, ${sortKey}, #batch, batch_next`
      : `SET updated_at = :now, #cursor = :cursor, batches = :next_batch, ${sortKey} = :sort ADD ${add} REMOVE #batch, batch_next`,
    ConditionExpression: '#status = :running AND batches = :batches',
    ExpressionAttributeNames: { '#status': 'status', '#cursor': 'cursor', '#batch': 'batch' },
    ExpressionAttributeValues: {
      ':now': isoTime(nowMs),
      ':next_batch': job.batches + 1,
      ':batches': job.batches,
      ':running': 'running',
      ...Object.fromEntries(names.map((name) => [`:${name}`, counts[name]])),
      ...(finished
        ? { ':completed': 'completed', ':null': null }
        : { ':cursor': next, ':sort': runningSortKey(nowMs, job.id) }),
    },
  };
}
