import { accessCodesEvents } from './access-codes/webhook-events.js';
import { billingEvents } from './billing/webhook-events.js';
import { groupsEvents } from './groups/webhook-events.js';
import { membersEvents } from './members/webhook-events.js';
import { paymentsEvents } from './payments/webhook-events.js';
import { plansEvents } from './plans/webhook-events.js';
import { projectsEvents } from './projects/webhook-events.js';
import { rolesEvents } from './roles/webhook-events.js';
import { subscriptionsEvents } from './subscriptions/webhook-events.js';
import { teamMembersEvents } from './team-members/webhook-events.js';
import { teamsEvents } from './teams/webhook-events.js';
import { webhookEndpointsEvents } from './webhook-endpoints/webhook-events.js';

/**
 * Every object module's `webhook-events.ts`: the webhook event catalogue is assembled from it. It imports
 * the payload schemas, so the store and the ability catalogue never import it. The order is the event
 * catalogue's (published: `webhook-events.json`, `service://enums/webhook-event`); add a new object's
 * line at the end.
 */
export const EVENTS_BY_MODULE = [
  projectsEvents,
  plansEvents,
  subscriptionsEvents,
  paymentsEvents,
  membersEvents,
  accessCodesEvents,
  teamsEvents,
  teamMembersEvents,
  rolesEvents,
  groupsEvents,
  billingEvents,
  webhookEndpointsEvents,
] as const;
