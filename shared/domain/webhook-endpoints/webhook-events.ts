import * as z from '../../schemas/zod.js';
import { defineEvent } from '../define-facts.js';

/**
 * Webhook endpoints' webhook event (`webhook_endpoint.test`, DESIGN D6): sent by "send test event" to one endpoint
 * only.
 */
export const webhookEndpointsEvents = [
  defineEvent(
    'webhook_endpoint.test',
    'webhook-endpoint:manage',
    false,
    z.object({ webhook_endpoint_id: z.uuid(), message: z.string() }),
    'A test event, sent by "send test event" on an endpoint to that endpoint only.',
  ),
] as const;
