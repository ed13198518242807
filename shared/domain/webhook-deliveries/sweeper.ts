import pMap from 'p-map';
import type { DeliveryMessage, Runtime } from '../../runtime.js';
import type { Key } from '../../store/requests.js';
import { fanOutEvents } from './fan-out.js';
import { QUEUE_BATCH_SIZE, SHARD_CONCURRENCY, SWEEP_GRACE_MS, SWEEP_INTERVAL_SECONDS, SWEEP_MOVE_CONCURRENCY } from './policy.js';
import { WORKER_SHARDS, moveOverdueDelivery, queryOutbox, queryOverdueDeliveries } from './worker-index.js';
import { restartStalledReplays } from '../webhook-replays/worker.js';
import { recoveryMessage } from './state-machine.js';

/**
 * The safety nets of the pipeline (DESIGN D6, D7): the sweeper re-queues deliveries whose timer or
 * message was lost, and the outbox relay fans out events the stream (AWS) or the commit hook (local)
 * did not. Nothing waits forever.
 */

/**
 * The sweeper (runs every 5 minutes on AWS, every few seconds locally): re-queues every delivery whose
 * due time (next attempt, dead-letter timer, or expired lease) passed more than `graceMs` (MILLISECONDS)
 * ago — its timer or message was lost; with a queue that tells when its oldest waiting message was queued
 * (the local one, `oldestWaitingSinceMs`), more than `graceMs` before that, as later ones still wait — and fans out outbox events older than `graceMs` that were never
 * fanned out, and restarts replay jobs (DESIGN D25) whose worker stopped more than `graceMs` ago.
 * Every index is read shard by shard ({@link WORKER_SHARDS}).
 *
 * Each overdue delivery is first moved forward in the pending-deliveries index by a spacing that starts
 * at the larger of `graceMs` and `intervalMs` (MILLISECONDS between sweeps: {@link SWEEP_INTERVAL_SECONDS}
 * on AWS, the local timer's locally) and doubles with each re-queue of the row until its next lease, up
 * to an hour ({@link moveOverdueDelivery}: guarded on the row as read, up to
 * {@link SWEEP_MOVE_CONCURRENCY} at once), and its recovery message is sent only when the move
 * succeeded: a row the dispatcher changed meanwhile (leased, succeeded, rescheduled) needs none. So the
 * next sweep does not read it again; a row still not processed is re-queued at the earliest that
 * spacing + `graceMs` after the previous re-queue (on AWS: 6, then 11, 21, 41, 61 minutes on); no sweep
 * reads a row it will not process, and a row waiting in a long backlog costs a few moves, not one per
 * sweep (DESIGN D7, D14).
 * Move, then send, is crash-safe: a crash between the two leaves the row in the index at its new
 * position, where a later sweep finds it (nothing waits forever); a row is never taken out of the index
 * here. (Send, then move, would cost a message for rows that changed meanwhile.)
 *
 * Returns the counts: `requeued` messages sent, `fannedOut` events handled, `replays` jobs restarted.
 * Throws only on store or queue errors (rows moved before a queue error are re-queued by a later sweep).
 */
export async function sweep(runtime: Runtime, graceMs = SWEEP_GRACE_MS, intervalMs = SWEEP_INTERVAL_SECONDS * 1000): Promise<{ requeued: number; fannedOut: number; replays: number }> {
  const nowMs = runtime.clock.nowMs();
  const spacingMs = Math.max(graceMs, intervalMs);
  // A queue that knows its backlog (the local one): rows due after its oldest waiting message are waiting, not lost.
  const waitingSinceMs = runtime.deliveryQueue.oldestWaitingSinceMs?.() ?? null;
  const overdueBeforeMs = Math.min(nowMs, waitingSinceMs ?? nowMs) - graceMs;
  let requeued = 0;
  await pMap(
    WORKER_SHARDS,
    async (shard) => {
      let startKey: Key | undefined;
      do {
        const page = await queryOverdueDeliveries(runtime.store, shard, overdueBeforeMs, startKey);
        const recoveries = page.items.flatMap((delivery) => {
          const message = recoveryMessage(delivery);
          return message ? [{ delivery, message }] : [];
        });
        // Move first, then send (see above); moved rows leave this query's range, so later pages are unaffected.
        const moved = await pMap(recoveries, async ({ delivery, message }) => ((await moveOverdueDelivery(runtime.store, delivery, spacingMs, nowMs)) ? message : null), {
          concurrency: SWEEP_MOVE_CONCURRENCY,
        });
        const messages = moved.filter((message): message is DeliveryMessage => message !== null);
        for (let index = 0; index < messages.length; index += QUEUE_BATCH_SIZE) await runtime.deliveryQueue.send(messages.slice(index, index + QUEUE_BATCH_SIZE), 0);
        requeued += messages.length;
        startKey = page.lastEvaluatedKey;
      } while (startKey);
    },
    { concurrency: SHARD_CONCURRENCY },
  );
  const fannedOut = await relayOutbox(runtime, nowMs - graceMs);
  const replays = await restartStalledReplays(runtime, nowMs - graceMs);
  return { requeued, fannedOut, replays };
}

/**
 * Fans out every outbox event created at or before `beforeMs` (epoch MILLISECONDS) that has not been
 * fanned out, a page at a time ({@link fanOutEvents}: one read of endpoints and owners per team and
 * page, several events per transaction). Each shard is read by key range ({@link queryOutbox}), so
 * events younger than `beforeMs` are not read at all (DESIGN D6, D14). The local runtime calls it when a commit did not
 * hand over its events (`beforeMs` = now); the sweeper with a grace period. Returns the number of events
 * handled. Throws only on store or queue errors.
 */
export async function relayOutbox(runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>, beforeMs: number): Promise<number> {
  let count = 0;
  await pMap(
    WORKER_SHARDS,
    async (shard) => {
      let startKey: Key | undefined;
      do {
        const page = await queryOutbox(runtime.store, shard, beforeMs, startKey);
        if (page.items.length) await fanOutEvents(runtime, page.items);
        count += page.items.length;
        startKey = page.lastEvaluatedKey;
      } while (startKey);
    },
    { concurrency: SHARD_CONCURRENCY },
  );
  return count;
}
