import type { MessageKind } from '../../catalogues/message-kinds.js';
import type { StoredEvent } from '../../events/outbox.js';
import { DAY_MS } from '../../clock.js';
import type { Subscription } from '../subscriptions/schema.js';

/**
 * When the service speaks (DESIGN D32), pure: the lifecycle messages an event calls for, and the reminders a
 * subscription's clock calls for. Each names its occasion, so a message is made at most once per (subscription, kind,
 * occasion) however often the event is fanned out or the reminder deadline runs.
 */

/** A message the service means to send about a subscription (before channels are chosen). */
export interface MessageIntent {
  kind: MessageKind;
  projectId: string;
  subscriberId: string;
  /** The subscription it is about; null for messages about no subscription (sign-in links, broadcasts). */
  subscriptionId: string | null;
  /** What makes this message unique for its subscription and kind (e.g. the time the status was entered). */
  occasion: string;
  /** The payment-failed sequence: the day of the grace period it is sent on (0, 3, …); null otherwise. */
  graceDay: number | null;
}

/** Days before a trial ends that `trial_ending` goes out. */
export const TRIAL_ENDING_NOTICE_DAYS = 3;
/** Days before an annual renewal, or a pass's or a term's end, that `renewal_reminder` goes out. */
export const RENEWAL_NOTICE_DAYS = 7;
/** The grace-period day of the second payment-failed message (the first is day 0). */
const PAYMENT_FAILED_SECOND_NOTICE_DAY = 3;

/** The statuses whose end means access was removed (from a status that granted it). */
const ACCESS_REMOVED_EVENTS = new Set(['subscription.unpaid', 'subscription.canceled', 'subscription.expired']);

/** The statuses a first grant comes from: leaving them with access is a welcome. */
const NOT_STARTED = new Set(['pending', 'incomplete', 'scheduled']);

/**
 * The lifecycle messages a `subscription.*` event calls for (empty for every other event): welcome on a first grant,
 * payment_failed (day 0) on past_due, access_removed when a status with access ends, and the confirmations of a
 * scheduled cancellation, a pause and a resume.
 */
export function intentsOfEvent(event: StoredEvent): MessageIntent[] {
  const subscription = (event.data as { subscription?: Subscription }).subscription;
  if (!subscription || !event.type.startsWith('subscription.')) return [];
  const intent = (kind: MessageKind, graceDay: number | null = null): MessageIntent[] => [
    {
      kind,
      projectId: subscription.project_id,
      subscriberId: subscription.subscriber_id,
      subscriptionId: subscription.id,
      occasion: `${subscription.status}@${subscription.status_changed_at}${graceDay === null ? '' : `#day${graceDay}`}`,
      graceDay,
    },
  ];
  const previous = subscription.previous_status;
  // An imported subscription's event (no previous status, DESIGN D34) tells receivers its state, not the subscriber.
  if (previous === null && event.type !== 'subscription.created') return [];
  switch (event.type) {
    case 'subscription.created':
      return subscription.has_access ? intent('welcome') : [];
    case 'subscription.activated':
      return previous !== null && NOT_STARTED.has(previous) ? intent('welcome') : [];
    case 'subscription.past_due':
      return intent('payment_failed', 0);
    case 'subscription.cancellation_scheduled':
      return intent('cancellation_scheduled');
    case 'subscription.paused':
      return intent('paused');
    case 'subscription.resumed':
      return intent('resumed');
    default:
      return ACCESS_REMOVED_EVENTS.has(event.type) && previous !== null && previous !== 'unpaid'
        ? intent('access_removed')
        : [];
  }
}

/** A reminder and when it is due (epoch milliseconds), up to when it still makes sense to send it. */
export interface DueReminder {
  intent: MessageIntent;
  dueAtMs: number;
  /** After this time (epoch ms) the reminder is stale and never sent. */
  staleAtMs: number;
}

/**
 * The clock's reminders for a subscription in its current state (DESIGN D32), in due order: trial_ending 3 days before
 * a trial ends; renewal_reminder 7 days before an annual renewal or before a term or pass ends; payment_failed on day 3
 * and grace_ending the day before `grace_period_end` while past_due. `plan.interval` decides what a period end means.
 */
export function remindersOf(subscription: Subscription, plan: { interval: string }): DueReminder[] {
  const base = {
    projectId: subscription.project_id,
    subscriberId: subscription.subscriber_id,
    subscriptionId: subscription.id,
  };
  const reminders: DueReminder[] = [];
  const at = (iso: string | null | undefined) => (iso ? Date.parse(iso) : null);
  const trialEndMs = at(subscription.trial_ends_at);
  const periodEndMs = at(subscription.current_period_end);
  const endsAtMs = at(subscription.ends_at);
  if (subscription.status === 'trialing' && trialEndMs !== null) {
    reminders.push({
      intent: { ...base, kind: 'trial_ending', occasion: `trial@${subscription.trial_ends_at}`, graceDay: null },
      dueAtMs: trialEndMs - TRIAL_ENDING_NOTICE_DAYS * DAY_MS,
      staleAtMs: trialEndMs,
    });
  }
  if (subscription.status === 'active') {
    const renews = plan.interval === 'year' || plan.interval === 'one_time' ? periodEndMs : null;
    const endMs = endsAtMs !== null && (renews === null || endsAtMs <= renews) ? endsAtMs : renews;
    if (endMs !== null) {
      reminders.push({
        intent: {
          ...base,
          kind: 'renewal_reminder',
          occasion: `renewal@${new Date(endMs).toISOString()}`,
          graceDay: null,
        },
        dueAtMs: endMs - RENEWAL_NOTICE_DAYS * DAY_MS,
        staleAtMs: endMs,
      });
    }
  }
  const graceEndMs = at(subscription.grace_period_end);
  if (subscription.status === 'past_due' && graceEndMs !== null) {
    const enteredMs = Date.parse(subscription.status_changed_at);
    const lastDayMs = graceEndMs - DAY_MS;
    const secondMs = enteredMs + PAYMENT_FAILED_SECOND_NOTICE_DAY * DAY_MS;
    const episode = `past_due@${subscription.status_changed_at}`;
    if (secondMs < lastDayMs) {
      reminders.push({
        intent: {
          ...base,
          kind: 'payment_failed',
          occasion: `${episode}#day3`,
          graceDay: PAYMENT_FAILED_SECOND_NOTICE_DAY,
        },
        dueAtMs: secondMs,
        staleAtMs: lastDayMs,
      });
    }
    if (lastDayMs > enteredMs) {
      reminders.push({
        intent: {
          ...base,
          kind: 'grace_ending',
          occasion: `${episode}#last`,
          graceDay: Math.round((lastDayMs - enteredMs) / DAY_MS),
        },
        dueAtMs: lastDayMs,
        staleAtMs: graceEndMs,
      });
    }
  }
  return reminders.sort((left, right) => left.dueAtMs - right.dueAtMs);
}
