import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { completeDeadline, type Deadline, type DeadlineHandler } from '../../deadlines/deadline.js';
import { ConditionFailedError } from '../../store/store.js';
import { readSubscription } from '../../store/subscriptions/reads.js';
import { moveDeadline } from '../../store/subscriptions/writes.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import { isLostRace } from '../../store/optimistic.js';
import { nextDueTrigger } from './lifecycle.js';
import { toSubscription } from './records.js';
import { loadTransitionReads } from './access-facts.js';
import { commitTransition } from './transitions.js';
import { deadlineOf } from './writes.js';

// ---------------------------------------------------------------------------------------------------
// The clock (DESIGN D15)
// ---------------------------------------------------------------------------------------------------

/**
 * Clock-driven transitions one deadline application performs at most (e.g. renewals missed while the worker was down).
 */
const MAX_CLOCK_STEPS = 24;

/** The principal the clock acts as: the subscription's team, every project, no abilities (reads only). */
function clockPrincipal(teamId: string): Principal {
  return { tokenId: 'clock', teamId, abilities: new Set(), projectIds: null };
}

/**
 * The `subscription.clock` deadline (DESIGN D15): applies every trigger due ({@link nextDueTrigger}, at most {@link
 * MAX_CLOCK_STEPS}), each in a transaction conditional on the revision and the deadline's due time, so a rerun does
 * nothing. Gone subscription or nothing due → removed; not yet due → moved to its time.
 */
export const applySubscriptionDeadline: DeadlineHandler = async (runtime, deadline) => {
  const principal = clockPrincipal(deadline.teamId);
  let current: Deadline = deadline;
  for (let step = 0; step < MAX_CLOCK_STEPS; step++) {
    const item = await readSubscription(runtime.store, deadline.teamId, deadline.subjectId);
    const subscription = item ? toSubscription(item) : null;
    const due = subscription ? nextDueTrigger(subscription) : null;
    try {
      if (!item || !subscription || !due) {
        await unitOfWork(runtime, deadline.teamId, (tx) => completeDeadline(tx, current));
        return;
      }
      if (due.atMs > runtime.clock.nowMs()) {
        const dueAt = isoTime(due.atMs);
        if (dueAt !== current.dueAt) {
          await unitOfWork(runtime, deadline.teamId, (tx) =>
            moveDeadline(tx, deadlineOf(deadline.teamId, subscription, due), current.dueAt),
          );
        }
        return;
      }
      const reads = await loadTransitionReads(runtime.store, principal, subscription);
      const next = await commitTransition(
        runtime,
        principal,
        item,
        reads,
        { trigger: due.trigger },
        { fromDeadline: current, atMs: due.atMs },
      );
      const following = nextDueTrigger(next);
      // The transaction moved this deadline to the following trigger: nothing more is due before it.
      if (!following || following.atMs > runtime.clock.nowMs()) return;
      current = deadlineOf(deadline.teamId, next, following);
    } catch (error) {
      // Applied or moved by another run or a request
      if (isLostRace(error) || error instanceof ConditionFailedError) return;
      throw error;
    }
  }
};
