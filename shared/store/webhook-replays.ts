import { isoTime } from '../clock.js';
import { parseStoredReplayJob, type StoredReplayJob } from '../domain/webhook-replays/record.js';
import type { ReplayCandidate } from './webhook-deliveries/requeues.js';
import {
  batchProgressUpdate,
  batchStartUpdate,
  pageStalled,
  runningSortKey,
  type StalledPage,
} from './running-jobs.js';
import { entity, keys, secondaryIndex } from './keys.js';
import type { Store } from './store.js';
import type { Item, Key } from './requests.js';
import { ITEM_ABSENT, conditionally } from './expressions.js';

/**
 * The replay job item's persistence (DESIGN D25, D14): one item per job in its team's partition
 * (`TEAM#<team>`, `WEBHOOK_REPLAY#<uuid>`); while it runs it is also in the sparse running-replays index, by
 * the time of its last progress, so the sweeper restarts a job whose worker stopped.
 */

const INDEX_PK = secondaryIndex.partitionKey;
const INDEX_SK = secondaryIndex.sortKey;

/**
 * The replay job store adapter: a job's creation and read, its batches' progress, its cancellation, and stalled jobs
 * (for the sweeper); every method takes the Store port.
 */
export const replayJobStore = {
  /** Stores a new job at `nowMs` (epoch ms); a `running` one also enters the running-replays index. */
  async create(store: Store, job: StoredReplayJob, nowMs: number): Promise<void> {
    const item: Item = { ...keys.webhookReplay(job.team_id, job.id), entity: entity.webhookReplay, ...job };
    if (job.status === 'running')
      Object.assign(item, { [INDEX_PK]: keys.runningReplaysIndex, [INDEX_SK]: runningSortKey(nowMs, job.id) });
    await store.put({ Item: item, ConditionExpression: ITEM_ABSENT });
  },

  /** The stored job (strongly consistent) or null. Throws StoredRecordError for an item that does not match. */
  async load(store: Store, teamId: string, replayId: string): Promise<StoredReplayJob | null> {
    const item = await store.get(keys.webhookReplay(teamId, replayId), { consistent: true });
    return item ? parseStoredReplayJob(item) : null;
  },

  /**
   * Records the batch a worker is about to run (its deliveries and the cursor after it) and the progress time, on
   * condition that the job is running, has done `job.batches` batches and has no batch in progress. False when not.
   */
  recordBatchStart(
    store: Store,
    job: StoredReplayJob,
    batch: readonly ReplayCandidate[],
    next: Key | undefined,
    nowMs: number,
  ): Promise<boolean> {
    return conditionally(
      store.update(batchStartUpdate(keys.webhookReplay(job.team_id, job.id), job, batch, next, nowMs)),
    );
  },

  /**
   * Records one finished batch: `replayed` grows by `replayed`, the cursor moves to `next` (undefined: the job is
   * `completed` and leaves the running index), on condition that the job has done exactly `job.batches` batches
   * (a duplicate worker of the same batch writes nothing). False when that condition failed.
   */
  recordProgress(
    store: Store,
    job: StoredReplayJob,
    replayed: number,
    next: Key | undefined,
    nowMs: number,
  ): Promise<boolean> {
    return conditionally(
      store.update(batchProgressUpdate(keys.webhookReplay(job.team_id, job.id), job, { replayed }, next, nowMs)),
    );
  },

  /**
   * Cancels a running job at `nowMs` (epoch ms): `cancelled`, out of the running index, so no further batch starts; a
   * batch in progress still records what it re-queued ({@link replayJobStore.recordCancelledProgress}). False when the
   * job is absent or not running.
   */
  cancel(store: Store, teamId: string, replayId: string, nowMs: number): Promise<boolean> {
    return conditionally(
      store.update({
        Key: keys.webhookReplay(teamId, replayId),
        UpdateExpression: `SET #status = :cancelled, updated_at = :now REMOVE ${INDEX_PK}, ${INDEX_SK}`,
        ConditionExpression: '#status = :running',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':cancelled': 'cancelled', ':running': 'running', ':now': isoTime(nowMs) },
      }),
    );
  },

  /**
   * Records the batch that was in progress when its job was cancelled: `replayed` grows by `replayed`, on condition
   * that the job is `cancelled` and has done exactly `job.batches` batches. False when that condition failed.
   */
  recordCancelledProgress(store: Store, job: StoredReplayJob, replayed: number, nowMs: number): Promise<boolean> {
    return conditionally(
      store.update({
        Key: keys.webhookReplay(job.team_id, job.id),
        UpdateExpression:
          'SET updated_at = :now, batches = :next_batch ADD replayed :replayed REMOVE #batch, batch_next',
        ConditionExpression: '#status = :cancelled AND batches = :batches',
        ExpressionAttributeNames: { '#status': 'status', '#batch': 'batch' },
        ExpressionAttributeValues: {
          ':now': isoTime(nowMs),
          ':replayed': replayed,
          ':next_batch': job.batches + 1,
          ':batches': job.batches,
          ':cancelled': 'cancelled',
        },
      }),
    );
  },

  /**
   * Running jobs (of any team) whose last progress is older than `beforeMs` (epoch ms): one page (≤ 100) of the
   * running-replays index.
   */
  pageStalled(store: Store, beforeMs: number, startKey: Key | undefined): Promise<StalledPage<StoredReplayJob>> {
    return pageStalled(store, keys.runningReplaysIndex, beforeMs, startKey, parseStoredReplayJob);
  },
};
