import { restartStalledJobs } from '../resumable-jobs.js';
import pMap from 'p-map';
import type { BroadcastBatchMessage, MessageSendMessage, Runtime } from '../../runtime.js';
import { broadcastStore, type BroadcastBatchCounts } from '../../store/broadcasts.js';
import type { Item, Key } from '../../store/requests.js';
import { subscriberStore } from '../../store/subscribers.js';
import { readSubscriberAccessPartition, type SubscriptionSummary } from '../../store/subscriptions/reads.js';
import type { BroadcastBatchEntry, StoredBroadcast } from './broadcast-record.js';
import type { BroadcastAudience } from './broadcast-schema.js';
import { queueMessages } from './creation.js';

/**
 * The broadcast worker (DESIGN D32, run like a replay job, D25): one queue message per batch of the project's
 * subscriptions matching the audience. The batch is recorded on the job before it runs and the cursor moves on
 * conditionally after it, so a repeated batch message does nothing twice and a batch cut short is finished by the next
 * message (the sweeper sends one for a stalled job). Each recipient's message has the broadcast as its occasion, so it
 * is made at most once however often its batch runs; the counts are read back from the messages made.
 */

/** Subscriptions read per batch (before the audience filter). */
const BROADCAST_BATCH_SIZE = 100;
/** Recipients of one batch handled at once. */
const RECIPIENT_CONCURRENCY = 8;

/** What one `broadcast_batch` message did: a batch done and the next queued, the last batch done, or nothing. */
export type BroadcastBatchOutcome = 'broadcast_batch' | 'broadcast_completed' | 'skipped';

/** Whether a subscription is in a broadcast's audience (every given criterion holds). */
function inAudience(audience: BroadcastAudience, subscription: Pick<SubscriptionSummary, 'plan_id' | 'status'>) {
  return (
    (!audience.plan_ids || audience.plan_ids.includes(subscription.plan_id)) &&
    (!audience.statuses || audience.statuses.includes(subscription.status))
  );
}

/**
 * Runs a running job's next batch (or finishes the batch in progress), records its counts and queues the next one.
 * Returns the {@link BroadcastBatchOutcome}; throws only on store or queue errors (the queue retries the message).
 */
export async function processBroadcastBatch(
  runtime: Runtime,
  message: BroadcastBatchMessage,
): Promise<BroadcastBatchOutcome> {
  const job = await broadcastStore.load(runtime.store, message.team_id, message.project_id, message.broadcast_id);
  if (!job || job.status !== 'running') return 'skipped';
  let entries: readonly BroadcastBatchEntry[];
  let next: Key | undefined;
  const resumed = job.batch !== undefined;
  if (job.batch) {
    // A worker stopped in the middle of this batch: finish exactly that one.
    entries = job.batch;
    next = job.batch_next ?? undefined;
  } else {
    const page = await broadcastStore.pageAudience(
      runtime.store,
      job.team_id,
      job.project_id,
      job.audience,
      job.cursor ?? undefined,
      BROADCAST_BATCH_SIZE,
    );
    entries = page.items;
    next = page.lastEvaluatedKey;
    if (!(await broadcastStore.recordBatchStart(runtime.store, job, entries, next, runtime.clock.nowMs())))
      return 'skipped';
  }
  const subscriptionsBySubscriber = new Map<string, Set<string>>();
  for (const entry of entries) {
    const ids = subscriptionsBySubscriber.get(entry.subscriber_id) ?? new Set<string>();
    subscriptionsBySubscriber.set(entry.subscriber_id, ids.add(entry.subscription_id));
  }
  const counts: BroadcastBatchCounts = { queued: 0, skipped: 0 };
  await pMap(
    subscriptionsBySubscriber,
    async ([subscriberId, subscriptionIds]) => {
      const outcome = await broadcastTo(runtime, job, subscriberId, subscriptionIds, resumed);
      counts.queued += outcome.queued;
      counts.skipped += outcome.skipped;
    },
    { concurrency: RECIPIENT_CONCURRENCY },
  );
  if (!(await broadcastStore.recordProgress(runtime.store, job, counts, next, runtime.clock.nowMs()))) return 'skipped';
  if (!next) return 'broadcast_completed';
  await runtime.deliveryQueue.send([message], 0);
  return 'broadcast_batch';
}

/**
 * Makes one subscriber's message of the broadcast, when this batch holds the first (by id) of their subscriptions in
 * the audience: so a subscriber with several such subscriptions is counted in one batch only. A subscriber without
 * consent is skipped; the others go through {@link queueMessages} (opted-out ones are recorded as skipped there).
 * `resumed`: the batch ran before and may have stopped between making a message and queueing it, so messages still
 * waiting for their first attempt are queued again (a duplicate queue message sends nothing: the attempt is taken
 * conditionally). Returns what this recipient adds to the counts.
 */
async function broadcastTo(
  runtime: Runtime,
  job: StoredBroadcast,
  subscriberId: string,
  subscriptionIds: ReadonlySet<string>,
  resumed: boolean,
): Promise<BroadcastBatchCounts> {
  const none = { queued: 0, skipped: 0 };
  const { subscriptions } = await readSubscriberAccessPartition(
    runtime.store,
    job.team_id,
    job.project_id,
    subscriberId,
  );
  const first = subscriptions
    .filter((subscription) => inAudience(job.audience, subscription))
    .map((subscription) => subscription.id)
    .sort()[0];
  if (first === undefined || !subscriptionIds.has(first)) return none;
  const subscriber = await subscriberStore.read(runtime.store, job.team_id, job.project_id, subscriberId);
  if (!subscriber) return none;
  if (subscriber.consent !== true) return { queued: 0, skipped: 1 };
  const intent = {
    kind: 'broadcast' as const,
    projectId: job.project_id,
    subscriberId,
    subscriptionId: null,
    occasion: job.id,
    graceDay: null,
  };
  await queueMessages(runtime, job.team_id, [intent], { broadcastId: job.id, delivery: job.delivery });
  const address = { teamId: job.team_id, projectId: job.project_id, subscriberId };
  const made = await broadcastStore.messagesOf(runtime.store, address, job.id);
  const skippedAtCreation = (item: Item) => item.status === 'skipped' && item.attempts === 0;
  if (resumed) {
    const waiting: MessageSendMessage[] = made
      .filter((item) => item.status === 'queued' && item.attempts === 0)
      .map((item) => ({
        kind: 'message_send',
        team_id: job.team_id,
        project_id: job.project_id,
        subscriber_id: subscriberId,
        message_id: String(item.id),
        attempt: 1,
      }));
    if (waiting.length) await runtime.deliveryQueue.send(waiting, 0);
  }
  const skipped = made.filter(skippedAtCreation).length;
  return { queued: made.length - skipped, skipped };
}

/**
 * Adds a finished message to its broadcast's `sent` or `failed` count (the message worker calls it once per message,
 * after recording the outcome). Does nothing for messages of no broadcast and for other outcomes.
 */
export async function countBroadcastOutcome(
  runtime: Pick<Runtime, 'store'>,
  message: Item,
  status: string,
): Promise<void> {
  if (typeof message.broadcast_id !== 'string' || (status !== 'sent' && status !== 'failed')) return;
  await broadcastStore.countOutcome(
    runtime.store,
    { teamId: String(message.team_id), projectId: String(message.project_id), broadcastId: message.broadcast_id },
    status,
  );
}

/** A broadcast's subject and body for rendering its message, or null for a message of no broadcast (or a lost one). */
export async function broadcastTexts(
  runtime: Pick<Runtime, 'store'>,
  message: Item,
): Promise<{ subject: string; body: string } | null> {
  if (typeof message.broadcast_id !== 'string') return null;
  const job = await broadcastStore.load(
    runtime.store,
    String(message.team_id),
    String(message.project_id),
    message.broadcast_id,
  );
  return job ? { subject: job.subject, body: job.body } : null;
}

/**
 * Queues the next batch of every running broadcast whose last progress is older than `beforeMs` (epoch ms): its
 * worker crashed or its message was lost (the sweeper calls this). Returns the number of jobs restarted.
 */
export function restartStalledBroadcasts(
  runtime: Pick<Runtime, 'store' | 'deliveryQueue'>,
  beforeMs: number,
): Promise<number> {
  return restartStalledJobs(
    runtime,
    beforeMs,
    (store, before, key) => broadcastStore.pageStalled(store, before, key),
    (job) => ({
      kind: 'broadcast_batch',
      team_id: job.team_id,
      project_id: job.project_id,
      broadcast_id: job.id,
    }),
  );
}
