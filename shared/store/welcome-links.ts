import { ITEM_ABSENT } from './expressions.js';
import { entity, keys } from './keys.js';
import type { Item } from './requests.js';
import type { Store } from './store.js';
import { ttlAttribute } from './ttl.js';

/**
 * The welcome links of free and code joins (DESIGN D26): one item per link, keyed by the SHA-256 (hex) of its token
 * (the token itself is never stored), removed by TTL an hour after it stops working.
 */

/** A welcome link as first written: the project's subscription it names and when it stops working. */
interface NewWelcomeLink {
  teamId: string;
  projectId: string;
  subscriptionId: string;
  /** Made before the subscriber's address was confirmed (stored only when true). */
  awaitingConfirmation?: boolean;
  /** When the link stops working, epoch MILLISECONDS. */
  expiresAtMs: number;
}

/** The welcome links' adapter: store a new link, read one, both by the SHA-256 of its token. */
export const welcomeLinks = {
  /**
   * Stores a new welcome link under the SHA-256 of its token (one PutItem, only if absent: a repeated hash throws
   * ConditionFailedError).
   */
  async create(store: Store, tokenSha256: string, link: NewWelcomeLink): Promise<void> {
    await store.put({
      Item: {
        ...keys.welcomeLink(tokenSha256),
        entity: entity.welcomeLink,
        team_id: link.teamId,
        project_id: link.projectId,
        subscription_id: link.subscriptionId,
        expires_at_ms: link.expiresAtMs,
        ...(link.awaitingConfirmation ? { awaiting_confirmation: true } : {}),
        expires_at: ttlAttribute(link.expiresAtMs, 3600),
      },
      ConditionExpression: ITEM_ABSENT,
    });
  },

  /** The stored welcome link of a token's SHA-256 (one strongly consistent GetItem), or undefined. */
  read(store: Store, tokenSha256: string): Promise<Item | undefined> {
    return store.get(keys.welcomeLink(tokenSha256));
  },
};
