import { createHash } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Clock } from '../clock.js';
import { ProblemError } from '../errors.js';
import { keys } from '../store/keys.js';
import type { Store } from '../store/store.js';

/** Keys are kept 24 hours (DESIGN D3). */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;
/** A claim older than this (seconds) is considered abandoned (the first request crashed) and may be taken over. */
export const IDEMPOTENCY_LOCK_SECONDS = 60;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The response stored under a key and replayed on a retry. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  /** The JSON body as sent (string). */
  body: string;
}

/** Result of {@link beginIdempotentRequest}. */
export type IdempotencyClaim = { kind: 'claimed'; complete(response: StoredResponse): Promise<void>; release(): Promise<void> } | { kind: 'replay'; response: StoredResponse };

/**
 * Validates an `Idempotency-Key` value: absent is allowed (null), anything but a UUID throws
 * VALIDATION_FAILED (DESIGN D3). `path` names the field in the problem (`header.idempotency-key` or
 * `arguments.idempotency_key`).
 */
export function parseIdempotencyKey(value: string | undefined, path: string): string | null {
  if (value === undefined || value === '') return null;
  if (!UUID.test(value)) {
    throw new ProblemError('VALIDATION_FAILED', 'The idempotency key must be a UUID.', { errors: [{ path, message: 'must be a UUID' }] });
  }
  return value.toLowerCase();
}

/** SHA-256 fingerprint of what makes two requests "the same" (method, path, body). */
export function requestFingerprint(parts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\u0000');
  return hash.digest('hex');
}

/**
 * Claims an idempotency key for a team with one conditional write (DESIGN D3):
 * - new key (or expired, or an abandoned claim) → `claimed`; call `complete()` with the response to store
 *   it, or `release()` when the request failed (a failed write is not stored, so a retry runs again);
 * - same key, same fingerprint, completed → `replay` with the stored response;
 * - same key, other fingerprint → throws IDEMPOTENCY_KEY_REUSED (422);
 * - same key while the first request still runs → throws IDEMPOTENCY_KEY_IN_USE (409).
 * Concurrent duplicates race on the conditional put, so exactly one runs.
 */
export async function beginIdempotentRequest(store: Store, clock: Clock, teamId: string, key: string, fingerprint: string): Promise<IdempotencyClaim> {
  const nowSeconds = Math.floor(clock.nowMs() / 1000);
  const Key = keys.idempotency(teamId, key);
  try {
    await store.document.send(
      new PutCommand({
        TableName: store.tableName,
        Item: { ...Key, entity: 'idempotency', state: 'in_progress', fingerprint, locked_until: nowSeconds + IDEMPOTENCY_LOCK_SECONDS, expires_at: nowSeconds + IDEMPOTENCY_RETENTION_SECONDS },
        ConditionExpression: 'attribute_not_exists(pk) OR expires_at < :now OR (#state = :in_progress AND locked_until < :now)',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':now': nowSeconds, ':in_progress': 'in_progress' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    const existing = (error as ConditionalCheckFailedException & { Item?: Record<string, { S?: string; N?: string }> }).Item;
    const existingFingerprint = existing?.fingerprint?.S;
    if (existingFingerprint !== fingerprint) {
      throw new ProblemError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used for a different request. Use a new UUID for each distinct write.');
    }
    if (existing?.state?.S !== 'completed' || !existing.response?.S) {
      throw new ProblemError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed. Retry shortly.', { headers: { 'Retry-After': '1' } });
    }
    return { kind: 'replay', response: JSON.parse(existing.response.S) as StoredResponse };
  }
  return {
    kind: 'claimed',
    complete: async (response) => {
      await store.document.send(
        new UpdateCommand({
          TableName: store.tableName,
          Key,
          UpdateExpression: 'SET #state = :completed, #response = :response REMOVE locked_until',
          ExpressionAttributeNames: { '#state': 'state', '#response': 'response' },
          ExpressionAttributeValues: { ':completed': 'completed', ':response': JSON.stringify(response) },
        }),
      );
    },
    release: async () => {
      await store.document.send(
        new DeleteCommand({
          TableName: store.tableName,
          Key,
          ConditionExpression: '#state = :in_progress AND fingerprint = :fingerprint',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':in_progress': 'in_progress', ':fingerprint': fingerprint },
        }),
      ).catch((error) => {
        if (!(error instanceof ConditionalCheckFailedException)) throw error;
      });
    },
  };
}
