import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import type { SubscriptionStatus } from '../../catalogues/subscription-statuses.js';
import type { Item } from '../../store/store.js';
import type { MemberInviteLink } from '../members/schema.js';
import type { Subscription, SubscriptionSource } from './schema.js';
import { hasAccess } from './state-machine.js';

/**
 * Stored subscription items to their public shape (DESIGN D15), shared by the repository and the member
 * access events; `has_access` is derived from the status, never stored.
 */

/** The public subscription of a stored item. */
export function toSubscription(item: Item): Subscription {
  const status = item.status as SubscriptionStatus;
  return {
    id: item.id as string,
    project_id: item.project_id as string,
    subscriber_id: item.subscriber_id as string,
    plan_id: item.plan_id as string,
    status,
    previous_status: (item.previous_status as SubscriptionStatus | null | undefined) ?? null,
    has_access: hasAccess(status),
    source: item.source as SubscriptionSource,
    payment_provider: (item.payment_provider as PaymentProvider | null | undefined) ?? null,
    price_version: item.price_version as number,
    starts_at: item.starts_at as string,
    ends_at: (item.ends_at as string | null | undefined) ?? null,
    trial_ends_at: (item.trial_ends_at as string | null | undefined) ?? null,
    current_period_start: (item.current_period_start as string | null | undefined) ?? null,
    current_period_end: (item.current_period_end as string | null | undefined) ?? null,
    cancel_at_period_end: item.cancel_at_period_end === true,
    canceled_at: (item.canceled_at as string | null | undefined) ?? null,
    cancellation_reason: (item.cancellation_reason as string | null | undefined) ?? null,
    invite_links: (item.invite_links as MemberInviteLink[] | undefined) ?? [],
    status_changed_at: item.status_changed_at as string,
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}
