import { accessCodesFacts } from './access-codes/facts.js';
import { activityFacts } from './activity/facts.js';
import { billingFacts } from './billing/facts.js';
import { eventsFacts } from './events/facts.js';
import { giftsFacts } from './gifts/facts.js';
import { importsFacts } from './imports/facts.js';
import { accessAuditsFacts } from './access-audits/facts.js';
import { groupsFacts } from './groups/facts.js';
import { membersFacts } from './members/facts.js';
import { messagesFacts } from './messages/facts.js';
import { messageTemplatesFacts } from './message-templates/facts.js';
import { couponsFacts } from './coupons/facts.js';
import { metricsFacts } from './metrics/facts.js';
import { paymentsFacts } from './payments/facts.js';
import { plansFacts } from './plans/facts.js';
import { portalSessionsFacts } from './portal-sessions/facts.js';
import { projectsFacts } from './projects/facts.js';
import { rolesFacts } from './roles/facts.js';
import { subscribersFacts } from './subscribers/facts.js';
import { subscriptionsFacts } from './subscriptions/facts.js';
import { teamMembersFacts } from './team-members/facts.js';
import { teamsFacts } from './teams/facts.js';
import { tokensFacts } from './tokens/facts.js';
import { webhookDeliveriesFacts } from './webhook-deliveries/facts.js';
import { webhookEndpointsFacts } from './webhook-endpoints/facts.js';
import { webhookReplaysFacts } from './webhook-replays/facts.js';

/**
 * Every object module's `facts.ts` (see `define-facts.ts`): the ability catalogue, the built-in roles
 * and the store's key maps are assembled from it. Metadata only. The order is the ability catalogue's
 * (published: `service://enums/ability`); add a new object's line at the end.
 */
export const FACTS = [
  projectsFacts,
  subscribersFacts,
  plansFacts,
  subscriptionsFacts,
  accessCodesFacts,
  paymentsFacts,
  teamsFacts,
  teamMembersFacts,
  rolesFacts,
  groupsFacts,
  tokensFacts,
  webhookEndpointsFacts,
  webhookDeliveriesFacts,
  activityFacts,
  billingFacts,
  membersFacts,
  eventsFacts,
  webhookReplaysFacts,
  portalSessionsFacts,
  metricsFacts,
  messagesFacts,
  messageTemplatesFacts,
  couponsFacts,
  giftsFacts,
  importsFacts,
  accessAuditsFacts,
] as const;
