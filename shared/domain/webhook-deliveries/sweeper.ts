import type { Runtime } from '../../runtime.js';
import { fanOutEvents, type FanOutOptions } from './fan-out.js';
import { workerIndexes } from '../../store/webhook-deliveries/worker-index.js';
import { OUTBOX_PAGE_SIZE, SWEEP_GRACE_MS, SWEEP_INTERVAL_SECONDS, WORKER_PAGE_SIZE } from './policy.js';
import { moveThenRequeue, sumOverShardPages, sweptDueMs } from './worker-index.js';
import { restartStalledReplays } from '../webhook-replays/worker.js';
import { restartStalledBroadcasts } from '../messages/broadcast-worker.js';
import { restartStalledImports } from '../imports/restart.js';
import { requeueStalledMessages } from '../messages/sweeper.js';
import { restartStalledAccessAudits } from '../access-audits/restart.js';
import { restartStalledAccessCodeBatchJobs } from '../access-codes/restart.js';
import { stalledBefore } from '../resumable-jobs.js';
import { recoveryMessage } from './state-machine.js';

/**
 * The safety nets of the pipeline (DESIGN D6, D7): the sweeper re-queues deliveries whose timer or
 * message was lost, and the outbox relay fans out events the stream (AWS) or the commit hook (local)
 * did not. Nothing waits forever.
 */

/**
 * Sweeps (every 5 min on AWS, seconds locally; DESIGN D7, D14): re-queues deliveries overdue by `graceMs`, fans out
 * stale outbox events, re-queues messages to subscribers whose queue message was lost, restarts stopped replay jobs
 * (D25), broadcasts (D32), imports, access audits (D34) and access-code batch jobs (D18). `graceMs`, `intervalMs`:
 * MILLISECONDS. Returns the count of each; throws only on store or queue errors.
 */
export async function sweep(
  runtime: Runtime,
  graceMs = SWEEP_GRACE_MS,
  intervalMs = SWEEP_INTERVAL_SECONDS * 1000,
): Promise<{
  requeued: number;
  fannedOut: number;
  messages: number;
  replays: number;
  broadcasts: number;
  imports: number;
  audits: number;
  accessCodeBatches: number;
}> {
  const nowMs = runtime.clock.nowMs();
  const spacingMs = Math.max(graceMs, intervalMs);
  // A queue that knows its backlog (the local one): rows due after its oldest waiting message are waiting, not lost.
  const waitingSinceMs = runtime.deliveryQueue.oldestWaitingSinceMs?.() ?? null;
  const overdueBeforeMs = Math.min(nowMs, waitingSinceMs ?? nowMs) - graceMs;
  const requeued = await sumOverShardPages(
    (shard, startKey) => workerIndexes.pageOverdue(runtime.store, shard, overdueBeforeMs, startKey, WORKER_PAGE_SIZE),
    (overdue) =>
      moveThenRequeue(
        runtime.deliveryQueue,
        overdue.flatMap((delivery) => {
          const message = recoveryMessage(delivery);
          return message ? [{ row: delivery, message }] : [];
        }),
        (delivery) =>
          workerIndexes.moveOverdue(
            runtime.store,
            delivery,
            sweptDueMs(delivery.sweeper_requeues ?? 0, spacingMs, nowMs),
          ),
      ),
  );
  const fannedOut = await relayOutbox(runtime, nowMs - graceMs);
  const messages = await requeueStalledMessages(runtime, overdueBeforeMs, spacingMs);
  const jobsStalledBefore = stalledBefore(nowMs, graceMs);
  const replays = await restartStalledReplays(runtime, jobsStalledBefore);
  const broadcasts = await restartStalledBroadcasts(runtime, jobsStalledBefore);
  const imports = await restartStalledImports(runtime, jobsStalledBefore);
  const audits = await restartStalledAccessAudits(runtime, jobsStalledBefore);
  const accessCodeBatches = await restartStalledAccessCodeBatchJobs(runtime, jobsStalledBefore);
  return { requeued, fannedOut, messages, replays, broadcasts, imports, audits, accessCodeBatches };
}

/**
 * Fans out outbox events created at or before `beforeMs` (epoch ms) and not yet fanned out, page by page per shard (D6,
 * D14); younger events are never read. `messages: false` makes no messages to subscribers (a seeded history). Returns
 * the events handled; throws only on store or queue errors.
 */
export async function relayOutbox(
  runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>,
  beforeMs: number,
  options: FanOutOptions = {},
): Promise<number> {
  return sumOverShardPages(
    (shard, startKey) => workerIndexes.pageOutbox(runtime.store, shard, beforeMs, startKey, OUTBOX_PAGE_SIZE),
    async (events) => {
      if (events.length) await fanOutEvents(runtime, events, options);
      return events.length;
    },
  );
}
