import { parseStoredCheckoutSession } from '../domain/checkout-sessions/record.js';
import { keys } from './keys.js';
import type { Store } from './store.js';

/**
 * The checkout session store (DESIGN D26): a completed Stripe Checkout Session of a project, in a partition of
 * its own, names the team and the subscription it created (written with the subscription, read by the welcome page).
 */
export const checkoutSessionStore = {
  /**
   * The team and subscription of the completed session `sessionId` of project `projectId` (strongly consistent), or
   * null.
   */
  async findSubscription(
    store: Store,
    projectId: string,
    sessionId: string,
  ): Promise<{ teamId: string; subscriptionId: string } | null> {
    const item = await store.get(keys.checkoutSession(projectId, sessionId));
    const session = item ? parseStoredCheckoutSession(item) : null;
    return session ? { teamId: session.team_id, subscriptionId: session.subscription_id } : null;
  },
};
