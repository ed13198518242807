import type { MessageSendMessage, Runtime } from '../../runtime.js';
import { messageStore } from '../../store/messages.js';
import { WORKER_PAGE_SIZE } from '../webhook-deliveries/policy.js';
import { moveThenRequeue, sumOverShardPages, sweptDueMs } from '../webhook-deliveries/worker-index.js';

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
  return sumOverShardPages(
    (shard, startKey) => messageStore.pageOverdue(runtime.store, shard, overdueBeforeMs, startKey, WORKER_PAGE_SIZE),
    (overdue) =>
      moveThenRequeue(
        runtime.deliveryQueue,
        overdue.map((pending) => {
          const message: MessageSendMessage = {
            kind: 'message_send',
            team_id: pending.teamId,
            project_id: pending.projectId,
            subscriber_id: pending.subscriberId,
            message_id: pending.messageId,
            attempt: pending.attempts + 1,
          };
          return { row: pending, message };
        }),
        (pending) => messageStore.moveOverdue(runtime.store, pending, sweptDueMs(0, spacingMs, nowMs)),
      ),
  );
}
