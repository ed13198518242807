import type Stripe from 'stripe';
import type { Principal } from '../../auth/principal.js';
import type { UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { applyStripeEvent } from './stripe-events.js';

/** Changes applied per linked subscription and call (the hook's mapping applies one per event). */
const MAX_FOLLOW_STEPS = 4;

/**
 * Brings our subscription linked to `stripeSubscription` to Stripe's current state the way the Stripe hook applies
 * `customer.subscription.updated` (DESIGN D15, D34): one D15 change per step, each with its event and access change,
 * until nothing is left to change. `eventId` names the steps; their `created` is now. True when anything changed.
 * Charges nobody and calls nothing at Stripe.
 */
export async function followStripeSubscription(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  stripeSubscription: Stripe.Subscription,
  eventId: string,
): Promise<boolean> {
  const event = {
    id: eventId,
    type: 'customer.subscription.updated',
    created: Math.floor(runtime.clock.nowMs() / 1000),
    data: { object: stripeSubscription },
  } as unknown as Stripe.Event;
  let changed = false;
  for (let step = 0; step < MAX_FOLLOW_STEPS; step++) {
    const outcome = await applyStripeEvent(runtime, principal, projectId, event);
    if (!('applied' in outcome)) break;
    changed = true;
  }
  return changed;
}
