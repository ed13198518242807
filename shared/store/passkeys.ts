import { conditionally, ITEM_ABSENT, ITEM_EXISTS } from './expressions.js';
import { entity, keys, secondaryIndex } from './keys.js';
import type { Item } from './requests.js';
import { ConditionFailedError, type Store } from './store.js';
import { ttlAttribute } from './ttl.js';

/**
 * Team members' passkeys and the WebAuthn challenges of their ceremonies (DESIGN D21, D35). A passkey is keyed by its
 * public credential id and listed per member on the GSI; a challenge is an item used once. The domain
 * (`team-members/passkeys.ts`) runs the ceremonies; these adapters read and write the items.
 */

/** A WebAuthn challenge item is removed by TTL this long (seconds) after it can no longer be answered. */
const CHALLENGE_RETENTION_SECONDS = 3600;

/** What a ceremony's challenge is for, and the session a registration is bound to. */
interface ChallengeBinding {
  purpose: 'registration' | 'authentication';
  sessionId?: string;
}

/** Stores and takes WebAuthn challenges. */
export const webauthnChallengeStore = {
  /** Stores challenge `id` (the value to expect, its binding), answerable until `expiresAtMs` (epoch ms). */
  async create(
    store: Store,
    challenge: { id: string; challenge: string; expiresAtMs: number } & ChallengeBinding,
  ): Promise<void> {
    await store.put({
      Item: {
        ...keys.webauthnChallenge(challenge.id),
        entity: entity.webauthnChallenge,
        id: challenge.id,
        challenge: challenge.challenge,
        purpose: challenge.purpose,
        session_id: challenge.sessionId,
        expires_at_ms: challenge.expiresAtMs,
        expires_at: ttlAttribute(challenge.expiresAtMs, CHALLENGE_RETENTION_SECONDS),
      },
    });
  },

  /** Deletes challenge `id` and returns it as it was, or undefined when there is none (unknown or taken already). */
  async take(store: Store, id: string): Promise<Item | undefined> {
    try {
      return await store.delete({
        Key: keys.webauthnChallenge(id),
        ConditionExpression: ITEM_EXISTS,
        ReturnValues: 'ALL_OLD',
      });
    } catch (error) {
      if (error instanceof ConditionFailedError) return undefined;
      throw error;
    }
  },
};

/** Stores, reads and lists passkeys. */
export const passkeyStore = {
  /** Member `memberId`'s passkeys of `teamId` as items, at most 100 (one Query on the GSI). */
  async listOfMember(store: Store, teamId: string, memberId: string): Promise<Item[]> {
    const result = await store.query({
      IndexName: secondaryIndex.name,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': secondaryIndex.partitionKey },
      ExpressionAttributeValues: { ':pk': keys.memberPasskeysIndex(teamId, memberId) },
      Limit: 100,
    });
    return result.items;
  },

  /**
   * Stores a member's new passkey (public key as base64url text, signature counter, transports); false when a
   * passkey with this credential id is stored already (a conditional PutItem).
   */
  create(
    store: Store,
    passkey: {
      id: string;
      teamId: string;
      memberId: string;
      publicKey: string;
      counter: number;
      transports?: string[];
      createdAt: string;
    },
  ): Promise<boolean> {
    return conditionally(
      store.put({
        Item: {
          ...keys.passkey(passkey.id),
          entity: entity.passkey,
          [secondaryIndex.partitionKey]: keys.memberPasskeysIndex(passkey.teamId, passkey.memberId),
          [secondaryIndex.sortKey]: `${passkey.createdAt}#${passkey.id}`,
          id: passkey.id,
          team_id: passkey.teamId,
          member_id: passkey.memberId,
          public_key: passkey.publicKey,
          counter: passkey.counter,
          transports: passkey.transports,
          created_at: passkey.createdAt,
        },
        ConditionExpression: ITEM_ABSENT,
      }),
    );
  },

  /** The stored passkey of credential id `id` as an item, or undefined. */
  find(store: Store, id: string): Promise<Item | undefined> {
    return store.get(keys.passkey(id));
  },

  /** Records a sign-in with passkey `id`: its new signature counter and the time (ISO) it was used. */
  async recordUse(store: Store, id: string, use: { counter: number; usedAt: string }): Promise<void> {
    await store.update({
      Key: keys.passkey(id),
      UpdateExpression: 'SET #counter = :counter, last_used_at = :now',
      ExpressionAttributeNames: { '#counter': 'counter' },
      ExpressionAttributeValues: { ':counter': use.counter, ':now': use.usedAt },
    });
  },
};
