import { ProblemError } from '../../errors.js';
import type { InternalHandlersOf, OperationHandler } from '../../operations/handler.js';
import { paymentProviderAdapters } from '../../providers/adapters.js';
import { readPlatformUserClaim } from '../members/repository.js';
import { getSubscriber } from '../subscribers/repository.js';
import { subscriptionsOfSubscriber } from '../subscriptions/access-facts.js';
import { getSubscription } from '../subscriptions/queries.js';
import { hasAccess } from '../subscriptions/state-machine.js';
import { consumePortalLink, createPortalLink, endPortalSession } from './links.js';
import { portalSessionsModule } from './operations.js';

type Operations = NonNullable<typeof portalSessionsModule.internal>;

/**
 * Sign-in with a one-time portal link (D27): the link is used once and a session starts; the link's team gets the
 * entry, a refusal after the link was found included (expired). Errors: NOT_FOUND (one answer for every unusable link).
 */
const signInToPortal: OperationHandler<Operations['signInToPortal']> = async (input, { runtime, identify }) => {
  const { cookieValue } = await consumePortalLink(runtime, input.project_id, input.token, (teamId) =>
    identify?.({ teamId }),
  );
  return { session_cookie: cookieValue };
};

/** Sign-out (D27): deletes the session the cookie names; an unknown or ended one is already signed out. */
const signOutOfPortal: OperationHandler<Operations['signOutOfPortal']> = async (input, { runtime }) => {
  await endPortalSession(runtime, input.session_cookie);
  return { signed_out: true };
};

/**
 * "Update payment method" (D27): a Stripe Billing Portal session for the subscriber's Stripe customer, returning
 * to `return_url`. Errors: NOT_FOUND (not the caller's subscription), CONFLICT (not billed through Stripe),
 * PROVIDER_UNAVAILABLE (Stripe refused or is unreachable; nothing changed).
 */
const openBillingPortal: OperationHandler<Operations['openBillingPortal']> = async (input, { runtime, principal }) => {
  const subscription = await getSubscription(runtime.store, principal, input.subscription_id);
  const subscriber = await getSubscriber(runtime.store, principal, subscription.subscriber_id);
  if (subscription.payment_provider !== 'stripe' || !subscriber.provider_customer_id)
    throw new ProblemError('CONFLICT', 'This membership is not billed through Stripe.');
  const created = await paymentProviderAdapters(runtime).stripe?.createBillingPortalSession({
    team_id: principal.teamId,
    project_id: subscription.project_id,
    provider_customer_id: subscriber.provider_customer_id,
    return_url: input.return_url,
  });
  if (!created?.ok)
    throw new ProblemError(
      'PROVIDER_UNAVAILABLE',
      'Stripe could not open the payment settings right now; try again in a moment.',
    );
  return { url: created.url };
};

/**
 * The bot command of platform user `platform_user_id` (D27, D28): the subscriber their platform account is linked
 * to gets the status of their membership (the one with access, else the latest) and a fresh one-time portal link;
 * anyone else `found: false` (nothing about who is a subscriber).
 */
const answerMembershipCommand: OperationHandler<Operations['answerMembershipCommand']> = async (
  input,
  { runtime, principal },
) => {
  const { teamId } = principal;
  const claim = await readPlatformUserClaim(runtime.store, teamId, input.project_id, input.platform_user_id);
  const subscriberId = claim?.subscriber_id;
  if (!subscriberId) return { found: false, status: null, url: null, expires_at: null };
  const subscriptions = await subscriptionsOfSubscriber(runtime.store, teamId, input.project_id, subscriberId);
  const current = subscriptions.find((subscription) => hasAccess(subscription.status)) ?? subscriptions.at(-1);
  const link = await createPortalLink(runtime, teamId, input.project_id, subscriberId);
  return { found: true, status: current?.status ?? null, url: link.url, expires_at: link.expires_at };
};

/** Every handler of the portal-sessions module's internal operations. */
export const portalSessionsInternalHandlers = {
  signInToPortal,
  signOutOfPortal,
  openBillingPortal,
  answerMembershipCommand,
} satisfies InternalHandlersOf<typeof portalSessionsModule>;
