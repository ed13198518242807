import { restartStalledJobs } from '../resumable-jobs.js';
import pMap from 'p-map';
import type { DeliveryMessage, ReplayBatchMessage, Runtime } from '../../runtime.js';
import type { Key } from '../../store/requests.js';
import {
  QUEUE_BATCH_SIZE,
  REPLAY_BATCH_SIZE,
  REPLAY_CONCURRENCY,
  REPLAY_GROUP_CONCURRENCY,
} from '../webhook-deliveries/policy.js';
import { deliveryExpiresAt } from '../webhook-deliveries/policy.js';
import { loadDelivery } from '../webhook-deliveries/reads.js';
import { REQUEUE_GROUP_SIZE, deliveryRequeues, type ReplayCandidate } from '../../store/webhook-deliveries/requeues.js';
import { replayJobStore } from '../../store/webhook-replays.js';
import { attemptMessage } from '../webhook-deliveries/state-machine.js';
import type { StoredReplayJob } from './record.js';
import { sourceOf } from './repository.js';

/**
 * The replay worker (DESIGN D25): a job re-queues its deliveries one batch per queue message, in the
 * background (the dispatcher Lambda on AWS, the in-process queue locally), and the sweeper restarts a
 * job whose worker stopped. Each delivery goes back to `pending` in its own conditional write that
 * names the job, so a batch run twice (a crash, a duplicate message) never replays one twice.
 */

/**
 * What one `replay_batch` message did: a batch done and the next queued, the last batch done, or nothing (stale or
 * duplicate).
 */
export type ReplayBatchOutcome = 'replay_batch' | 'replay_completed' | 'skipped';

/**
 * Runs a running job's next batch ({@link REPLAY_BATCH_SIZE} deliveries back to `pending` + attempt 1 queued), records
 * progress, queues the next batch; crash-safe and `replayed` stays exact. Returns the {@link ReplayBatchOutcome};
 * throws only on store or queue errors.
 */
export async function processReplayBatch(runtime: Runtime, message: ReplayBatchMessage): Promise<ReplayBatchOutcome> {
  const job = await replayJobStore.load(runtime.store, message.team_id, message.replay_id);
  if (!job || job.status !== 'running' || job.dry_run) return 'skipped';
  const nowMs = runtime.clock.nowMs();
  let candidates: readonly ReplayCandidate[];
  let next: Key | undefined;
  if (job.batch) {
    // A worker stopped in the middle of this batch: finish exactly that one.
    candidates = job.batch;
    next = job.batch_next ?? undefined;
  } else {
    const page = await deliveryRequeues.pageSource(
      runtime.store,
      job.team_id,
      sourceOf(job),
      job.cursor ?? undefined,
      REPLAY_BATCH_SIZE,
    );
    candidates = page.items;
    next = page.lastEvaluatedKey;
    if (!(await replayJobStore.recordBatchStart(runtime.store, job, candidates, next, nowMs))) return 'skipped';
  }
  const requeued: DeliveryMessage[] = [];
  let replayed = 0;
  const status = job.filters.status;
  const groups: ReplayCandidate[][] = [];
  for (let index = 0; index < candidates.length; index += REQUEUE_GROUP_SIZE[status])
    groups.push(candidates.slice(index, index + REQUEUE_GROUP_SIZE[status]));
  await pMap(
    groups,
    async (group) => {
      // The whole group in one transaction; when it is cancelled (one of them was re-queued already, e.g.
      // by this job before a crash), nothing was written and each goes on its own.
      if (await deliveryRequeues.requeueGroup(runtime.store, group, status, nowMs, deliveryExpiresAt(nowMs), job.id)) {
        replayed += group.length;
        requeued.push(...group.map((candidate) => attemptMessage(candidate, 1)));
        return;
      }
      await pMap(
        group,
        async (candidate) => {
          if (await requeue(runtime, job, candidate, nowMs)) {
            replayed++;
            requeued.push(attemptMessage(candidate, 1));
          } else if ((await loadDelivery(runtime.store, job.team_id, candidate.id))?.last_replay_id === job.id) {
            replayed++; // replayed by this job in an earlier run of this batch
          }
        },
        { concurrency: REPLAY_CONCURRENCY },
      );
    },
    { concurrency: REPLAY_GROUP_CONCURRENCY },
  );
  for (let index = 0; index < requeued.length; index += QUEUE_BATCH_SIZE)
    await runtime.deliveryQueue.send(requeued.slice(index, index + QUEUE_BATCH_SIZE), 0);
  if (!(await replayJobStore.recordProgress(runtime.store, job, replayed, next, runtime.clock.nowMs()))) {
    // Cancelled during this batch: what it re-queued still counts, and no batch follows.
    await replayJobStore.recordCancelledProgress(runtime.store, job, replayed, runtime.clock.nowMs());
    return 'skipped';
  }
  if (!next) return 'replay_completed';
  await runtime.deliveryQueue.send([message], 0);
  return 'replay_batch';
}

/** Brings one candidate back to `pending` for `job` (dead or skipped, per the job's filters). */
function requeue(
  runtime: Pick<Runtime, 'store'>,
  job: StoredReplayJob,
  candidate: ReplayCandidate,
  nowMs: number,
): Promise<boolean> {
  return job.filters.status === 'dead'
    ? deliveryRequeues.requeueDead(runtime.store, candidate, nowMs, deliveryExpiresAt(nowMs), job.id)
    : deliveryRequeues.requeueSkipped(runtime.store, candidate, nowMs, deliveryExpiresAt(nowMs), job.id);
}

/**
 * Queues the next batch of every running job whose last progress is older than `beforeMs` (epoch ms):
 * its worker crashed or its message was lost (the sweeper calls this). Returns the number of jobs restarted.
 */
export function restartStalledReplays(
  runtime: Pick<Runtime, 'store' | 'deliveryQueue'>,
  beforeMs: number,
): Promise<number> {
  return restartStalledJobs(
    runtime,
    beforeMs,
    (store, before, key) => replayJobStore.pageStalled(store, before, key),
    (job) => ({
      kind: 'replay_batch',
      team_id: job.team_id,
      replay_id: job.id,
    }),
  );
}
