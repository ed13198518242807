import { isoTime } from '../../clock.js';
import { newUuid } from '../../ids.js';
import type { WebhookEventName } from '../../catalogues/webhook-events.js';
import type { Plan } from '../plans/schema.js';
import { DAY_MS } from '../../clock.js';
import type { SubscriptionStatus } from '../../catalogues/subscription-statuses.js';
import type { Subscription } from './schema.js';
import { hasAccess } from './state-machine.js';

/**
 * Imported subscriptions (DESIGN D34): a subscription that already exists at the payment provider enters D15 "as is",
 * in the status and periods the provider has, outside the transition table (it is not a new sale, and no transition
 * led to it). Its one event names the status it arrives in, with `previous_status: null` — the mark of an import, since
 * every transition has a previous status; no message goes to the subscriber for it (`messages/planning.ts`).
 */

/** The statuses an import may give a subscription. */
export type ImportedStatus = Extract<
  SubscriptionStatus,
  'trialing' | 'active' | 'pending_cancellation' | 'past_due' | 'unpaid' | 'paused'
>;

/** The event an imported subscription emits, by the status it arrives in (instead of `subscription.created`). */
export const IMPORTED_EVENTS = {
  trialing: 'subscription.activated',
  active: 'subscription.activated',
  pending_cancellation: 'subscription.cancellation_scheduled',
  past_due: 'subscription.past_due',
  unpaid: 'subscription.unpaid',
  paused: 'subscription.paused',
} as const satisfies Record<ImportedStatus, WebhookEventName>;

/** The provider's state of a subscription; times are epoch MILLISECONDS. */
export interface ImportedState {
  status: ImportedStatus;
  startMs: number;
  periodStartMs: number | null;
  periodEndMs: number | null;
  trialEndMs: number | null;
  cancelAtPeriodEnd: boolean;
}

/**
 * The subscription of `subscriberId` to `plan` as the provider has it (source `provider`), created now (`nowMs`). A
 * past_due one gets the plan's grace period from now (the provider retries meanwhile; D15 makes it unpaid after).
 */
export function importedSubscription(
  facts: {
    projectId: string;
    subscriberId: string;
    plan: Plan;
    provider: Subscription['payment_provider'];
    nowMs: number;
  },
  state: ImportedState,
): Subscription {
  const now = isoTime(facts.nowMs);
  const time = (ms: number | null) => (ms === null ? null : isoTime(ms));
  return {
    id: newUuid(),
    project_id: facts.projectId,
    subscriber_id: facts.subscriberId,
    plan_id: facts.plan.id,
    status: state.status,
    previous_status: null,
    has_access: hasAccess(state.status),
    source: 'provider',
    payment_provider: facts.provider,
    price_version: facts.plan.price_version,
    starts_at: isoTime(state.startMs),
    ends_at: null,
    trial_ends_at: time(state.trialEndMs),
    current_period_start: time(state.periodStartMs),
    current_period_end: time(state.periodEndMs),
    grace_period_end: state.status === 'past_due' ? isoTime(facts.nowMs + facts.plan.grace_days * DAY_MS) : null,
    discount: null,
    cancel_at_period_end: state.cancelAtPeriodEnd,
    canceled_at: null,
    cancellation_reason: null,
    invite_links: [],
    status_changed_at: now,
    created_at: now,
    updated_at: now,
  };
}
