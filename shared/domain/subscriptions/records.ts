import { Timestamp } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import type { Item } from '../../store/requests.js';
import { Subscription } from './schema.js';
import { hasAccess } from './state-machine.js';

/**
 * Stored subscription items to their public shape (DESIGN D14, D15), shared by the repository and the
 * member access events: each item is parsed through its stored-record schema; `has_access` is derived
 * from the status, never stored.
 */

/**
 * A subscription item as stored (`keys.subscription`): the public fields but the derived `has_access`; the nullable
 * ones (`grace_period_end` among them), `cancel_at_period_end` and `invite_links` tolerated absent (read as null, false
 * and []). `revision`, `deadline_at` and the provider's subscription id are read by the writes, not here.
 */
const StoredSubscription = z.partial(z.omit(Subscription, { has_access: true }), {
  previous_status: true,
  payment_provider: true,
  ends_at: true,
  trial_ends_at: true,
  current_period_start: true,
  current_period_end: true,
  grace_period_end: true,
  discount: true,
  cancel_at_period_end: true,
  canceled_at: true,
  cancellation_reason: true,
  invite_links: true,
});

const parseStoredSubscription = recordParser(entity.subscription, StoredSubscription);

/** The public subscription of a stored item (throws StoredRecordError naming its key when it does not match). */
export function toSubscription(item: Item): Subscription {
  const stored = parseStoredSubscription(item);
  return {
    id: stored.id,
    project_id: stored.project_id,
    subscriber_id: stored.subscriber_id,
    plan_id: stored.plan_id,
    status: stored.status,
    previous_status: stored.previous_status ?? null,
    has_access: hasAccess(stored.status),
    source: stored.source,
    payment_provider: stored.payment_provider ?? null,
    price_version: stored.price_version,
    starts_at: stored.starts_at,
    ends_at: stored.ends_at ?? null,
    trial_ends_at: stored.trial_ends_at ?? null,
    current_period_start: stored.current_period_start ?? null,
    current_period_end: stored.current_period_end ?? null,
    grace_period_end: stored.grace_period_end ?? null,
    discount: stored.discount ?? null,
    cancel_at_period_end: stored.cancel_at_period_end === true,
    canceled_at: stored.canceled_at ?? null,
    cancellation_reason: stored.cancellation_reason ?? null,
    invite_links: stored.invite_links ?? [],
    status_changed_at: stored.status_changed_at,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
  };
}

/**
 * A subscription's index item in its subscriber's partition (`writeSubscriptionIndex`, DESIGN D15): the
 * subscription's id and what the web access check needs of it (`ends_at` and `current_period_end`
 * tolerated absent: read as null).
 */
const StoredSubscriptionIndex = z.object({
  subscription_id: Subscription.shape.id,
  status: Subscription.shape.status,
  ends_at: z.optional(Subscription.shape.ends_at),
  current_period_end: z.optional(Subscription.shape.current_period_end),
  plan_id: Subscription.shape.plan_id,
  status_changed_at: Subscription.shape.status_changed_at,
});

/** A subscription item's due time of its one `subscription.clock` deadline (ISO 8601; absent or null: none). */
const StoredSubscriptionDeadline = z.object({ deadline_at: z.optional(z.nullable(Timestamp)) });

const parseStoredSubscriptionDeadline = recordParser(entity.subscription, StoredSubscriptionDeadline);

/**
 * The `deadline_at` of a stored subscription item, null when none (throws StoredRecordError naming its key when it is
 * not a timestamp).
 */
export function deadlineAtOf(item: Item): string | null {
  return parseStoredSubscriptionDeadline(item).deadline_at ?? null;
}

/** Parses a subscription's index item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredSubscriptionIndex = recordParser(entity.subscriberSubscription, StoredSubscriptionIndex);
