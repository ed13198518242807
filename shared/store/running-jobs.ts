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
