import { checkoutSessionStore } from '../../store/checkout-sessions.js';
import type { Store } from '../../store/store.js';

/**
 * The team and subscription the completed Stripe Checkout Session `sessionId` of project `projectId` created, or null
 * (not completed yet, or unknown).
 */
export async function findCheckoutSubscription(
  store: Store,
  projectId: string,
  sessionId: string | null,
): Promise<{ teamId: string; subscriptionId: string } | null> {
  if (!sessionId || !/^[A-Za-z0-9_]{1,255}$/.test(sessionId)) return null;
  return checkoutSessionStore.findSubscription(store, projectId, sessionId);
}
