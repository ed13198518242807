import { expireAccessCodeBatch } from '../domain/access-codes/expiry.js';
import { applyBillingPeriodDeadline, applyGracePeriodDeadline } from '../domain/billing/deadlines.js';
import { applyMemberPlatformSync, applySubscriptionInviteLinks } from '../domain/subscriptions/platform-sync.js';
import { applySubscriptionDeadline } from '../domain/subscriptions/clock-deadline.js';
import { applyMessageReminders } from '../domain/messages/lifecycle.js';
import { applyGiftDelivery } from '../domain/gifts/delivery.js';
import type { DeadlineHandler, DeadlineKind } from './deadline.js';

export type { DeadlineHandler } from './deadline.js';

/**
 * The handler of each deadline kind (runtime code; the one registry the worker dispatches through).
 * Every kind of `DeadlineKind` must have one, or this does not compile. A domain that adds a kind
 * (subscriptions' trial and period ends, D15) adds it to `DeadlineKind` and its function here.
 */
export const DEADLINE_HANDLERS = {
  'access_code.expire': expireAccessCodeBatch,
  'subscription.clock': applySubscriptionDeadline,
  'billing.period': applyBillingPeriodDeadline,
  'billing.grace_period': applyGracePeriodDeadline,
  'member.platform_sync': applyMemberPlatformSync,
  'subscription.invite_links': applySubscriptionInviteLinks,
  'message.reminders': applyMessageReminders,
  'gift.delivery': applyGiftDelivery,
} as const satisfies Record<DeadlineKind, DeadlineHandler>;
