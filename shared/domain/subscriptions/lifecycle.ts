import { DAY_MS, isoTime } from '../../clock.js';
import { discountAfter } from '../coupons/decisions.js';
import { DEFAULT_GRACE_DAYS, type Plan } from '../plans/schema.js';
import type { Subscription } from './schema.js';
import { hasAccess, transition, type SubscriptionTrigger, type Transition } from './state-machine.js';

/**
 * The time side of the subscription lifecycle (DESIGN D15), pure (no I/O): billing-period arithmetic,
 * which clock-driven trigger is due next for a subscription (the deadline the repository keeps in the
 * deadline index), and the subscription after a transition (periods, trial, cancellation fields).
 * All times are epoch MILLISECONDS in arguments and ISO 8601 UTC in the subscription.
 */

/** How long a first payment may take before `incomplete_expired` (23 hours, D15), in milliseconds. */
const INCOMPLETE_EXPIRY_MS = 23 * 60 * 60 * 1000;
/** How long a subscription stays unpaid before the clock cancels it (30 days), in milliseconds. */
const UNPAID_LIMIT_MS = 30 * DAY_MS;

/** True when the subscription needs no payment: its trials and periods end and renew by the clock alone. */
function isPaymentFree(subscription: Pick<Subscription, 'source'>): boolean {
  return subscription.source !== 'provider';
}

/**
 * `startMs` plus `count` intervals (epoch ms): weeks are 7 days, months and years are calendar months
 * and years in UTC, with the day clamped to the target month's last day (Jan 31 + 1 month = Feb 28/29).
 */
export function addInterval(startMs: number, interval: 'week' | 'month' | 'year', count: number): number {
  if (interval === 'week') return startMs + count * 7 * DAY_MS;
  const start = new Date(startMs);
  const months = interval === 'month' ? count : count * 12;
  const targetMonth = start.getUTCMonth() + months;
  const year = start.getUTCFullYear() + Math.floor(targetMonth / 12);
  const month = ((targetMonth % 12) + 12) % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(
    year,
    month,
    Math.min(start.getUTCDate(), lastDay),
    start.getUTCHours(),
    start.getUTCMinutes(),
    start.getUTCSeconds(),
    start.getUTCMilliseconds(),
  );
}

/**
 * The end (epoch ms) of a billing period of `plan` starting at `startMs`: one `interval_count` of the
 * interval, or `access_days` for a one_time plan; never after a fixed term's `endsAtMs`.
 */
export function periodEnd(
  plan: Pick<Plan, 'interval' | 'interval_count' | 'access_days'>,
  startMs: number,
  endsAtMs: number | null,
): number {
  const natural =
    plan.interval === 'one_time'
      ? startMs + (plan.access_days ?? 1) * DAY_MS
      : addInterval(startMs, plan.interval, plan.interval_count);
  return endsAtMs === null ? natural : Math.min(natural, endsAtMs);
}

const ms = (iso: string | null): number | null => (iso === null ? null : Date.parse(iso));

/** A clock-driven trigger and when it is due (epoch ms). */
export interface DueTrigger {
  trigger: SubscriptionTrigger;
  atMs: number;
}

/**
 * The next clock trigger (D15) or null: `start_reached`, `trial_ended` (payment-free), `term_ended` / `period_renewed`
 * (payment-free), `period_ended`, `incomplete_expired` 23 hours after creation, `retries_exhausted` at
 * `grace_period_end` (the plan's grace_days, default 7, after the failed payment), `unpaid_limit_reached` 30 days
 * unpaid.
 */
export function nextDueTrigger(subscription: Subscription): DueTrigger | null {
  const periodEndMs = ms(subscription.current_period_end);
  const endsAtMs = ms(subscription.ends_at);
  const changedMs = Date.parse(subscription.status_changed_at);
  switch (subscription.status) {
    case 'scheduled':
      return { trigger: 'start_reached', atMs: Date.parse(subscription.starts_at) };
    case 'trialing': {
      const trialEndMs = ms(subscription.trial_ends_at);
      return isPaymentFree(subscription) && trialEndMs !== null ? { trigger: 'trial_ended', atMs: trialEndMs } : null;
    }
    case 'active':
      if (endsAtMs !== null && (periodEndMs === null || endsAtMs <= periodEndMs))
        return { trigger: 'term_ended', atMs: endsAtMs };
      return isPaymentFree(subscription) && periodEndMs !== null
        ? { trigger: 'period_renewed', atMs: periodEndMs }
        : null;
    case 'pending_cancellation':
      return periodEndMs === null ? null : { trigger: 'period_ended', atMs: periodEndMs };
    case 'pending':
    case 'incomplete':
      return { trigger: 'incomplete_expired', atMs: Date.parse(subscription.created_at) + INCOMPLETE_EXPIRY_MS };
    case 'past_due':
      return { trigger: 'retries_exhausted', atMs: gracePeriodEndMs(subscription) };
    case 'unpaid':
      return { trigger: 'unpaid_limit_reached', atMs: changedMs + UNPAID_LIMIT_MS };
    default:
      return null;
  }
}

/**
 * When a past_due subscription's grace period ends (epoch ms): its `grace_period_end`, or for one stored before grace
 * periods, {@link DEFAULT_GRACE_DAYS} after it entered past_due.
 */
function gracePeriodEndMs(subscription: Pick<Subscription, 'grace_period_end' | 'status_changed_at'>): number {
  return ms(subscription.grace_period_end) ?? Date.parse(subscription.status_changed_at) + DEFAULT_GRACE_DAYS * DAY_MS;
}

/** What a transition needs beyond the subscription: when it happens, the plan it ends on, a reason. */
export interface TransitionInput {
  /** When the transition takes effect (epoch ms): now for operations, the due time for clock triggers. */
  atMs: number;
  /** The plan the subscription is on after the transition (the new plan for upgrade / downgrade). */
  plan: Pick<Plan, 'id' | 'amount' | 'interval' | 'interval_count' | 'access_days' | 'price_version' | 'grace_days'>;
  /** A cancellation reason (cancel, cancel_at_period_end). */
  reason?: string | null;
}

/**
 * The subscription after `trigger` (DESIGN D15): {@link transition} (CONFLICT when not allowed), then status,
 * `previous_status`, `status_changed_at`, the period (renewal adopts the plan's current price version), cancellation
 * fields, plan and `grace_period_end` (set by `payment_failed`, null outside past_due); `updated_at` = `atMs`. Returns
 * it and the transition.
 */
export function applyTrigger(
  subscription: Subscription,
  trigger: SubscriptionTrigger,
  input: TransitionInput,
): { next: Subscription; transition: Transition } {
  const { atMs, plan } = input;
  const trialEndMs = ms(subscription.trial_ends_at);
  const endsAtMs = ms(subscription.ends_at);
  const moved = transition(subscription.status, trigger, { inTrial: trialEndMs !== null && trialEndMs > atMs });
  const at = isoTime(atMs);
  const next: Subscription = {
    ...subscription,
    status: moved.to,
    previous_status: moved.from,
    has_access: hasAccess(moved.to),
    status_changed_at: moved.to !== moved.from ? at : subscription.status_changed_at,
    updated_at: at,
  };
  const newPeriod = (startMs: number) => {
    next.current_period_start = isoTime(startMs);
    next.current_period_end = isoTime(periodEnd(plan, startMs, endsAtMs));
  };
  switch (trigger) {
    case 'start_reached': {
      const startMs = Date.parse(subscription.starts_at);
      if (moved.to === 'trialing' && trialEndMs !== null) {
        next.current_period_start = subscription.starts_at;
        next.current_period_end = isoTime(trialEndMs);
      } else newPeriod(trialEndMs ?? startMs);
      break;
    }
    case 'trial_ended':
      newPeriod(trialEndMs ?? atMs);
      break;
    case 'period_renewed':
      newPeriod(ms(subscription.current_period_end) ?? atMs);
      next.price_version = plan.price_version;
      break;
    case 'payment_failed':
      next.grace_period_end = isoTime(atMs + plan.grace_days * DAY_MS);
      break;
    case 'payment_succeeded':
      if (subscription.status === 'active') {
        newPeriod(ms(subscription.current_period_end) ?? atMs);
        next.price_version = plan.price_version;
      } else if (subscription.status === 'trialing') newPeriod(trialEndMs ?? atMs);
      else newPeriod(atMs);
      break;
    case 'cancel_at_period_end':
      next.cancel_at_period_end = true;
      next.canceled_at = at;
      next.cancellation_reason = input.reason ?? null;
      break;
    case 'cancel':
      next.cancel_at_period_end = false;
      next.canceled_at = at;
      next.cancellation_reason = input.reason ?? subscription.cancellation_reason ?? null;
      break;
    case 'period_ended':
    case 'unpaid_limit_reached':
      next.cancel_at_period_end = false;
      next.canceled_at = subscription.canceled_at ?? at;
      break;
    case 'resume':
      if (subscription.status === 'pending_cancellation') {
        next.cancel_at_period_end = false;
        next.canceled_at = null;
        next.cancellation_reason = null;
      } else newPeriod(atMs);
      break;
    case 'unsuspend':
      newPeriod(atMs);
      break;
    case 'upgrade':
    case 'downgrade':
      next.plan_id = plan.id;
      next.price_version = plan.price_version;
      // A payment-free subscription's source follows its plan's price (free plan or creator grant).
      if (next.source === 'free_plan' || next.source === 'creator_grant')
        next.source = plan.amount === 0 ? 'free_plan' : 'creator_grant';
      break;
    default:
      break;
  }
  if (next.status !== 'past_due') next.grace_period_end = null;
  next.discount = discountAfter(next.discount, next.current_period_start, next.current_period_end);
  return { next, transition: moved };
}
