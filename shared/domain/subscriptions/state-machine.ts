import { SUBSCRIPTION_STATUS_VALUES, type SubscriptionStatus } from '../../catalogues/subscription-statuses.js';
import type { WebhookEventName } from '../../catalogues/webhook-events.js';
import { ProblemError } from '../../errors.js';

/**
 * The subscription state machine (DESIGN D15), pure: per catalogue status whether it grants access and is terminal, and
 * the transition table (status, trigger) → status + its ONE `subscription.*` event. Any other pair is CONFLICT (409)
 * naming the status and its triggers; creation ("(new)" row) is {@link initialStatus}.
 */

/** Whether each status grants access (the member holds the paid role or chat access), D15's access column. */
export const SUBSCRIPTION_ACCESS = {
  pending: false,
  incomplete: false,
  scheduled: false,
  trialing: true,
  active: true,
  pending_cancellation: true,
  past_due: true,
  unpaid: false,
  paused: false,
  suspended: false,
  canceled: false,
  expired: false,
  incomplete_expired: false,
} as const satisfies Record<SubscriptionStatus, boolean>;

/** Whether each status is final (D15's terminal column): nothing leaves it. */
export const SUBSCRIPTION_TERMINAL = {
  pending: false,
  incomplete: false,
  scheduled: false,
  trialing: false,
  active: false,
  pending_cancellation: false,
  past_due: false,
  unpaid: false,
  paused: false,
  suspended: false,
  canceled: true,
  expired: true,
  incomplete_expired: true,
} as const satisfies Record<SubscriptionStatus, boolean>;

/** True when a subscription in `status` grants access (D15). */
export function hasAccess(status: SubscriptionStatus): boolean {
  return SUBSCRIPTION_ACCESS[status];
}

/** True when `status` is terminal (canceled, expired, incomplete_expired). */
export function isTerminal(status: SubscriptionStatus): boolean {
  return SUBSCRIPTION_TERMINAL[status];
}

/** Every non-terminal status, in catalogue order ("any non-terminal" of the table). */
export const NON_TERMINAL_STATUSES: readonly SubscriptionStatus[] = SUBSCRIPTION_STATUS_VALUES.filter(
  (status) => !SUBSCRIPTION_TERMINAL[status],
);

/**
 * What can happen to a subscription (D15, closed list). The clock fires `trial_ended`, `period_renewed`,
 * `start_reached`, `incomplete_expired` (23 h), `retries_exhausted` (also the provider; past_due for the plan's
 * grace_days, default 7), `unpaid_limit_reached` (30 days), `period_ended`, `term_ended`; the rest come from operations
 * and payments.
 */
export const SUBSCRIPTION_TRIGGERS = [
  'payment_succeeded',
  'payment_failed',
  'trial_ended',
  'period_renewed',
  'start_reached',
  'incomplete_expired',
  'retries_exhausted',
  'unpaid_limit_reached',
  'cancel_at_period_end',
  'period_ended',
  'cancel',
  'pause',
  'resume',
  'suspend',
  'unsuspend',
  'term_ended',
  'upgrade',
  'downgrade',
] as const;
/** One of {@link SUBSCRIPTION_TRIGGERS}. */
export type SubscriptionTrigger = (typeof SUBSCRIPTION_TRIGGERS)[number];

/**
 * Where an allowed transition leads: a status, `trialing_or_active` (scheduled start and resume from
 * pending_cancellation: `trialing` while the trial still runs, else `active`), or `unchanged` (plan changes).
 */
type TransitionTarget = SubscriptionStatus | 'trialing_or_active' | 'unchanged';

/** One row of the transition table: from these statuses, this trigger leads to `to` and emits `event`. */
export interface TransitionRule {
  from: readonly SubscriptionStatus[];
  trigger: SubscriptionTrigger;
  to: TransitionTarget;
  event: WebhookEventName;
}

/** D15's transition table, row by row (the "(new)" row is {@link initialStatus}). */
export const TRANSITION_TABLE: readonly TransitionRule[] = [
  { from: ['pending', 'incomplete'], trigger: 'payment_succeeded', to: 'active', event: 'subscription.activated' },
  {
    from: ['pending', 'incomplete'],
    trigger: 'incomplete_expired',
    to: 'incomplete_expired',
    event: 'subscription.incomplete_expired',
  },
  { from: ['scheduled'], trigger: 'start_reached', to: 'trialing_or_active', event: 'subscription.activated' },
  { from: ['trialing'], trigger: 'payment_succeeded', to: 'active', event: 'subscription.activated' },
  { from: ['trialing'], trigger: 'trial_ended', to: 'active', event: 'subscription.activated' },
  { from: ['active'], trigger: 'payment_succeeded', to: 'active', event: 'subscription.renewed' },
  { from: ['active'], trigger: 'period_renewed', to: 'active', event: 'subscription.renewed' },
  { from: ['trialing', 'active'], trigger: 'payment_failed', to: 'past_due', event: 'subscription.past_due' },
  { from: ['past_due'], trigger: 'retries_exhausted', to: 'unpaid', event: 'subscription.unpaid' },
  { from: ['past_due', 'unpaid'], trigger: 'payment_succeeded', to: 'active', event: 'subscription.activated' },
  { from: ['unpaid'], trigger: 'unpaid_limit_reached', to: 'canceled', event: 'subscription.canceled' },
  {
    from: ['trialing', 'active'],
    trigger: 'cancel_at_period_end',
    to: 'pending_cancellation',
    event: 'subscription.cancellation_scheduled',
  },
  { from: ['pending_cancellation'], trigger: 'resume', to: 'trialing_or_active', event: 'subscription.resumed' },
  { from: ['pending_cancellation'], trigger: 'period_ended', to: 'canceled', event: 'subscription.canceled' },
  { from: NON_TERMINAL_STATUSES, trigger: 'cancel', to: 'canceled', event: 'subscription.canceled' },
  { from: ['active', 'past_due'], trigger: 'pause', to: 'paused', event: 'subscription.paused' },
  { from: ['paused'], trigger: 'resume', to: 'active', event: 'subscription.resumed' },
  {
    from: ['trialing', 'active', 'pending_cancellation', 'past_due', 'paused'],
    trigger: 'suspend',
    to: 'suspended',
    event: 'subscription.suspended',
  },
  { from: ['suspended'], trigger: 'unsuspend', to: 'active', event: 'subscription.resumed' },
  { from: ['active'], trigger: 'term_ended', to: 'expired', event: 'subscription.expired' },
  {
    from: ['trialing', 'active', 'pending_cancellation', 'past_due'],
    trigger: 'upgrade',
    to: 'unchanged',
    event: 'subscription.upgraded',
  },
  {
    from: ['trialing', 'active', 'pending_cancellation', 'past_due'],
    trigger: 'downgrade',
    to: 'unchanged',
    event: 'subscription.downgraded',
  },
];

/** The rule of a (status, trigger) pair, or undefined when the pair is not allowed. */
export function ruleFor(status: SubscriptionStatus, trigger: SubscriptionTrigger): TransitionRule | undefined {
  return TRANSITION_TABLE.find((rule) => rule.trigger === trigger && rule.from.includes(status));
}

/** The triggers a status allows, in {@link SUBSCRIPTION_TRIGGERS} order (empty for terminal statuses). */
export function allowedTriggers(status: SubscriptionStatus): SubscriptionTrigger[] {
  return SUBSCRIPTION_TRIGGERS.filter((trigger) => ruleFor(status, trigger) !== undefined);
}

/** Context a few targets depend on: whether the trial is still running (`trialing_or_active`). */
export interface TransitionContext {
  /** True while `trial_ends_at` is in the future. Default false. */
  inTrial?: boolean;
}

/** An allowed transition: the status it leads to and the one event it emits. */
export interface Transition {
  from: SubscriptionStatus;
  to: SubscriptionStatus;
  event: WebhookEventName;
}

/**
 * The transition of `status` under `trigger` (DESIGN D15): `{ from, to, event }`. Throws
 * `ProblemError('CONFLICT')` naming the current status and the allowed triggers when the pair is not in
 * the table (a terminal status allows none).
 */
export function transition(
  status: SubscriptionStatus,
  trigger: SubscriptionTrigger,
  context: TransitionContext = {},
): Transition {
  const rule = ruleFor(status, trigger);
  if (!rule) throw conflictOf(status, trigger);
  const to =
    rule.to === 'unchanged'
      ? status
      : rule.to === 'trialing_or_active'
        ? context.inTrial
          ? 'trialing'
          : 'active'
        : rule.to;
  return { from: status, to, event: rule.event };
}

/** The CONFLICT problem of a (status, trigger) pair that is not allowed. */
export function conflictOf(status: SubscriptionStatus, trigger: SubscriptionTrigger): ProblemError {
  const allowed = allowedTriggers(status);
  const allows = allowed.length ? `it allows ${allowed.join(', ')}` : 'it is terminal and allows no action';
  return new ProblemError('CONFLICT', `The subscription is ${status}: ${trigger} is not allowed; ${allows}.`);
}

/** How a new subscription starts (the "(new)" row of D15's table). */
export interface CreationFacts {
  /** An asynchronous first payment is awaited (bank transfer, crypto). */
  awaitingAsyncPayment?: boolean;
  /** The first payment failed or needs the subscriber's action. */
  firstPaymentFailed?: boolean;
  /** A free join waits for the subscriber to confirm their e-mail address (the subscriber's action). */
  awaitingConfirmation?: boolean;
  /** `starts_at` is in the future. */
  startsInFuture?: boolean;
  /** The subscription starts with a trial. */
  trial?: boolean;
}

/**
 * The status a new subscription is created in (event `subscription.created`): pending (async payment), incomplete
 * (first payment failed, or an address to confirm), scheduled (future start), trialing (trial), else active (paid,
 * free, access code or creator grant). Checked in that order.
 */
export function initialStatus(facts: CreationFacts): SubscriptionStatus {
  if (facts.awaitingAsyncPayment) return 'pending';
  if (facts.firstPaymentFailed || facts.awaitingConfirmation) return 'incomplete';
  if (facts.startsInFuture) return 'scheduled';
  if (facts.trial) return 'trialing';
  return 'active';
}
