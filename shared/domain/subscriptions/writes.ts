import { isoTime } from '../../clock.js';
import { completeDeadline, scheduleDeadline, type Deadline } from '../../deadlines/deadline.js';
import { keys } from '../../store/keys.js';
import { moveDeadline, moveLivePlanCounter } from '../../store/subscriptions/writes.js';
import type { Transaction } from '../../store/unit-of-work.js';
import type { Plan } from '../plans/schema.js';
import type { Subscriber } from '../subscribers/schema.js';
import type { DueTrigger } from './lifecycle.js';
import type { Subscription } from './schema.js';

/**
 * The writes a subscription's creation and its transitions share (DESIGN D14, D15): its clock deadline, the
 * subscriber's live plan counters, and the shape of another object's writes added to the same transaction.
 */

/** The deadline kind of subscriptions (one deadline per subscription: its next clock-driven trigger). */
export const SUBSCRIPTION_DEADLINE_KIND = 'subscription.clock' as const;

/** The clock deadline (D15) of `subscription` for its next trigger `due` (`atMs`: epoch MILLISECONDS; stored ISO). */
export const deadlineOf = (teamId: string, subscription: Subscription, due: DueTrigger): Deadline => ({
  teamId,
  kind: SUBSCRIPTION_DEADLINE_KIND,
  subjectId: subscription.id,
  projectId: subscription.project_id,
  dueAt: isoTime(due.atMs),
});

/**
 * Adds to `tx` the subscriber's live plan counters of a transition from
 * `before` to `after` (null: it entered a terminal status): − 1 on the plan it left live, + 1 on the plan
 * it is live on now; nothing when it stays live on the same plan. Conditional on the subscriber existing
 * (a lost race otherwise: the item is never created by the counter).
 */
export function writeLivePlanCounters(
  tx: Transaction,
  teamId: string,
  before: Subscription,
  after: Subscription | null,
): void {
  if (after?.plan_id === before.plan_id) return;
  moveLivePlanCounter(tx, teamId, before.project_id, before.subscriber_id, before.plan_id, after?.plan_id ?? null);
}

/**
 * Adds the deadline change of a transition: from a deadline being applied, move it (a put conditional on
 * its due time) or remove it ({@link completeDeadline}); otherwise put it when its due time changed and
 * delete it when none is due any more.
 */
export function writeDeadline(
  tx: Transaction,
  teamId: string,
  next: Subscription,
  due: DueTrigger | null,
  previousDueAt: string | null,
  fromDeadline: Deadline | undefined,
): void {
  if (fromDeadline) {
    if (due) {
      moveDeadline(tx, deadlineOf(teamId, next, due), fromDeadline.dueAt);
    } else completeDeadline(tx, fromDeadline);
    return;
  }
  if (due) {
    if (isoTime(due.atMs) !== previousDueAt) scheduleDeadline(tx, deadlineOf(teamId, next, due));
  } else if (previousDueAt !== null) {
    tx.delete(keys.deadline(teamId, SUBSCRIPTION_DEADLINE_KIND, next.id));
  }
}

/**
 * A subscription change as another object's use case sees it inside the transaction (DESIGN D14, D16):
 * the subscription before (null when it is being created) and after, its subscriber (with consented
 * contact data, for payloads: D10) and its plan after the change.
 */
export interface SubscriptionChange {
  before: Subscription | null;
  after: Subscription;
  subscriber: Subscriber;
  plan: Plan;
}

/**
 * Writes of another object added to a subscription's transaction (same TransactWriteItems; never the subscription,
 * project or plan items).
 */
export type AlongsideWrites = (tx: Transaction, change: SubscriptionChange) => void | Promise<void>;
