import pMap from 'p-map';
import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import type { DeliveryMessage, Runtime } from '../../runtime.js';
import type { Key } from '../../store/store.js';
import { MAX_ATTEMPTS, QUEUE_BATCH_SIZE, REPLAY_CONCURRENCY } from './policy.js';
import { loadDelivery, publicDelivery, queryDeadLetters, writeDead, writeRequeue, type StoredDelivery } from './repository.js';
import type { DeliveryAttempt, ReplayDeadResponse, WebhookDelivery } from './schema.js';
import { appendAttempt, attemptMessage, canRetry, isDueForDeadLetter } from './state-machine.js';

/**
 * The dead end of the delivery pipeline and the ways back (interface "States" → "Webhook delivery",
 * DESIGN D7): dead-lettering (a copy in the dead-letter table), manual retry of one dead delivery and
 * replay-dead of a time window.
 */

/**
 * Moves a delivery to `dead` at the current time and copies it to the dead-letter table in one
 * transaction, appending `record` (when given) to its attempt log and setting `attempts`. Returns false
 * when the delivery changed since it was read (nothing written). Throws only on store errors.
 */
export async function markDead(runtime: Pick<Runtime, 'store' | 'clock'>, delivery: StoredDelivery, record: DeliveryAttempt | null, attempts: number): Promise<boolean> {
  const nowMs = runtime.clock.nowMs();
  const log = record ? appendAttempt(delivery.attempt_log, record) : (delivery.attempt_log ?? []);
  return writeDead(runtime.store, delivery, log, attempts, nowMs);
}

/**
 * Handles a `dead_letter` message (the 72-hour timer after the last attempt): marks the delivery `dead`
 * when it is still waiting after its last attempt and the timer is due. Returns `dead_lettered`, or
 * `skipped` for a stale or duplicate message. Throws only on store errors.
 */
export async function processDeadLetterMessage(runtime: Pick<Runtime, 'store' | 'clock'>, message: DeliveryMessage): Promise<'dead_lettered' | 'skipped'> {
  const delivery = await loadDelivery(runtime.store, message.team_id, message.delivery_id);
  if (!delivery || !isDueForDeadLetter(delivery, runtime.clock.nowMs())) return 'skipped';
  return (await markDead(runtime, delivery, null, MAX_ATTEMPTS)) ? 'dead_lettered' : 'skipped';
}

/**
 * Re-queues one dead delivery: `dead` → `pending`, attempts 0, attempt 1 sent at once; its copy leaves
 * the dead-letter table (interface "States": dead → pending). Returns the delivery as the retry left
 * it (pending, attempts 0). Errors: NOT_FOUND, CONFLICT (not dead, or changed concurrently).
 */
export async function retryDelivery(runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>, principal: Principal, deliveryId: string): Promise<WebhookDelivery> {
  const delivery = await loadDelivery(runtime.store, principal.teamId, deliveryId);
  if (!delivery) throw new ProblemError('NOT_FOUND', `No webhook delivery ${deliveryId}.`);
  if (!canRetry(delivery)) throw new ProblemError('CONFLICT', `Only dead deliveries can be retried; this one is ${delivery.status}.`);
  const nowMs = runtime.clock.nowMs();
  if (!(await writeRequeue(runtime.store, { id: delivery.id, team_id: delivery.team_id, dead_lettered_at: delivery.dead_lettered_at! }, nowMs))) {
    throw new ProblemError('CONFLICT', 'The delivery changed while it was being retried; read it again.');
  }
  await runtime.deliveryQueue.send([attemptMessage(delivery, 1)], 0);
  return publicDelivery({ ...delivery, status: 'pending', attempts: 0, next_attempt_at: isoTime(nowMs), dead_lettered_at: null }, false);
}

/**
 * Re-queues every dead delivery of the principal's team whose `dead_lettered_at` lies within the last
 * `sinceHours` hours (interface "States": replay-dead, DESIGN D7). Reads the dead-letter table by key
 * range, 500 at a time; runs the dead → pending transactions {@link REPLAY_CONCURRENCY} at a time (a
 * pool, so one slow transaction does not hold the others, p-map), and queues attempt 1 of the
 * re-queued ones in batches of 10 messages. Returns `{ replayed }`, the count re-queued (a delivery
 * re-queued concurrently by someone else is not counted). Throws only on store or queue errors.
 */
export async function replayDeadDeliveries(runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>, principal: Principal, sinceHours: number): Promise<ReplayDeadResponse> {
  const nowMs = runtime.clock.nowMs();
  const since = isoTime(nowMs - sinceHours * 3_600_000);
  let replayed = 0;
  let startKey: Key | undefined;
  do {
    const page = await queryDeadLetters(runtime.store, principal.teamId, since, startKey);
    const messages: DeliveryMessage[] = [];
    const flush = async (all: boolean) => {
      while (messages.length >= QUEUE_BATCH_SIZE || (all && messages.length > 0)) await runtime.deliveryQueue.send(messages.splice(0, QUEUE_BATCH_SIZE), 0);
    };
    await pMap(
      page.items,
      async (delivery) => {
        if (!(await writeRequeue(runtime.store, delivery, nowMs))) return;
        replayed++;
        messages.push(attemptMessage(delivery, 1));
        await flush(false);
      },
      { concurrency: REPLAY_CONCURRENCY },
    );
    await flush(true);
    startKey = page.lastEvaluatedKey;
  } while (startKey);
  return { replayed };
}
