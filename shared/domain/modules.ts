import { plansModule } from './plans/operations.js';
import { checkoutSessionsModule } from './checkout-sessions/operations.js';
import { accessCodesModule } from './access-codes/operations.js';
import { giftsModule } from './gifts/operations.js';
import { teamMembersModule } from './team-members/operations.js';
import { rolesModule } from './roles/operations.js';
import { groupsModule } from './groups/operations.js';
import { subscribersModule } from './subscribers/operations.js';
import { portalSessionsModule } from './portal-sessions/operations.js';
import { membersModule } from './members/operations.js';
import { subscriptionsModule } from './subscriptions/operations.js';
import { paymentsModule } from './payments/operations.js';
import { activityModule } from './activity/operations.js';
import { billingModule } from './billing/operations.js';
import { documentsModule } from './documents/operations.js';
import { projectsModule } from './projects/operations.js';
import { teamsModule } from './teams/operations.js';
import { tokensModule } from './tokens/operations.js';
import { webhookDeliveriesModule } from './webhook-deliveries/operations.js';
import { webhookEndpointsModule } from './webhook-endpoints/operations.js';
import { eventsModule } from './events/operations.js';
import { webhookReplaysModule } from './webhook-replays/operations.js';
import { metricsModule } from './metrics/operations.js';
import { messagesModule } from './messages/operations.js';
import { messageTemplatesModule } from './message-templates/operations.js';
import { couponsModule } from './coupons/operations.js';
import { importsModule } from './imports/operations.js';
import { accessAuditsModule } from './access-audits/operations.js';

/**
 * The list of object modules (DESIGN §2, D13): metadata only (operation definitions), so `lib/` may
 * import it. Its order is the routes' and tools' (`openapi.json`, `tools/list`). Adding an object = a
 * folder under `shared/domain/` plus one line here, one in `handlers.ts` and, when it has them, one in
 * `facts.ts` (abilities, keys) and one in `webhook-events.ts` beside this file; `catalogues.test.ts` fails
 * when a folder's line is missing.
 */
export const MODULES = [
  teamsModule,
  teamMembersModule,
  rolesModule,
  groupsModule,
  projectsModule,
  plansModule,
  checkoutSessionsModule,
  couponsModule,
  accessCodesModule,
  giftsModule,
  subscribersModule,
  portalSessionsModule,
  membersModule,
  subscriptionsModule,
  paymentsModule,
  metricsModule,
  messageTemplatesModule,
  tokensModule,
  activityModule,
  billingModule,
  webhookEndpointsModule,
  webhookDeliveriesModule,
  webhookReplaysModule,
  eventsModule,
  documentsModule,
  messagesModule,
  importsModule,
  accessAuditsModule,
] as const;
