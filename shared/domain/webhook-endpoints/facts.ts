import { defineFacts } from '../define-facts.js';

/** Webhook endpoints' ability and keys (DESIGN D14): items in the team's partition. */
export const webhookEndpointsFacts = defineFacts({
  abilities: {
    category: 'webhook',
    label: 'Webhooks',
    entries: [
      {
        value: 'webhook-endpoint:manage',
        description: 'List, create, change, delete webhook endpoints, rotate their secrets and send test events.',
        roles: ['developer'],
      },
    ],
  },
  keys: {
    webhookEndpoint: (teamId: string, endpointId: string) => ({
      pk: `TEAM#${teamId}`,
      sk: `WEBHOOK_ENDPOINT#${endpointId}`,
    }),
  },
  sortKeyPrefix: { webhookEndpoint: 'WEBHOOK_ENDPOINT#' },
  entity: { webhookEndpoint: 'webhook_endpoint' },
});
