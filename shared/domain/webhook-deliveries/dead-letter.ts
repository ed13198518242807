import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import type { DeliveryMessage, Runtime } from '../../runtime.js';
import { deliveryRequeues } from '../../store/webhook-deliveries/requeues.js';
import { MAX_ATTEMPTS, deliveryExpiresAt } from './policy.js';
import { loadDelivery, publicDelivery } from './reads.js';
import { type StoredDelivery } from './stored.js';
import type { DeliveryAttempt, WebhookDelivery } from './schema.js';
import { appendAttempt, attemptMessage, canRetry, isDueForDeadLetter } from './state-machine.js';

/**
 * The dead end of the delivery pipeline and the ways back (interface "States" → "Webhook delivery",
 * DESIGN D7): dead-lettering (a copy in the dead-letter table) and manual retry of one dead delivery.
 * Replay-dead of a time window is a job (DESIGN D25, `../webhook-replays/`).
 */

/**
 * Moves a delivery to `dead` at the current time and copies it to the dead-letter table in one
 * transaction, appending `record` (when given) to its attempt log and setting `attempts`, and counts it
 * in `runtime.metrics` (`deliveryDead`). Returns false when the delivery changed since it was read
 * (nothing written, nothing counted). Throws only on store errors.
 */
export async function markDead(
  runtime: Pick<Runtime, 'store' | 'clock' | 'metrics'>,
  delivery: StoredDelivery,
  record: DeliveryAttempt | null,
  attempts: number,
): Promise<boolean> {
  const nowMs = runtime.clock.nowMs();
  const log = record ? appendAttempt(delivery.attempt_log, record) : (delivery.attempt_log ?? []);
  const dead = await deliveryRequeues.markDead(runtime.store, delivery, log, attempts, nowMs, deliveryExpiresAt(nowMs));
  if (dead) runtime.metrics?.deliveryDead();
  return dead;
}

/**
 * Handles a `dead_letter` message (the 72-hour timer after the last attempt): marks the delivery `dead`
 * when it is still waiting after its last attempt and the timer is due. Returns `dead_lettered`, or
 * `skipped` for a stale or duplicate message. Throws only on store errors.
 */
export async function processDeadLetterMessage(
  runtime: Pick<Runtime, 'store' | 'clock' | 'metrics'>,
  message: DeliveryMessage,
): Promise<'dead_lettered' | 'skipped'> {
  const delivery = await loadDelivery(runtime.store, message.team_id, message.delivery_id);
  if (!delivery || !isDueForDeadLetter(delivery, runtime.clock.nowMs())) return 'skipped';
  return (await markDead(runtime, delivery, null, MAX_ATTEMPTS)) ? 'dead_lettered' : 'skipped';
}

/**
 * Re-queues one dead (or skipped, DESIGN D6) delivery: → `pending`, attempts 0, attempt 1 sent at once;
 * a dead one's copy leaves the dead-letter table (interface "States": dead → pending). Returns the
 * delivery as the retry left it (pending, attempts 0). Errors: NOT_FOUND, CONFLICT (neither dead nor
 * skipped, or changed concurrently).
 */
export async function retryDelivery(
  runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>,
  principal: Principal,
  deliveryId: string,
): Promise<WebhookDelivery> {
  const delivery = await loadDelivery(runtime.store, principal.teamId, deliveryId);
  if (!delivery) throw new ProblemError('NOT_FOUND', `No webhook delivery ${deliveryId}.`);
  if (!canRetry(delivery))
    throw new ProblemError(
      'CONFLICT',
      `Only dead or skipped deliveries can be retried; this one is ${delivery.status}.`,
    );
  const nowMs = runtime.clock.nowMs();
  const written =
    delivery.status === 'skipped'
      ? await deliveryRequeues.requeueSkipped(runtime.store, delivery, nowMs, deliveryExpiresAt(nowMs))
      : await deliveryRequeues.requeueDead(
          runtime.store,
          { id: delivery.id, team_id: delivery.team_id, dead_lettered_at: delivery.dead_lettered_at! },
          nowMs,
          deliveryExpiresAt(nowMs),
        );
  if (!written) {
    throw new ProblemError('CONFLICT', 'The delivery changed while it was being retried; read it again.');
  }
  await runtime.deliveryQueue.send([attemptMessage(delivery, 1)], 0);
  return publicDelivery(
    {
      ...delivery,
      status: 'pending',
      attempts: 0,
      next_attempt_at: isoTime(nowMs),
      dead_lettered_at: null,
      skipped_at: delivery.status === 'skipped' ? delivery.skipped_at : null,
    },
    false,
  );
}
