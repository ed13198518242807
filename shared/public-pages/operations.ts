import type { Principal } from '../auth/principal.js';
import { redeemAccessCode } from '../domain/access-codes/handlers.js';
import { createCheckoutSession } from '../domain/checkout-sessions/handlers.js';
import { createGiftCheckoutSession } from '../domain/gifts/handlers.js';
import { membersInternalHandlers } from '../domain/members/internal-handlers.js';
import { messagesInternalHandlers } from '../domain/messages/handlers.js';
import { listPayments } from '../domain/payments/handlers.js';
import { portalSessionsInternalHandlers } from '../domain/portal-sessions/internal-handlers.js';
import { cancelSubscription, listSubscriptions, resumeSubscription } from '../domain/subscriptions/handlers.js';
import { subscriptionsInternalHandlers } from '../domain/subscriptions/internal-handlers.js';
import { anyHandler, type AnyHandler } from '../operations/handler.js';
import { runOperation, type OperationOutcome } from '../web/run-operation.js';
import type { PublicRequest } from './http.js';

/**
 * The operations the public pages run (joins, checkouts, gifts, the portal's reads and actions) with their handlers,
 * each imported alone: the public pages' Lambda carries these handlers, not every module's (DESIGN D23, D35).
 */
const PUBLIC_PAGE_HANDLERS = {
  createCheckoutSession: anyHandler(createCheckoutSession),
  createGiftCheckoutSession: anyHandler(createGiftCheckoutSession),
  redeemAccessCode: anyHandler(redeemAccessCode),
  joinFreePlan: anyHandler(subscriptionsInternalHandlers.joinFreePlan),
  confirmFreeJoin: anyHandler(subscriptionsInternalHandlers.confirmFreeJoin),
  listSubscriptions: anyHandler(listSubscriptions),
  listPayments: anyHandler(listPayments),
  cancelSubscription: anyHandler(cancelSubscription),
  resumeSubscription: anyHandler(resumeSubscription),
  openBillingPortal: anyHandler(portalSessionsInternalHandlers.openBillingPortal),
  signInToPortal: anyHandler(portalSessionsInternalHandlers.signInToPortal),
  signOutOfPortal: anyHandler(portalSessionsInternalHandlers.signOutOfPortal),
  startDiscordLink: anyHandler(membersInternalHandlers.startDiscordLink),
  linkDiscordAccount: anyHandler(membersInternalHandlers.linkDiscordAccount),
  requestSignInLink: anyHandler(messagesInternalHandlers.requestSignInLink),
  unsubscribeFromMessages: anyHandler(messagesInternalHandlers.unsubscribeFromMessages),
} satisfies Record<string, AnyHandler>;

/** An operation the public pages run. */
export type PublicPageOperationId = keyof typeof PUBLIC_PAGE_HANDLERS;

/**
 * Runs one of the public pages' operations through the pipeline (`runOperation`) on the `portal` surface, as the join
 * principal, the portal session's subscriber, or nobody. `idempotencyKey`: the form's, so a double submit runs once.
 * Never throws.
 */
export function runPublicOperation<T>(
  request: PublicRequest,
  principal: Principal | null,
  operationId: PublicPageOperationId,
  input: Record<string, unknown>,
  idempotencyKey?: string,
): Promise<OperationOutcome<T>> {
  return runOperation<T>(request.runtime, principal, operationId, input, {
    requestId: request.requestId,
    idempotencyKey,
    surface: 'portal',
    handler: PUBLIC_PAGE_HANDLERS[operationId],
  });
}
