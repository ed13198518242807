import { generateAccessCodes, listAccessCodes, revokeAccessCode } from '../domain/access-codes/handlers.js';
import { listActivity } from '../domain/activity/handlers.js';
import { getGroup, listGroups } from '../domain/groups/handlers.js';
import { getPayment, listPayments, refundPayment } from '../domain/payments/handlers.js';
import { createPlan, getPlan, listPlans, updatePlan } from '../domain/plans/handlers.js';
import { createProject, getProject, listProjects, updateProject } from '../domain/projects/handlers.js';
import { getRole, listRoles } from '../domain/roles/handlers.js';
import { banSubscriber, getSubscriber, kickSubscriber, listSubscribers } from '../domain/subscribers/handlers.js';
import {
  cancelSubscription,
  getSubscription,
  listSubscriptions,
  pauseSubscription,
  resumeSubscription,
} from '../domain/subscriptions/handlers.js';
import { listTeamMembers } from '../domain/team-members/handlers.js';
import { getCurrentTeam } from '../domain/teams/handlers.js';
import { listTokens } from '../domain/tokens/handlers.js';
import {
  getWebhookDelivery,
  listWebhookDeliveries,
  replayDeadWebhookDeliveries,
  retryWebhookDelivery,
} from '../domain/webhook-deliveries/handlers.js';
import {
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  rotateWebhookEndpointSecret,
  sendTestWebhookEvent,
  updateWebhookEndpoint,
} from '../domain/webhook-endpoints/handlers.js';
import { cancelWebhookReplay } from '../domain/webhook-replays/handlers.js';
import { accessCodesInternalHandlers } from '../domain/access-codes/internal-handlers.js';
import { anyHandler, type AnyHandler } from '../operations/handler.js';
import type { InternalOperationId, OperationId } from '../operations/registry.js';

/**
 * The handlers the tool server runs, each imported alone: every tool's operation, and the operations that start and
 * cancel its tasks. The tool server's Lambda carries these, not every module's (DESIGN D23); a test checks that every
 * tool and task has its operation's own handler here.
 */
const MCP_HANDLERS: Partial<Record<OperationId | InternalOperationId, AnyHandler>> = {
  generateAccessCodes: anyHandler(generateAccessCodes),
  listAccessCodes: anyHandler(listAccessCodes),
  revokeAccessCode: anyHandler(revokeAccessCode),
  listActivity: anyHandler(listActivity),
  getGroup: anyHandler(getGroup),
  listGroups: anyHandler(listGroups),
  getPayment: anyHandler(getPayment),
  listPayments: anyHandler(listPayments),
  refundPayment: anyHandler(refundPayment),
  createPlan: anyHandler(createPlan),
  getPlan: anyHandler(getPlan),
  listPlans: anyHandler(listPlans),
  updatePlan: anyHandler(updatePlan),
  createProject: anyHandler(createProject),
  getProject: anyHandler(getProject),
  listProjects: anyHandler(listProjects),
  updateProject: anyHandler(updateProject),
  getRole: anyHandler(getRole),
  listRoles: anyHandler(listRoles),
  banSubscriber: anyHandler(banSubscriber),
  getSubscriber: anyHandler(getSubscriber),
  kickSubscriber: anyHandler(kickSubscriber),
  listSubscribers: anyHandler(listSubscribers),
  cancelSubscription: anyHandler(cancelSubscription),
  getSubscription: anyHandler(getSubscription),
  listSubscriptions: anyHandler(listSubscriptions),
  pauseSubscription: anyHandler(pauseSubscription),
  resumeSubscription: anyHandler(resumeSubscription),
  listTeamMembers: anyHandler(listTeamMembers),
  getCurrentTeam: anyHandler(getCurrentTeam),
  listTokens: anyHandler(listTokens),
  getWebhookDelivery: anyHandler(getWebhookDelivery),
  listWebhookDeliveries: anyHandler(listWebhookDeliveries),
  replayDeadWebhookDeliveries: anyHandler(replayDeadWebhookDeliveries),
  retryWebhookDelivery: anyHandler(retryWebhookDelivery),
  createWebhookEndpoint: anyHandler(createWebhookEndpoint),
  deleteWebhookEndpoint: anyHandler(deleteWebhookEndpoint),
  getWebhookEndpoint: anyHandler(getWebhookEndpoint),
  listWebhookEndpoints: anyHandler(listWebhookEndpoints),
  rotateWebhookEndpointSecret: anyHandler(rotateWebhookEndpointSecret),
  sendTestWebhookEvent: anyHandler(sendTestWebhookEvent),
  updateWebhookEndpoint: anyHandler(updateWebhookEndpoint),
  cancelWebhookReplay: anyHandler(cancelWebhookReplay),
  startAccessCodeBatchJob: anyHandler(accessCodesInternalHandlers.startAccessCodeBatchJob),
  cancelAccessCodeBatchJob: anyHandler(accessCodesInternalHandlers.cancelAccessCodeBatchJob),
};

/** The handler of a tool's or a task's operation. Throws an Error for an operation the tool server does not run. */
export function mcpHandlerOf(operationId: OperationId | InternalOperationId): AnyHandler {
  const handler = MCP_HANDLERS[operationId];
  if (!handler) throw new Error(`The tool server runs no operation ${operationId}`);
  return handler;
}
