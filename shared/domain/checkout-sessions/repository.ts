import { keys } from '../../store/keys.js';
import type { Store } from '../../store/store.js';
import { parseStoredCheckoutSession } from './record.js';

/** The team and subscription the completed Stripe Checkout Session `sessionId` of project `projectId` created, or null (not completed yet, or unknown). */
export async function findCheckoutSubscription(
  store: Store,
  projectId: string,
  sessionId: string | null,
): Promise<{ teamId: string; subscriptionId: string } | null> {
  if (!sessionId || !/^[A-Za-z0-9_]{1,255}$/.test(sessionId)) return null;
  const item = await store.get(keys.checkoutSession(projectId, sessionId));
  const session = item ? parseStoredCheckoutSession(item) : null;
  return session ? { teamId: session.team_id, subscriptionId: session.subscription_id } : null;
}
