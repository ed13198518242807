import { defineModule, defineOperation } from '../../operations/definition.js';
import { SubscriberIdParams } from '../subscribers/schema.js';
import { portalSessionsInternalOperations } from './internal-operations.js';
import { PortalSession } from './schema.js';

/**
 * The portal-session operation (DESIGN D27): a one-time link that signs a subscriber in to the portal (REST only, no
 * tool); and the subscriber side's internal operations.
 */
export const portalSessionsModule = defineModule({
  folder: 'portal-sessions',
  operations: {
    createPortalSession: defineOperation({
      id: 'createPortalSession',
      summary:
        'Make a one-time link (30 minutes, single use) that signs a subscriber in to the subscriber portal of its project.',
      tag: 'Subscribers',
      ability: 'project-user:update',
      teamWide: false,
      params: SubscriberIdParams,
      output: PortalSession,
      events: [],
      rest: { method: 'POST', path: '/v1/subscribers/{id}/portal-sessions', successStatus: 201 },
    }),
  },
  internal: portalSessionsInternalOperations,
});
