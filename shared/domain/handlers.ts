import type { InternalOperationId, OperationId } from '../operations/registry.js';
import { anyHandler, type AnyHandler } from '../operations/handler.js';
import { plansHandlers } from './plans/handlers.js';
import { checkoutSessionsHandlers } from './checkout-sessions/handlers.js';
import { accessCodesHandlers } from './access-codes/handlers.js';
import { giftsHandlers } from './gifts/handlers.js';
import { teamMembersHandlers } from './team-members/handlers.js';
import { rolesHandlers } from './roles/handlers.js';
import { groupsHandlers } from './groups/handlers.js';
import { subscribersHandlers } from './subscribers/handlers.js';
import { portalSessionsHandlers } from './portal-sessions/handlers.js';
import { membersHandlers } from './members/handlers.js';
import { subscriptionsHandlers } from './subscriptions/handlers.js';
import { paymentsHandlers } from './payments/handlers.js';
import { activityHandlers } from './activity/handlers.js';
import { billingHandlers } from './billing/handlers.js';
import { documentsHandlers } from './documents/handlers.js';
import { projectsHandlers } from './projects/handlers.js';
import { teamsHandlers } from './teams/handlers.js';
import { tokensHandlers } from './tokens/handlers.js';
import { webhookDeliveriesHandlers } from './webhook-deliveries/handlers.js';
import { webhookEndpointsHandlers } from './webhook-endpoints/handlers.js';
import { eventsHandlers } from './events/handlers.js';
import { webhookReplaysHandlers } from './webhook-replays/handlers.js';
import { metricsHandlers } from './metrics/handlers.js';
import { messagesHandlers, messagesInternalHandlers } from './messages/handlers.js';
import { messageTemplatesHandlers } from './message-templates/handlers.js';
import { couponsHandlers } from './coupons/handlers.js';
import { importsHandlers } from './imports/handlers.js';
import { accessAuditsHandlers } from './access-audits/handlers.js';
import { portalSessionsInternalHandlers } from './portal-sessions/internal-handlers.js';
import { membersInternalHandlers } from './members/internal-handlers.js';
import { tokensInternalHandlers } from './tokens/internal-handlers.js';
import { subscriptionsInternalHandlers } from './subscriptions/internal-handlers.js';
import { accessCodesInternalHandlers } from './access-codes/internal-handlers.js';
import { teamsInternalHandlers } from './teams/internal-handlers.js';
import { billingInternalHandlers } from './billing/internal-handlers.js';
import { paymentsInternalHandlers } from './payments/internal-handlers.js';
import { projectsInternalHandlers } from './projects/internal-handlers.js';
import { teamMembersInternalHandlers } from './team-members/internal-handlers.js';

/**
 * Every operation's handler by operation id (runtime code: the local server, the `$default` route and
 * the MCP Lambda use it; a REST route Lambda imports only its own handler). Typed so that an operation
 * without a handler does not compile (DESIGN D13).
 */
const HANDLERS = {
  ...teamsHandlers,
  ...teamMembersHandlers,
  ...rolesHandlers,
  ...groupsHandlers,
  ...projectsHandlers,
  ...plansHandlers,
  ...checkoutSessionsHandlers,
  ...accessCodesHandlers,
  ...giftsHandlers,
  ...subscribersHandlers,
  ...portalSessionsHandlers,
  ...membersHandlers,
  ...subscriptionsHandlers,
  ...paymentsHandlers,
  ...metricsHandlers,
  ...messageTemplatesHandlers,
  ...couponsHandlers,
  ...tokensHandlers,
  ...activityHandlers,
  ...billingHandlers,
  ...webhookEndpointsHandlers,
  ...webhookDeliveriesHandlers,
  ...webhookReplaysHandlers,
  ...eventsHandlers,
  ...documentsHandlers,
  ...messagesHandlers,
  ...importsHandlers,
  ...accessAuditsHandlers,
} satisfies Record<OperationId, unknown>;

/** Every internal operation's handler by id (DESIGN D35), typed like {@link HANDLERS}. */
const INTERNAL_HANDLERS = {
  ...portalSessionsInternalHandlers,
  ...membersInternalHandlers,
  ...tokensInternalHandlers,
  ...messagesInternalHandlers,
  ...subscriptionsInternalHandlers,
  ...accessCodesInternalHandlers,
  ...teamsInternalHandlers,
  ...billingInternalHandlers,
  ...paymentsInternalHandlers,
  ...projectsInternalHandlers,
  ...teamMembersInternalHandlers,
} satisfies Record<InternalOperationId, unknown>;

/** Every routed and internal operation's handler type, by operation id (pages pick theirs: `pageOperations`). */
export type OperationHandlers = typeof HANDLERS & typeof INTERNAL_HANDLERS;

const ALL_HANDLERS: Record<OperationId | InternalOperationId, unknown> = { ...HANDLERS, ...INTERNAL_HANDLERS };

/** The handler of a routed or internal operation (its input was validated by the definition's schemas). */
export function handlerOf(operationId: OperationId | InternalOperationId): AnyHandler {
  return anyHandler(ALL_HANDLERS[operationId] as never);
}
