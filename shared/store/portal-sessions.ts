import { ITEM_ABSENT_CONDITION, ITEM_EXISTS_CONDITION } from './expressions.js';
import { entity, keys } from './keys.js';
import type { Item, Key } from './requests.js';
import { ConditionFailedError, type Store } from './store.js';
import type { Transaction } from './unit-of-work.js';

/**
 * The portal session store (DESIGN D27): one-time portal links, portal sessions and free joins' confirmation links,
 * each in a partition of its own keyed by the SHA-256 (hex) of its credential (the credential itself is never stored).
 */

/** A portal link as first written. */
interface NewPortalLink {
  teamId: string;
  projectId: string;
  subscriberId: string;
  /** Expiry, epoch MILLISECONDS. */
  expiresAtMs: number;
  /** The item's TTL (housekeeping), epoch SECONDS. */
  ttlSeconds: number;
}

/**
 * The portal session store adapter: one-time portal links, free joins' confirmation links and portal sessions, each
 * stored, read and taken or deleted by the SHA-256 of its credential.
 */
export const portalSessionStore = {
  /**
   * Stores a new portal link under the SHA-256 of its token (only if absent: a repeated hash throws
   * ConditionFailedError).
   */
  async createLink(store: Store, linkSha256: string, link: NewPortalLink): Promise<void> {
    await store.put({
      Item: {
        ...keys.portalLink(linkSha256),
        entity: entity.portalLink,
        team_id: link.teamId,
        project_id: link.projectId,
        subscriber_id: link.subscriberId,
        expires_at_ms: link.expiresAtMs,
        expires_at: link.ttlSeconds,
      },
      ConditionExpression: ITEM_ABSENT_CONDITION.expression,
    });
  },

  /** The stored portal link of a token's SHA-256 (strongly consistent), or undefined. */
  async readLink(store: Store, linkSha256: string): Promise<Item | undefined> {
    return store.get(keys.portalLink(linkSha256));
  },

  /** Deletes a portal link if it still exists: true when this call deleted it, false when it was gone (used). */
  async takeLink(store: Store, linkSha256: string): Promise<boolean> {
    try {
      await store.delete({ Key: keys.portalLink(linkSha256), ConditionExpression: ITEM_EXISTS_CONDITION.expression });
      return true;
    } catch (error) {
      if (error instanceof ConditionFailedError) return false;
      throw error;
    }
  },

  /** Stores a free join's confirmation link under the SHA-256 of its token (only if absent), TTL `ttlSeconds`. */
  async createConfirmation(
    store: Store,
    linkSha256: string,
    link: NewPortalLink & { subscriptionId: string },
  ): Promise<void> {
    await store.put({
      Item: {
        ...keys.joinConfirmation(linkSha256),
        entity: entity.joinConfirmation,
        team_id: link.teamId,
        project_id: link.projectId,
        subscriber_id: link.subscriberId,
        subscription_id: link.subscriptionId,
        expires_at_ms: link.expiresAtMs,
        expires_at: link.ttlSeconds,
      },
      ConditionExpression: ITEM_ABSENT_CONDITION.expression,
    });
  },

  /** The stored confirmation link of a token's SHA-256 (strongly consistent), or undefined. */
  async readConfirmation(store: Store, linkSha256: string): Promise<Item | undefined> {
    return store.get(keys.joinConfirmation(linkSha256));
  },

  /** Adds to `tx` the deletion of a confirmation link that must still exist (a used one fails: a lost race). */
  takeConfirmation(tx: Transaction, linkSha256: string): void {
    tx.delete(keys.joinConfirmation(linkSha256), { condition: ITEM_EXISTS_CONDITION.expression });
  },

  /** The key of the portal session of a cookie value's SHA-256 (for the idle-session touch). */
  sessionKey(sessionSha256: string): Key {
    return keys.portalSession(sessionSha256);
  },

  /**
   * Stores a new portal session (its fields, TTL `ttlSeconds` in epoch SECONDS) under the SHA-256 of its cookie value,
   * only if absent.
   */
  async createSession(
    store: Store,
    sessionSha256: string,
    session: Record<string, unknown>,
    ttlSeconds: number,
  ): Promise<void> {
    await store.put({
      Item: { ...keys.portalSession(sessionSha256), entity: entity.portalSession, ...session, expires_at: ttlSeconds },
      ConditionExpression: ITEM_ABSENT_CONDITION.expression,
    });
  },

  /** The stored portal session of a cookie value's SHA-256 (strongly consistent), or undefined. */
  async readSession(store: Store, sessionSha256: string): Promise<Item | undefined> {
    return store.get(keys.portalSession(sessionSha256));
  },

  /** Deletes the portal session of a cookie value's SHA-256 (nothing happens when there is none). */
  async deleteSession(store: Store, sessionSha256: string): Promise<void> {
    await store.delete({ Key: keys.portalSession(sessionSha256) });
  },
};
