import type { DashboardRoute } from './route.js';
import { get, post } from './route.js';

/**
 * Projects and their membership objects: settings, connections, plans, subscribers, subscriptions, access codes,
 * message templates, broadcasts, the access audit.
 */

const projects = () => import('../pages/projects.js');
const lifecycle = () => import('../pages/project-lifecycle.js');
const settings = () => import('../pages/project-settings.js');
const connections = () => import('../pages/project-connections.js');
const plans = () => import('../pages/plans.js');
const subscribers = () => import('../pages/subscribers.js');
const subscriptions = () => import('../pages/subscriptions.js');
const changePlan = () => import('../pages/change-plan.js');
const accessCodes = () => import('../pages/access-codes.js');
const messages = () => import('../pages/messages.js');
const broadcasts = () => import('../pages/broadcasts.js');
const accessAudits = () => import('../pages/access-audits.js');

/** The projects group's routes (a static segment is listed before the parameter it would match). */
export const PROJECT_ROUTES: DashboardRoute[] = [
  get('/projects', projects, (m) => m.projectsPage),
  get('/projects/new', lifecycle, (m) => (request) => m.newProjectPage(request)),
  post('/projects', lifecycle, (m) => m.createProject),
  get('/projects/:id', projects, (m) => m.projectPage),
  get('/projects/:id/settings', settings, (m) => m.settingsPage),
  post('/projects/:id/settings', lifecycle, (m) => m.updateProject),
  post('/projects/:id/archive', lifecycle, (m) => m.archiveAction('archive')),
  post('/projects/:id/unarchive', lifecycle, (m) => m.archiveAction('unarchive')),
  get('/projects/:id/delete', lifecycle, (m) => m.confirmDeleteProject),
  post('/projects/:id/delete', lifecycle, (m) => m.deleteProject),
  post('/projects/:id/bot', connections, (m) => m.connectBot),
  post('/projects/:id/bot/disconnect', connections, (m) => m.disconnectBot),
  post('/projects/:id/payment-provider', connections, (m) => m.connectProvider),
  post('/projects/:id/payment-provider/disconnect', connections, (m) => m.disconnectProvider),
  post('/projects/:id/resources', connections, (m) => m.linkResource),
  post('/projects/:id/resources/:resource/unlink', connections, (m) => m.unlinkResource),
  get('/projects/:id/plans/new', plans, (m) => m.newPlanPage),
  post('/projects/:id/plans', plans, (m) => m.createPlan),
  get('/projects/:id/plans/:plan', plans, (m) => m.planPage),
  post('/projects/:id/plans/:plan', plans, (m) => m.updatePlan),
  ...(['activate', 'deactivate', 'sync'] as const).map((action) =>
    post(`/projects/:id/plans/:plan/${action}`, plans, (m) => m.planAction(action)),
  ),
  get('/projects/:id/subscribers', subscribers, (m) => m.subscribersPage),
  get('/projects/:id/subscribers/:subscriber', subscribers, (m) => m.subscriberPage),
  ...(['ban', 'unban', 'kick'] as const).map((action) =>
    post(`/projects/:id/subscribers/:subscriber/${action}`, subscribers, (m) => m.moderateSubscriber(action)),
  ),
  post('/projects/:id/subscribers/:subscriber/grant', subscribers, (m) => m.grantSubscription),
  get('/projects/:id/subscriptions', subscriptions, (m) => m.subscriptionsPage),
  get('/projects/:id/subscriptions/:subscription/change-plan', changePlan, (m) => m.changePlanPage),
  post('/projects/:id/subscriptions/:subscription/change-plan', changePlan, (m) => m.changePlan),
  {
    method: 'POST',
    path: '/projects/:id/subscriptions/:subscription/:action',
    access: 'signed-in',
    page: async ({ action }) => {
      const m = await subscriptions();
      const known = m.SUBSCRIPTION_ACTIONS.find((candidate) => candidate === action);
      return known ? m.subscriptionAction(known) : null;
    },
  },
  get('/projects/:id/access-codes', accessCodes, (m) => m.accessCodesPage),
  post('/projects/:id/access-codes', accessCodes, (m) => m.generateCodes),
  post('/projects/:id/access-codes/:code/revoke', accessCodes, (m) => m.revokeCode),
  get('/projects/:id/messages', messages, (m) => (request, params) => m.messagesPage(request, params)),
  post('/projects/:id/messages/time-zone', messages, (m) => m.saveTimeZone),
  get('/projects/:id/messages/:kind', messages, (m) => (request, params) => m.messagePage(request, params)),
  post('/projects/:id/messages/:kind', messages, (m) => m.saveMessage),
  post('/projects/:id/messages/:kind/preview', messages, (m) => m.previewMessage),
  post('/projects/:id/messages/:kind/reset', messages, (m) => m.resetMessage),
  get('/projects/:id/broadcasts', broadcasts, (m) => (request, params) => m.broadcastsPage(request, params)),
  get('/projects/:id/broadcasts/list', broadcasts, (m) => m.broadcastListPartial),
  post('/projects/:id/broadcasts', broadcasts, (m) => m.sendBroadcast),
  get('/projects/:id/access-audit', accessAudits, (m) => (request, params) => m.accessAuditPage(request, params)),
  post('/projects/:id/access-audit/run', accessAudits, (m) => m.runAccessAudit),
  post('/projects/:id/access-audit/settings', accessAudits, (m) => m.saveAccessAuditSettings),
  post('/projects/:id/access-audit/findings/:finding/repair', accessAudits, (m) => m.repairFinding),
];
