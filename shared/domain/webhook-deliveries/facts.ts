import { defineFacts } from '../define-facts.js';

/** Webhook deliveries' abilities and keys (DESIGN D6, D14): deliveries and dead deliveries in the team's partition. */
export const webhookDeliveriesFacts = defineFacts({
  abilities: {
    category: 'webhook',
    entries: [
      {
        value: 'webhook-delivery:view-any',
        description: 'List and read webhook deliveries and their attempts.',
        roles: ['developer', 'analyst', 'viewer'],
      },
      {
        value: 'webhook-delivery:retry',
        description: 'Retry a dead delivery or replay dead deliveries in bulk.',
        roles: ['developer'],
      },
    ],
  },
  keys: {
    delivery: (teamId: string, deliveryId: string) => ({ pk: `TEAM#${teamId}`, sk: `DELIVERY#${deliveryId}` }),
    deadLetter: (teamId: string, deadLetteredAtIso: string, deliveryId: string) => ({
      pk: `TEAM#${teamId}`,
      sk: `DEAD#${deadLetteredAtIso}#${deliveryId}`,
    }),
    /**
     * Sparse GSI partition of a team's skipped deliveries (DESIGN D6), sort key `<skipped_at ISO>#<delivery
     * id>`, where a replay job (D25) finds them by time.
     */
    skippedDeliveriesIndex: (teamId: string) => `TEAM#${teamId}#SKIPPED_DELIVERIES`,
  },
  sortKeyPrefix: { delivery: 'DELIVERY#', deadLetter: 'DEAD#' },
  entity: { delivery: 'delivery', deadDelivery: 'dead_delivery' },
});
