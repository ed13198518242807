import { conditionally, ITEM_ABSENT } from './expressions.js';
import { entity } from './keys.js';
import type { Key, PutRequest, TransactionItem } from './requests.js';
import { ConditionFailedError, type Store } from './store.js';

/**
 * The idempotency records (DESIGN D3): one item per team and idempotency key (addressed by the key's SHA-256), written
 * by the request that holds the key. Its hot path keeps hand-written expressions: each method is one request.
 */

/** A stored idempotency record (DESIGN D3): one definition for both modes of `beginIdempotentRequest`. */
export interface IdempotencyRecord {
  /** `requestFingerprint` of the request that holds the key. */
  fingerprint?: string;
  state?: 'in_progress' | 'completed';
  /** The response, sealed by `shared/limits/idempotency.ts`; present once completed. */
  response?: string;
  /** Random id of the request that wrote the record (its completion and release act only on it). */
  claim_id?: string;
  /** Epoch seconds: an in-progress claim older than this may be taken over. */
  locked_until?: number;
  /** Epoch seconds: the record's end (DynamoDB TTL). */
  expires_at?: number;
}

/** The request holding an idempotency key: the record's key, its claim id and fingerprint, now in epoch seconds. */
export interface IdempotencyHolder {
  key: Key;
  claimId: string;
  fingerprint: string;
  nowSeconds: number;
}

/** What {@link idempotencyRecords.claim} did: took the key, or found the record (ALL_OLD) that holds it. */
export type IdempotencyClaimOutcome = { claimed: true } | { claimed: false; record: IdempotencyRecord | undefined };

const CLAIMED: IdempotencyClaimOutcome = { claimed: true };

/** Condition: the record is this request's claim, still in progress. */
const OWN_CLAIM = '#state = :in_progress AND claim_id = :claim';
/** Condition: the record is this request's claim, in progress or completed by the effect's transaction. */
const OWN_COMPLETION = '(#state = :in_progress OR #state = :completed) AND claim_id = :claim';
/** Condition: the key is free: no record, or an expired one (not yet removed by the TTL). */
const KEY_FREE = `${ITEM_ABSENT} OR expires_at < :now`;

/** The values of {@link OWN_CLAIM} and the completion's sealed response. */
const completionValues = (holder: IdempotencyHolder, sealedResponse: string) => ({
  ':completed': 'completed',
  ':response': sealedResponse,
  ':in_progress': 'in_progress',
  ':claim': holder.claimId,
});

/** The conditional put of a completed record, written only if the key is free ('in-transaction' mode). */
const completedRecordPut = (holder: IdempotencyHolder, sealedResponse: string, expiresAt: number): PutRequest => ({
  Item: {
    ...holder.key,
    entity: entity.idempotency,
    state: 'completed',
    claim_id: holder.claimId,
    fingerprint: holder.fingerprint,
    response: sealedResponse,
    expires_at: expiresAt,
  },
  ConditionExpression: KEY_FREE,
  ExpressionAttributeValues: { ':now': holder.nowSeconds },
});

/** The idempotency records' adapter: claim, complete, release and read a key's record; times in epoch seconds. */
export const idempotencyRecords = {
  /**
   * Claims the key for `holder` (one conditional PutItem of an in-progress record locked until `lockedUntil`, kept
   * until `expiresAt`, epoch seconds) when it is free or its claim was abandoned; else resolves the record holding it.
   */
  claim(store: Store, holder: IdempotencyHolder, lockedUntil: number, expiresAt: number) {
    return store
      .put({
        Item: {
          ...holder.key,
          entity: entity.idempotency,
          state: 'in_progress',
          claim_id: holder.claimId,
          fingerprint: holder.fingerprint,
          locked_until: lockedUntil,
          expires_at: expiresAt,
        },
        ConditionExpression: `${KEY_FREE} OR (#state = :in_progress AND locked_until < :now)`,
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':now': holder.nowSeconds, ':in_progress': 'in_progress' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      })
      .then(
        (): IdempotencyClaimOutcome => CLAIMED,
        (error: unknown): IdempotencyClaimOutcome => {
          if (!(error instanceof ConditionFailedError)) throw error;
          return { claimed: false, record: error.item as IdempotencyRecord | undefined };
        },
      );
  },

  /**
   * The completion of `holder`'s claim with `sealedResponse` as a transaction item (an Update conditional on the
   * claim being its own, in progress; the claim id stays). A failed condition fails the transaction.
   */
  claimCompletionItem(holder: IdempotencyHolder, sealedResponse: string): TransactionItem {
    return {
      Update: {
        Key: holder.key,
        UpdateExpression: 'SET #state = :completed, #response = :response REMOVE locked_until',
        ConditionExpression: OWN_CLAIM,
        ExpressionAttributeNames: { '#state': 'state', '#response': 'response' },
        ExpressionAttributeValues: completionValues(holder, sealedResponse),
      },
    };
  },

  /**
   * The completed record of `holder` with `sealedResponse` (kept until `expiresAt`, epoch seconds) as a transaction
   * item: a Put conditional on the key being free (no record, or an expired one). A failed condition fails it.
   */
  completedRecordItem(holder: IdempotencyHolder, sealedResponse: string, expiresAt: number): TransactionItem {
    return { Put: completedRecordPut(holder, sealedResponse, expiresAt) };
  },

  /**
   * Stores the completed record of `holder` alone (one conditional PutItem, as {@link completedRecordItem}): true when
   * stored, false when the key was not free.
   */
  putCompleted(store: Store, holder: IdempotencyHolder, sealedResponse: string, expiresAt: number): Promise<boolean> {
    return conditionally(store.put(completedRecordPut(holder, sealedResponse, expiresAt)));
  },

  /**
   * Completes `holder`'s claim with `sealedResponse` (one UpdateItem; the lock and claim id removed), in progress or
   * completed by the effect's transaction: true when done, false when the record is no longer its claim.
   */
  complete(store: Store, holder: IdempotencyHolder, sealedResponse: string): Promise<boolean> {
    return conditionally(
      store.update({
        Key: holder.key,
        UpdateExpression: 'SET #state = :completed, #response = :response REMOVE locked_until, claim_id',
        ConditionExpression: OWN_COMPLETION,
        ExpressionAttributeNames: { '#state': 'state', '#response': 'response' },
        ExpressionAttributeValues: completionValues(holder, sealedResponse),
      }),
    );
  },

  /**
   * Deletes `holder`'s claim still in progress (one DeleteItem), so a retry runs again; rejects with
   * ConditionFailedError when the record is no longer its claim.
   */
  async release(store: Store, holder: IdempotencyHolder): Promise<void> {
    await store.delete({
      Key: holder.key,
      ConditionExpression: OWN_CLAIM,
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: { ':in_progress': 'in_progress', ':claim': holder.claimId },
    });
  },

  /** The record under `key` (one strongly consistent GetItem), or undefined; expired records are returned too. */
  read(store: Store, key: Key): Promise<IdempotencyRecord | undefined> {
    return store.get(key, { consistent: true });
  },
};
