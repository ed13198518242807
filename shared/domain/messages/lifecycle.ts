import { isoTime } from '../../clock.js';
import { completeDeadline, deadlineItem, type Deadline, type DeadlineHandler } from '../../deadlines/deadline.js';
import type { StoredEvent } from '../../events/outbox.js';
import type { Runtime } from '../../runtime.js';
import { messageStore } from '../../store/messages.js';
import { planStore } from '../../store/plans.js';
import { ConditionFailedError } from '../../store/store.js';
import { readSubscription } from '../../store/subscriptions/reads.js';
import { moveDeadline } from '../../store/subscriptions/writes.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import type { Plan } from '../plans/schema.js';
import { toSubscription } from '../subscriptions/records.js';
import type { Subscription } from '../subscriptions/schema.js';
import { queueMessages } from './creation.js';
import { intentsOfEvent, remindersOf } from './planning.js';

/**
 * Lifecycle messages (DESIGN D32), sent by the events that already exist: fan-out hands every committed event here
 * ({@link planMessages}); a subscription's reminders (trial ending, renewal, the payment-failed sequence) wait in one
 * `message.reminders` deadline per subscription, moved to the next reminder by every `subscription.*` event and by
 * {@link applyMessageReminders}.
 */

/** The reminders deadline of a subscription, due at `dueAtMs` (epoch ms). */
function remindersDeadline(teamId: string, subscription: Subscription, dueAtMs: number): Deadline {
  return {
    teamId,
    kind: 'message.reminders',
    subjectId: subscription.id,
    projectId: subscription.project_id,
    dueAt: isoTime(dueAtMs),
  };
}

/** When the next reminder of a subscription is due (epoch ms, not before `nowMs`), or null when none is left. */
function nextReminderAt(subscription: Subscription, plan: Pick<Plan, 'interval'>, nowMs: number): number | null {
  const next = remindersOf(subscription, plan).find((reminder) => reminder.staleAtMs > nowMs);
  return next ? Math.max(next.dueAtMs, nowMs) : null;
}

/**
 * Makes the messages `events` call for and schedules each changed subscription's next reminder. Idempotent (occasion
 * markers; a deadline put again is the same deadline). Throws on store or queue errors (fan-out is retried).
 */
export async function planMessages(
  runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>,
  events: readonly StoredEvent[],
): Promise<void> {
  for (const [teamId, teamEvents] of Map.groupBy(events, (event) => event.team_id)) {
    // In the order the changes happened (a relay hands events over shard by shard).
    teamEvents.sort(
      (left, right) => left.created_at.localeCompare(right.created_at) || left.id.localeCompare(right.id),
    );
    const intents = teamEvents.flatMap(intentsOfEvent);
    if (intents.length) await queueMessages(runtime, teamId, intents);
    const latest = new Map<string, { subscription: Subscription; plan: Plan }>();
    for (const event of teamEvents) {
      const data = event.data as { subscription?: Subscription; plan?: Plan };
      if (event.type.startsWith('subscription.') && data.subscription && data.plan)
        latest.set(data.subscription.id, { subscription: data.subscription, plan: data.plan });
    }
    const nowMs = runtime.clock.nowMs();
    const deadlines = [...latest.values()].flatMap(({ subscription, plan }) => {
      const dueAtMs = nextReminderAt(subscription, plan, nowMs);
      return dueAtMs === null ? [] : [remindersDeadline(teamId, subscription, dueAtMs)];
    });
    await Promise.all(deadlines.map((deadline) => messageStore.putDeadline(runtime.store, deadlineItem(deadline))));
  }
}

/**
 * The `message.reminders` deadline: queues the subscription's reminders that are due and not stale (once each: the
 * occasion markers), then moves the deadline to the next one or removes it. A lost race with another run or an event
 * that moved it does nothing.
 */
export const applyMessageReminders: DeadlineHandler = async (runtime, deadline) => {
  const item = await readSubscription(runtime.store, deadline.teamId, deadline.subjectId);
  const subscription = item ? toSubscription(item) : null;
  const planItem = subscription
    ? await planStore.read(runtime.store, deadline.teamId, subscription.plan_id)
    : undefined;
  const nowMs = runtime.clock.nowMs();
  if (subscription && planItem) {
    const plan = { interval: String(planItem.interval) };
    const due = remindersOf(subscription, plan).filter(
      (reminder) => reminder.dueAtMs <= nowMs && reminder.staleAtMs > nowMs,
    );
    if (due.length)
      await queueMessages(
        runtime as Runtime,
        deadline.teamId,
        due.map((reminder) => reminder.intent),
      );
  }
  const following = subscription && planItem ? nextReminderAfter(subscription, String(planItem.interval), nowMs) : null;
  try {
    await unitOfWork(runtime, deadline.teamId, (tx) => {
      if (following === null || !subscription) completeDeadline(tx, deadline);
      else moveDeadline(tx, remindersDeadline(deadline.teamId, subscription, following), deadline.dueAt);
    });
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
  }
};

/** The due time (epoch ms) of the first reminder due strictly after `nowMs`, or null. */
function nextReminderAfter(subscription: Subscription, interval: string, nowMs: number): number | null {
  return remindersOf(subscription, { interval }).find((reminder) => reminder.dueAtMs > nowMs)?.dueAtMs ?? null;
}
