import pMap from 'p-map';
import type { MessageSendMessage, Runtime } from '../../runtime.js';
import { messageStore } from '../../store/messages.js';
import type { Key } from '../../store/requests.js';
import {
  QUEUE_BATCH_SIZE,
  SHARD_CONCURRENCY,
  SWEEP_MOVE_CONCURRENCY,
  WORKER_PAGE_SIZE,
} from '../webhook-deliveries/policy.js';
import { WORKER_SHARDS, sweptDueMs } from '../webhook-deliveries/worker-index.js';

/**
 * Re-queues messages whose attempt was due before `overdueBeforeMs` (epoch MILLISECONDS) and is still waiting: their
 * queue message was lost (a crash between writing a message and queueing it, or a lost retry). Each is moved
 * `spacingMs` ahead in the pending-messages index, then sent again as the next attempt; the worker's conditional
 * `begin` makes a duplicate send nothing (DESIGN D7, D32). Returns how many were re-queued; throws on store or queue
 * errors.
 */
export async function requeueStalledMessages(
  runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>,
  overdueBeforeMs: number,
  spacingMs: number,
): Promise<number> {
  const nowMs = runtime.clock.nowMs();
  let requeued = 0;
  await pMap(
    WORKER_SHARDS,
    async (shard) => {
      let startKey: Key | undefined;
      do {
        const page = await messageStore.pageOverdue(runtime.store, shard, overdueBeforeMs, startKey, WORKER_PAGE_SIZE);
        // Move, then send: a crash between leaves the row moved, for a later sweep.
        const moved = await pMap(
          page.items,
          async (pending) => {
            if (!(await messageStore.moveOverdue(runtime.store, pending, sweptDueMs(0, spacingMs, nowMs)))) return [];
            const message: MessageSendMessage = {
              kind: 'message_send',
              team_id: pending.teamId,
              project_id: pending.projectId,
              subscriber_id: pending.subscriberId,
              message_id: pending.messageId,
              attempt: pending.attempts + 1,
            };
            return [message];
          },
          { concurrency: SWEEP_MOVE_CONCURRENCY },
        );
        const messages = moved.flat();
        for (let index = 0; index < messages.length; index += QUEUE_BATCH_SIZE)
          await runtime.deliveryQueue.send(messages.slice(index, index + QUEUE_BATCH_SIZE), 0);
        requeued += messages.length;
        startKey = page.lastEvaluatedKey;
      } while (startKey);
    },
    { concurrency: SHARD_CONCURRENCY },
  );
  return requeued;
}
