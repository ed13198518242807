import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { Runtime } from '../../runtime.js';
import { entity, keys, secondaryIndex } from '../../store/keys.js';
import { ConditionFailedError, type Store } from '../../store/store.js';
import type { Item, Key } from '../../store/requests.js';
import { countReplaySource, type ReplayCandidate, type ReplaySource } from '../webhook-deliveries/requeue.js';
import type { ReplayDeadRequest } from '../webhook-deliveries/schema.js';
import { parseStoredReplayJob, type StoredReplayJob } from './record.js';
import type { WebhookReplay } from './schema.js';

/**
 * Persistence of replay jobs (DESIGN D25, D14): one item per job in its team's partition
 * (`TEAM#<team>`, `WEBHOOK_REPLAY#<uuid>`) holding the filters, the counts and the cursor of the next
 * batch; while it runs it is also in the sparse running-replays index, by the time of its last batch,
 * so the sweeper restarts a job whose worker stopped.
 */

/** Attribute names of the sparse index. */
const INDEX_PK = secondaryIndex.partitionKey;
const INDEX_SK = secondaryIndex.sortKey;

/** The index sort key of a running job: the epoch MILLISECONDS of its last progress, zero-padded, then its id. */
function runningSortKey(atMs: number, replayId: string): string {
  return `${String(Math.floor(atMs)).padStart(15, '0')}#${replayId}`;
}

/** The public view of a stored job. */
function publicReplayJob(job: StoredReplayJob): WebhookReplay {
  return {
    id: job.id,
    status: job.status,
    dry_run: job.dry_run,
    matched: job.matched,
    replayed: job.replayed,
    filters: job.filters,
    created_at: job.created_at,
    updated_at: job.updated_at,
    completed_at: job.completed_at ?? null,
  };
}

/** The source a job reads, from its filters. */
export function sourceOf(job: Pick<WebhookReplay, 'filters'>): ReplaySource {
  return {
    status: job.filters.status,
    sinceIso: job.filters.since,
    untilIso: job.filters.until,
    endpointId: job.filters.endpoint_id,
    eventType: job.filters.event_type,
  };
}

/**
 * Creates a replay job (D25) over `since_hours` back to `until` (≤ now); dry runs and empty jobs are stored `completed`, others `running` with batch 1
 * queued. Returns the job (202). Throws VALIDATION_FAILED when `until` precedes the window; otherwise only store or queue errors.
 */
export async function createReplayJob(
  runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>,
  principal: Principal,
  request: ReplayDeadRequest,
): Promise<WebhookReplay> {
  const nowMs = runtime.clock.nowMs();
  const now = isoTime(nowMs);
  const requestedUntil = request.until ? Date.parse(request.until) : nowMs;
  if (requestedUntil < nowMs - request.since_hours * 3_600_000) {
    throw new ProblemError(
      'VALIDATION_FAILED',
      `until is before the start of the window (now minus ${request.since_hours} hours).`,
      {
        errors: [{ path: 'until', message: 'must not be before now minus since_hours' }],
      },
    );
  }
  const filters: WebhookReplay['filters'] = {
    status: request.status ?? 'dead',
    since_hours: request.since_hours,
    since: isoTime(nowMs - request.since_hours * 3_600_000),
    until: isoTime(Math.min(requestedUntil, nowMs)),
    endpoint_id: request.endpoint_id ?? null,
    event_type: request.event_type ?? null,
  };
  const matched = await countReplaySource(runtime.store, principal.teamId, sourceOf({ filters }));
  const dryRun = request.dry_run ?? false;
  const done = dryRun || matched === 0;
  const job: StoredReplayJob = {
    id: newUuid(),
    team_id: principal.teamId,
    status: done ? 'completed' : 'running',
    dry_run: dryRun,
    matched,
    replayed: 0,
    filters,
    created_at: now,
    updated_at: now,
    completed_at: done ? now : null,
    cursor: null,
    batches: 0,
  };
  const item: Item = { ...keys.webhookReplay(principal.teamId, job.id), entity: entity.webhookReplay, ...job };
  if (!done) Object.assign(item, { [INDEX_PK]: keys.runningReplaysIndex, [INDEX_SK]: runningSortKey(nowMs, job.id) });
  await runtime.store.put({ Item: item, ConditionExpression: 'attribute_not_exists(pk)' });
  if (!done)
    await runtime.deliveryQueue.send([{ kind: 'replay_batch', team_id: principal.teamId, replay_id: job.id }], 0);
  return publicReplayJob(job);
}

/** Reads a stored job (strongly consistent) or null. Throws StoredRecordError for an item that does not match its record schema. */
export async function loadReplayJob(store: Store, teamId: string, replayId: string): Promise<StoredReplayJob | null> {
  const item = await store.get(keys.webhookReplay(teamId, replayId), { consistent: true });
  return item ? parseStoredReplayJob(item) : null;
}

/** Reads one job of the principal's team. Errors: NOT_FOUND when absent or another team's. */
export async function getReplayJob(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  replayId: string,
): Promise<WebhookReplay> {
  const job = await loadReplayJob(runtime.store, principal.teamId, replayId);
  if (!job) throw new ProblemError('NOT_FOUND', `No webhook replay ${replayId}.`);
  return publicReplayJob(job);
}

/**
 * Records one finished batch of a running job: `replayed` grows by `replayed`, the cursor moves to
 * `next` (null: every batch is done → `completed`, out of the running index), on condition that the job
 * has done exactly `job.batches` batches (a duplicate worker of the same batch writes nothing).
 * Returns false when that condition failed.
 */
export async function writeReplayProgress(
  store: Store,
  job: StoredReplayJob,
  replayed: number,
  next: Key | undefined,
  nowMs: number,
): Promise<boolean> {
  const now = isoTime(nowMs);
  const finished = next === undefined;
  try {
    await store.update({
      Key: keys.webhookReplay(job.team_id, job.id),
      UpdateExpression: finished
        ? `SET #status = :completed, completed_at = :now, updated_at = :now, #cursor = :null, batches = :next_batch ADD replayed :replayed REMOVE ${INDEX_PK}, ${INDEX_SK}, #batch, batch_next`
        : `SET updated_at = :now, #cursor = :cursor, batches = :next_batch, ${INDEX_SK} = :sort ADD replayed :replayed REMOVE #batch, batch_next`,
      ConditionExpression: '#status = :running AND batches = :batches',
      ExpressionAttributeNames: { '#status': 'status', '#cursor': 'cursor', '#batch': 'batch' },
      ExpressionAttributeValues: {
        ':now': now,
        ':replayed': replayed,
        ':next_batch': job.batches + 1,
        ':batches': job.batches,
        ':running': 'running',
        ...(finished
          ? { ':completed': 'completed', ':null': null }
          : { ':cursor': next, ':sort': runningSortKey(nowMs, job.id) }),
      },
    });
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}

/**
 * Records the batch a worker is about to run (its deliveries and the cursor after it) before any is
 * re-queued, on condition that the job is running, has done `job.batches` batches and has no batch in
 * progress; it also marks the job's progress time. Returns false when that condition failed.
 */
export async function writeReplayBatchStart(
  store: Store,
  job: StoredReplayJob,
  batch: readonly ReplayCandidate[],
  next: Key | undefined,
  nowMs: number,
): Promise<boolean> {
  try {
    await store.update({
      Key: keys.webhookReplay(job.team_id, job.id),
      UpdateExpression: `SET #batch = :batch, batch_next = :next, updated_at = :now, ${INDEX_SK} = :sort`,
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
    });
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}

/** Running jobs (of any team) whose last progress is older than `beforeMs` (epoch ms): one page of the running-replays index. */
export async function queryStalledReplays(
  store: Store,
  beforeMs: number,
  startKey: Key | undefined,
): Promise<{ items: StoredReplayJob[]; lastEvaluatedKey: Key | undefined }> {
  const result = await store.query({
    IndexName: secondaryIndex.name,
    KeyConditionExpression: `${INDEX_PK} = :index AND ${INDEX_SK} < :limit`,
    ExpressionAttributeValues: { ':index': keys.runningReplaysIndex, ':limit': runningSortKey(beforeMs, '') },
    ExclusiveStartKey: startKey,
    Limit: 100,
  });
  return { items: result.items.map(parseStoredReplayJob), lastEvaluatedKey: result.lastEvaluatedKey };
}
