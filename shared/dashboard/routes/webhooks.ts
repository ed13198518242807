import { get, post, type DashboardRoute } from './route.js';

/** Webhook endpoints and deliveries (DESIGN D21, D25). */

const webhooks = () => import('../pages/webhooks.js');
const endpoint = () => import('../pages/webhook-endpoint.js');
const deliveries = () => import('../pages/webhook-deliveries.js');
const replay = () => import('../pages/webhook-replay.js');

/** The webhooks group's routes. */
export const WEBHOOK_ROUTES: DashboardRoute[] = [
  get('/webhooks', webhooks, (m) => m.endpointsPage),
  get('/webhooks/new', webhooks, (m) => m.newEndpointPage),
  post('/webhooks', webhooks, (m) => m.createEndpoint),
  get('/webhooks/endpoints/:id', endpoint, (m) => m.endpointPage),
  post('/webhooks/endpoints/:id/test', endpoint, (m) => m.sendTest),
  post('/webhooks/endpoints/:id/rotate-secret', endpoint, (m) => m.rotateSecret),
  post('/webhooks/endpoints/:id/enable', endpoint, (m) => m.setActive(true)),
  post('/webhooks/endpoints/:id/disable', endpoint, (m) => m.setActive(false)),
  get('/webhooks/endpoints/:id/delete', endpoint, (m) => m.confirmDeleteEndpoint),
  post('/webhooks/endpoints/:id/delete', endpoint, (m) => m.deleteEndpoint),
  get('/webhooks/deliveries', deliveries, (m) => m.deliveriesPage),
  get('/webhooks/deliveries/:id', deliveries, (m) => m.deliveryPage),
  post('/webhooks/deliveries/:id/retry', deliveries, (m) => m.retryDelivery),
  get('/webhooks/replay-dead', replay, (m) => m.confirmReplayDead),
  post('/webhooks/replay-dead', replay, (m) => m.replayDead),
];
