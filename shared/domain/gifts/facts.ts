import { defineFacts } from '../define-facts.js';

/**
 * Gifts' keys (DESIGN D33; no abilities of their own: the interface fixes the catalogue, so gifts are read with the
 * access-code abilities, a gift being delivered as an access code). A project's gifts share one partition (sort key by
 * id); each gift also has a reference item keyed by its id alone, so `GET /v1/gifts/{id}` finds its project.
 */
export const giftsFacts = defineFacts({
  keys: {
    /** Partition of a project's gifts. */
    giftPartition: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#GIFT`,
    /** One gift in its project's partition. */
    gift: (teamId: string, projectId: string, giftId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#GIFT`,
      sk: `GIFT#${giftId}`,
    }),
    /** A gift's reference item: names its project. */
    giftRef: (teamId: string, giftId: string) => ({ pk: `TEAM#${teamId}#GIFT#${giftId}`, sk: 'GIFT_REF' }),
  },
  sortKeyPrefix: { gift: 'GIFT#' },
  entity: { gift: 'gift', giftRef: 'gift_ref' },
});
