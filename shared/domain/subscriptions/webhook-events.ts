import * as z from '../../schemas/zod.js';
import { defineEvent } from '../define-facts.js';
import { AccessCode } from '../access-codes/schema.js';
import { Plan } from '../plans/schema.js';
import { Subscriber } from '../subscribers/schema.js';
import { Subscription } from './schema.js';

/**
 * Every subscription transition (DESIGN D15): the subscription (with `status` and `previous_status`), its subscriber,
 * plan and access code.
 */
const subscriptionTransitionData = z.object({
  subscription: Subscription,
  subscriber: Subscriber,
  plan: Plan,
  access_code: z.nullable(AccessCode).check(z.describe('The access code redeemed for this subscription, or null.')),
});
/** A plan change: the transition data (with the new `plan`) plus the plan it left. */
const subscriptionPlanChangeData = z.extend(subscriptionTransitionData, {
  previous_plan: Plan.check(z.describe('The plan the subscription moved from.')),
});

/**
 * Subscriptions' webhook events (`subscription.*`, DESIGN D15): every transition across the statuses, plus upgrade and
 * downgrade.
 */
export const subscriptionsEvents = [
  defineEvent(
    'subscription.created',
    'project-subscription:view',
    true,
    subscriptionTransitionData,
    'A subscription was created (status pending, incomplete, scheduled, trialing or active).',
  ),
  defineEvent(
    'subscription.activated',
    'project-subscription:view',
    true,
    subscriptionTransitionData,
    'A subscription became active (first payment confirmed, trial converted, scheduled start reached, cancellation withdrawn or overdue invoice paid).',
  ),
  defineEvent(
    'subscription.renewed',
    'project-subscription:view',
    true,
    subscriptionTransitionData,
    'An active subscription was renewed for a new period.',
  ),
  defineEvent(
    'subscription.cancellation_scheduled',
    'project-subscription:view',
    true,
    subscriptionTransitionData,
    'A subscription will cancel at the end of the current period (status pending_cancellation).',
  ),
  defineEvent(
    'subscription.past_due',
    'project-subscription:view',
    true,
    subscriptionTransitionData,
    'A renewal payment failed; the subscription is past_due while the provider retries.',
  ),
  defineEvent(
    'subscription.unpaid',
    'project-subscription:view',
    true,
    subscriptionTransitionData,
    'Renewal retries are exhausted; the subscription is unpaid and access is withheld.',
  ),
  defineEvent(
    'subscription.paused',
    'project-subscription:view',
    true,
    subscriptionTransitionData,
    'A subscription was paused.',
  ),
  defineEvent(
    'subscription.resumed',
    'project-subscription:view',
    true,
    subscriptionTransitionData,
    'A paused or suspended subscription became active again.',
  ),
  defineEvent(
    'subscription.suspended',
    'project-subscription:view',
    true,
    subscriptionTransitionData,
    'A subscription was suspended by the creator (e.g. the subscriber was banned).',
  ),
  defineEvent(
    'subscription.canceled',
    'project-subscription:view',
    true,
    subscriptionTransitionData,
    'A subscription ended by cancellation.',
  ),
  defineEvent(
    'subscription.expired',
    'project-subscription:view',
    true,
    subscriptionTransitionData,
    'A fixed-term subscription (e.g. from an access code) reached its end.',
  ),
  defineEvent(
    'subscription.incomplete_expired',
    'project-subscription:view',
    true,
    subscriptionTransitionData,
    'The first payment of a subscription was never completed in time.',
  ),
  defineEvent(
    'subscription.upgraded',
    'project-subscription:view',
    true,
    subscriptionPlanChangeData,
    'A subscription moved to a higher-priced plan.',
  ),
  defineEvent(
    'subscription.downgraded',
    'project-subscription:view',
    true,
    subscriptionPlanChangeData,
    'A subscription moved to a lower-priced plan.',
  ),
] as const;
