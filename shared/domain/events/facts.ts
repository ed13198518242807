import { defineFacts } from '../define-facts.js';

/**
 * The event log's keys (DESIGN D6, D14): events in the team's partition (the outbox; `entity.event` is what the fan-out
 * stream filter matches).
 */
export const eventsFacts = defineFacts({
  keys: {
    event: (teamId: string, eventId: string) => ({ pk: `TEAM#${teamId}`, sk: `EVENT#${eventId}` }),
  },
  sortKeyPrefix: { event: 'EVENT#' },
  entity: { event: 'event' },
});
