import { ProblemError } from '../../errors.js';
import type { SubscriberAccessSetChange } from '../subscribers/repository.js';
import type { Plan } from '../plans/schema.js';
import { applyTrigger } from './lifecycle.js';
import { isPaidAccess } from './access-facts.js';
import type { Subscription } from './schema.js';
import {
  conflictOf,
  hasAccess,
  isTerminal,
  ruleFor,
  type SubscriptionTrigger,
  type Transition,
} from './state-machine.js';

/**
 * The decisions of a subscription change (DESIGN D15), pure: from the state read (the subscription, its
 * plan, the plan asked for, the time) to what the transaction writes. No store, no clock, no platform.
 */

/**
 * What a use case asks of a subscription: a trigger, and for plan changes (upgrade / downgrade) the new plan; a reason
 * for cancellations.
 */
export interface Decision {
  trigger: SubscriptionTrigger;
  newPlan?: Plan;
  reason?: string | null;
}

/** Refuses a (status, trigger) pair the table does not allow (CONFLICT naming the allowed actions). */
export function requireAllowed(subscription: Subscription, trigger: SubscriptionTrigger): void {
  if (!ruleFor(subscription.status, trigger)) throw conflictOf(subscription.status, trigger);
}

/**
 * A plan's price per day in minor units (recurring: amount over the period's nominal days; one_time: over
 * `access_days`).
 */
function pricePerDay(plan: Plan): number {
  const days =
    plan.interval === 'one_time'
      ? (plan.access_days ?? 1)
      : plan.interval === 'week'
        ? 7 * plan.interval_count
        : plan.interval === 'month'
          ? 30 * plan.interval_count
          : 365 * plan.interval_count;
  return plan.amount / days;
}

/**
 * Whether moving from plan `current` to plan `next` is an `upgrade` (a price per day not lower) or a
 * `downgrade` (DESIGN D15: "change plan to a higher / lower price"). Pure.
 */
export function planChangeTrigger(current: Plan, next: Plan): 'upgrade' | 'downgrade' {
  return pricePerDay(next) >= pricePerDay(current) ? 'upgrade' : 'downgrade';
}

/**
 * The change of the subscriber's access-summary sets (`subscriberAccessAttribute`) when a
 * subscription goes from `before` (null: created) to `after`: its id added to `granting` when it gains
 * access ({@link hasAccess}) and deleted when it loses it; the same for `paid` with paid access
 * ({@link isPaidAccess}). Empty when its access does not change. Pure.
 */
export function accessSetChange(before: Subscription | null, after: Subscription): SubscriberAccessSetChange {
  const change: SubscriberAccessSetChange = { add: { granting: [], paid: [] }, delete: { granting: [], paid: [] } };
  const grants = (subscription: Subscription | null) => subscription !== null && hasAccess(subscription.status);
  const tests = {
    granting: grants,
    paid: (subscription: Subscription | null) => grants(subscription) && isPaidAccess(subscription!),
  };
  for (const set of ['granting', 'paid'] as const) {
    const had = tests[set](before);
    const has = tests[set](after);
    if (had && !has) change.delete[set].push(after.id);
    else if (!had && has) change.add[set].push(after.id);
  }
  return change;
}

/** What {@link decideTransition} decides: the subscription after the trigger and what its transaction must write. */
export interface TransitionOutcome {
  /** The subscription after the trigger (before the platform's invite links, when access starts). */
  next: Subscription;
  /** The transition (its from / to status and its one event). */
  transition: Transition;
  /** The plan it is on after the change (the new plan on upgrade / downgrade). */
  planAfter: Plan;
  /** Access starts or ends ({@link hasAccess}): the platform is asked and the member access events emitted. */
  accessChanges: boolean;
  /** It enters a terminal status: the live counters go down by one. */
  ends: boolean;
}

/**
 * The decision of one transition (DESIGN D15), pure: `decision` applied to `before` (on `plan`) at
 * `atMs` (epoch ms), or at `before.updated_at` when that is later: a clock transition applied after a
 * change made since its due time takes effect at that change, so `status_changed_at` and `updated_at`
 * never go backwards (the metrics' days rely on it). Errors: CONFLICT naming the current status and the
 * allowed triggers when the table does not allow the pair.
 */
export function decideTransition(
  before: Subscription,
  plan: Plan,
  decision: Decision,
  atMs: number,
): TransitionOutcome {
  const planAfter = decision.newPlan ?? plan;
  const effectiveMs = Math.max(atMs, Date.parse(before.updated_at));
  const { next, transition } = applyTrigger(before, decision.trigger, {
    atMs: effectiveMs,
    plan: planAfter,
    reason: decision.reason,
  });
  return {
    next,
    transition,
    planAfter,
    accessChanges: hasAccess(before.status) !== hasAccess(next.status),
    ends: isTerminal(next.status) && !isTerminal(before.status),
  };
}

/**
 * The decision of a plan change (DESIGN D15), pure: `subscription` on plan `current` asked to move to
 * `plan` (read by id). Errors: CONFLICT (status does not allow it, the plan it is already on, inactive
 * plan); NOT_FOUND (a plan of another project); VALIDATION_FAILED (another currency).
 */
export function decidePlanChange(subscription: Subscription, current: Plan, plan: Plan): Decision {
  requireAllowed(subscription, 'upgrade');
  const planId = plan.id;
  if (plan.project_id !== subscription.project_id)
    throw new ProblemError('NOT_FOUND', `No plan ${planId} in project ${subscription.project_id}.`);
  if (plan.id === current.id)
    throw new ProblemError('CONFLICT', `Subscription ${subscription.id} is already on plan ${planId}.`);
  if (plan.status !== 'active')
    throw new ProblemError(
      'CONFLICT',
      `Plan ${planId} is inactive: no subscription can move to it; activate it first.`,
    );
  if (plan.currency !== current.currency) {
    throw new ProblemError(
      'VALIDATION_FAILED',
      `Plan ${planId} is priced in ${plan.currency}, the subscription\u2019s plan in ${current.currency}; a plan change keeps the currency.`,
      {
        errors: [{ path: 'plan_id', message: `must be a plan priced in ${current.currency}` }],
      },
    );
  }
  return { trigger: planChangeTrigger(current, plan), newPlan: plan };
}
