import {
  parseStoredBroadcast,
  type BroadcastBatchEntry,
  type StoredBroadcast,
} from '../domain/messages/broadcast-record.js';
import type { BroadcastAudience } from '../domain/messages/broadcast-schema.js';
import { conditionally } from './expressions.js';
import {
  batchProgressUpdate,
  batchStartUpdate,
  newRunningJobPut,
  pageStalled,
  type StalledPage,
} from './running-jobs.js';
import { entity, keys, secondaryIndex, sortKeyPrefix } from './keys.js';
import { queryPage, listFilter, type Page } from './pages.js';
import type { Item, Key } from './requests.js';
import { itemWithKey, type Store } from './store.js';

/**
 * The broadcast job's persistence (DESIGN D32, D14): one item per job in its project's broadcasts partition, with a
 * list entry beside it (newest first); while it runs it is also in the sparse running-broadcasts index, by the time of
 * its last progress, so the sweeper restarts a job whose worker stopped. Also the two reads a batch makes: a page of
 * the project's subscriptions matching the audience, and a subscriber's messages of one broadcast.
 */

const INDEX_PK = secondaryIndex.partitionKey;

/** The key of a job's item. */
function jobKey(job: Pick<StoredBroadcast, 'team_id' | 'project_id' | 'id'>): Key {
  return keys.broadcast(job.team_id, job.project_id, job.id);
}

/** The counts a batch adds to its job. */
export interface BroadcastBatchCounts {
  queued: number;
  skipped: number;
}

/**
 * The broadcast job store adapter: a job's creation, read and list, its batches and outcome counts, stalled jobs (for
 * the sweeper), and the audience and message reads a batch makes; every method takes the Store port.
 */
export const broadcastStore = {
  /** Stores a new running job and its list entry at `nowMs` (epoch ms), in one transaction. */
  async create(store: Store, job: StoredBroadcast, nowMs: number): Promise<void> {
    await store.transactWrite([
      newRunningJobPut(jobKey(job), entity.broadcast, job, keys.runningBroadcastsIndex, nowMs),
      {
        Put: {
          Item: {
            ...keys.broadcastListEntry(job.team_id, job.project_id, job.created_at, job.id),
            entity: entity.broadcastListEntry,
            broadcast_id: job.id,
          },
        },
      },
    ]);
  },

  /** The stored job (strongly consistent) or null. Throws StoredRecordError for an item that does not match. */
  async load(store: Store, teamId: string, projectId: string, broadcastId: string): Promise<StoredBroadcast | null> {
    const item = await store.get(keys.broadcast(teamId, projectId, broadcastId), { consistent: true });
    return item ? parseStoredBroadcast(item) : null;
  },

  /** One page of a project's jobs, newest first (the list entries, then one BatchGet). */
  async listPage(
    store: Store,
    teamId: string,
    projectId: string,
    query: { limit: number; cursor?: string },
  ): Promise<Page<StoredBroadcast>> {
    const entries = await queryPage(store, {
      partition: keys.broadcastsPartition(teamId, projectId),
      sortKeyPrefix: sortKeyPrefix.broadcastListEntry,
      limit: query.limit,
      cursor: query.cursor,
      ascending: false,
      map: (item) => String(item.broadcast_id),
    });
    const jobKeys = entries.data.map((id) => keys.broadcast(teamId, projectId, id));
    const items = jobKeys.length ? await store.batchGet(jobKeys) : [];
    const data = jobKeys.flatMap((key) => {
      const item = itemWithKey(items, key);
      return item ? [parseStoredBroadcast(item)] : [];
    });
    return { data, next_cursor: entries.next_cursor };
  },

  /**
   * Records the batch a worker is about to run (its subscriptions and the cursor after it) and the progress time, on
   * condition that the job is running, has done `job.batches` batches and has no batch in progress. False when not.
   */
  recordBatchStart(
    store: Store,
    job: StoredBroadcast,
    batch: readonly BroadcastBatchEntry[],
    next: Key | undefined,
    nowMs: number,
  ): Promise<boolean> {
    return conditionally(store.update(batchStartUpdate(jobKey(job), job, batch, next, nowMs)));
  },

  /**
   * Records one finished batch: the counts grow by `counts`, the cursor moves to `next` (undefined: the job is
   * `completed` and leaves the running index), on condition that the job has done exactly `job.batches` batches (a
   * duplicate worker of the same batch writes nothing). False when that condition failed.
   */
  recordProgress(
    store: Store,
    job: StoredBroadcast,
    counts: BroadcastBatchCounts,
    next: Key | undefined,
    nowMs: number,
  ): Promise<boolean> {
    return conditionally(
      store.update(
        batchProgressUpdate(jobKey(job), job, { queued: counts.queued, skipped: counts.skipped }, next, nowMs),
      ),
    );
  },

  /** Adds one to a job's `sent` or `failed` count (a message of the job finished); nothing when the job is gone. */
  async countOutcome(
    store: Store,
    job: { teamId: string; projectId: string; broadcastId: string },
    outcome: 'sent' | 'failed',
  ): Promise<void> {
    await conditionally(
      store.update({
        Key: keys.broadcast(job.teamId, job.projectId, job.broadcastId),
        UpdateExpression: 'ADD #count :one',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#count': outcome },
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );
  },

  /**
   * Running jobs (of any team) whose last progress is older than `beforeMs` (epoch ms): one page (≤ 100) of the
   * running-broadcasts index.
   */
  pageStalled(store: Store, beforeMs: number, startKey: Key | undefined): Promise<StalledPage<StoredBroadcast>> {
    return pageStalled(store, keys.runningBroadcastsIndex, beforeMs, startKey, parseStoredBroadcast);
  },

  /**
   * One page (up to `limit` read, fewer after the filter) of a project's subscriptions in creation order whose plan
   * and status match `audience`, as subscription and subscriber ids, and the key to continue from.
   */
  async pageAudience(
    store: Store,
    teamId: string,
    projectId: string,
    audience: BroadcastAudience,
    startKey: Key | undefined,
    limit: number,
  ): Promise<{ items: BroadcastBatchEntry[]; lastEvaluatedKey: Key | undefined }> {
    const filter = listFilter([
      ...(audience.plan_ids ? [{ attribute: 'plan_id', oneOf: audience.plan_ids }] : []),
      ...(audience.statuses ? [{ attribute: 'status', oneOf: audience.statuses }] : []),
    ]);
    const result = await store.query({
      IndexName: secondaryIndex.name,
      KeyConditionExpression: '#gsi_pk = :pk',
      FilterExpression: filter?.expression,
      ExpressionAttributeNames: { '#gsi_pk': INDEX_PK, '#id': 'id', ...filter?.names },
      ExpressionAttributeValues: { ':pk': keys.projectSubscriptionsIndex(teamId, projectId), ...filter?.values },
      ProjectionExpression: '#id, subscriber_id',
      ExclusiveStartKey: startKey,
      Limit: limit,
    });
    return {
      items: result.items.map((item) => ({
        subscription_id: String(item.id),
        subscriber_id: String(item.subscriber_id),
      })),
      lastEvaluatedKey: result.lastEvaluatedKey,
    };
  },

  /** Every message of broadcast `broadcastId` to one subscriber (their message log, filtered; strongly consistent). */
  async messagesOf(
    store: Store,
    subscriber: { teamId: string; projectId: string; subscriberId: string },
    broadcastId: string,
  ): Promise<Item[]> {
    const found: Item[] = [];
    let startKey: Key | undefined;
    do {
      const page = await store.query({
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        FilterExpression: 'broadcast_id = :broadcast',
        ExpressionAttributeValues: {
          ':pk': keys.subscriberMessagesPartition(subscriber.teamId, subscriber.projectId, subscriber.subscriberId),
          ':prefix': sortKeyPrefix.subscriberMessage,
          ':broadcast': broadcastId,
        },
        ConsistentRead: true,
        ExclusiveStartKey: startKey,
      });
      found.push(...page.items);
      startKey = page.lastEvaluatedKey;
    } while (startKey);
    return found;
  },
};
