import { defineInternalOperation } from '../../operations/definition.js';
import { Uuid } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';
import { Email } from '../subscribers/schema.js';
import { ACCESS_EVENTS } from './access-events.js';
import { Subscription } from './schema.js';

/**
 * The subscriptions' internal operations (DESIGN D26, D35): a free join on the join page and the opening of its
 * e-mailed confirmation link, run by the public pages as the project's join principal (surface `portal`). No route, no
 * tool.
 */
export const subscriptionsInternalOperations = {
  joinFreePlan: defineInternalOperation({
    id: 'joinFreePlan',
    summary:
      'Join a free plan with an e-mail address: an incomplete subscription that grants and counts nothing until the address is confirmed through the e-mailed one-time link (an address already in gets a sign-in link).',
    tag: 'Subscriptions',
    ability: 'project-subscription:create',
    teamWide: false,
    body: z.strictObject({ project_id: Uuid, plan_id: Uuid, email: Email }),
    output: z.object({ subscription_id: z.nullable(Uuid) }),
    events: ['subscription.created'],
    write: true,
  }),
  confirmFreeJoin: defineInternalOperation({
    id: 'confirmFreeJoin',
    summary:
      'Open a free join’s one-time confirmation link: its subscription becomes active (subscription.activated, access granted) and its new subscriber counts against the tier.',
    tag: 'Subscriptions',
    ability: 'project-subscription:create',
    teamWide: false,
    body: z.strictObject({ project_id: Uuid, token: z.string().check(z.maxLength(200)) }),
    output: Subscription,
    events: ['subscription.activated', ...ACCESS_EVENTS],
    write: true,
  }),
};
