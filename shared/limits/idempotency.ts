import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import { ProblemError } from '../errors.js';
import { entity, keys } from '../store/keys.js';
import { ConditionFailedError, type Store } from '../store/store.js';

/** Keys are kept 24 hours (DESIGN D3). */
export const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;
/**
 * A claim older than this (seconds) is considered abandoned (the first request crashed) and may be taken
 * over. Longer than any REST or tool Lambda's timeout (10 s), so a request still running is never taken over.
 */
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
export type IdempotencyClaim =
  | {
      kind: 'claimed';
      /** Stores the response (one UpdateItem), unless the effect's transaction already stored exactly it. */
      complete(response: StoredResponse): Promise<void>;
      /** Deletes the claim (the request failed, so a retry runs again). */
      release(): Promise<void>;
      /**
       * The completion as one update of a unit of work (DESIGN D3, D14): the effect's transaction stores the
       * response with the effect, so a crash between them can never run the effect twice. `complete` then
       * writes nothing when the final response is the same.
       */
      completionInTransaction(response: StoredResponse): { key: { pk: string; sk: string }; expression: string; condition: string; names: Record<string, string>; values: Record<string, unknown> };
    }
  | { kind: 'replay'; response: StoredResponse };

/**
 * Validates an `Idempotency-Key` value: absent is allowed (null), anything but a UUID throws
 * VALIDATION_FAILED (DESIGN D3). `path` names the field in the problem (`header.idempotency-key` or
 * `arguments.idempotency_key`). Returns the key in lower case.
 */
export function parseIdempotencyKey(value: string | undefined, path: string): string | null {
  if (value === undefined || value === '') return null;
  if (!UUID.test(value)) {
    throw new ProblemError('VALIDATION_FAILED', 'The idempotency key must be a UUID.', { errors: [{ path, message: 'must be a UUID' }] });
  }
  return value.toLowerCase();
}

/**
 * SHA-256 fingerprint (hex) of what makes two requests "the same": both surfaces pass the calling token's
 * id first (D3: a stored response is bound to the token that made it, so the same key from another token
 * is REUSED, never a replay of, say, a minted secret), then REST passes method, path, query and raw body
 * and the tool server `mcp`, the tool name and its validated arguments. Requests of different routes or
 * surfaces never share a fingerprint, so a key reused across them is REUSED.
 */
export function requestFingerprint(parts: readonly string[]): string {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\u0000');
  return hash.digest('hex');
}

/**
 * The stored record never holds the key or the response in the clear: it is addressed by SHA-256 of the
 * key, and the response (which may carry a token secret or a webhook secret shown once) is sealed with
 * AES-256-GCM under a key derived (HKDF-SHA256) from the idempotency key and the team. Only a caller
 * presenting the key again can read it, so the table holds no usable credential (DESIGN D2).
 */
function recordAddress(teamId: string, key: string): { pk: string; sk: string } {
  return keys.idempotency(teamId, createHash('sha256').update(key).digest('hex'));
}

function sealingKey(teamId: string, key: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, teamId, 'membership-service idempotent response v1', 32));
}

function seal(teamId: string, key: string, response: StoredResponse): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(teamId, key), iv);
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(response), 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64')).join('.');
}

function open(teamId: string, key: string, sealed: string): StoredResponse {
  const [iv, tag, ciphertext] = sealed.split('.').map((part) => Buffer.from(part, 'base64'));
  const decipher = createDecipheriv('aes-256-gcm', sealingKey(teamId, key), iv);
  decipher.setAuthTag(tag);
  return JSON.parse(Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8')) as StoredResponse;
}

/**
 * Claims an idempotency key for a team with one conditional write (DESIGN D3); `key` is a value
 * returned by {@link parseIdempotencyKey}, `fingerprint` one of {@link requestFingerprint}:
 * - new key (or older than 24 hours, or an abandoned claim) → `claimed`; call `complete()` with the
 *   response to store it, or `release()` when the request failed (a failed write is not stored, so a
 *   retry runs again);
 * - same key, same fingerprint, completed → `replay` with the stored response;
 * - same key, other fingerprint → throws IDEMPOTENCY_KEY_REUSED (422);
 * - same key while the first request still runs → throws IDEMPOTENCY_KEY_IN_USE (409, `Retry-After: 1`).
 * Concurrent duplicates race on the conditional put, so exactly one runs. One DynamoDB request
 * (plus one for `complete`/`release`). `complete` and `release` act only on this claim (a random claim id).
 */
export async function beginIdempotentRequest(store: Store, clock: Clock, teamId: string, key: string, fingerprint: string): Promise<IdempotencyClaim> {
  const nowSeconds = Math.floor(clock.nowMs() / 1000);
  const Key = recordAddress(teamId, key);
  const claimId = randomUUID();
  try {
    await store.put({
        Item: { ...Key, entity: entity.idempotency, state: 'in_progress', claim_id: claimId, fingerprint, locked_until: nowSeconds + IDEMPOTENCY_LOCK_SECONDS, expires_at: nowSeconds + IDEMPOTENCY_RETENTION_SECONDS },
        ConditionExpression: 'attribute_not_exists(pk) OR expires_at < :now OR (#state = :in_progress AND locked_until < :now)',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':now': nowSeconds, ':in_progress': 'in_progress' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    const existing = error.item as { fingerprint?: string; state?: string; response?: string } | undefined;
    if (existing?.fingerprint !== fingerprint) {
      throw new ProblemError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used for a different request. Use a new UUID for each distinct write.');
    }
    if (existing?.state !== 'completed' || !existing.response) {
      throw new ProblemError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed. Retry shortly.', { headers: { 'Retry-After': '1' } });
    }
    return { kind: 'replay', response: open(teamId, key, existing.response) };
  }
  const ownClaim = {
    ConditionExpression: '#state = :in_progress AND claim_id = :claim',
    ExpressionAttributeNames: { '#state': 'state' },
  };
  /** `complete` after the effect's transaction stored a provisional response: the same claim, in progress or completed. */
  const ownCompletion = {
    ConditionExpression: '(#state = :in_progress OR #state = :completed) AND claim_id = :claim',
    ExpressionAttributeNames: { '#state': 'state' },
  };
  const ignoreLostClaim = (error: unknown) => {
    if (!(error instanceof ConditionFailedError)) throw error;
  };
  let storedInTransaction: string | null = null;
  return {
    kind: 'claimed',
    completionInTransaction: (response) => {
      storedInTransaction = JSON.stringify(response);
      return {
        key: Key,
        // The claim id stays until `complete`, which may still replace the response by the final one.
        expression: 'SET #state = :completed, #response = :response REMOVE locked_until',
        condition: ownClaim.ConditionExpression,
        names: { ...ownClaim.ExpressionAttributeNames, '#response': 'response' },
        values: { ':completed': 'completed', ':response': seal(teamId, key, response), ':in_progress': 'in_progress', ':claim': claimId },
      };
    },
    complete: async (response) => {
      if (storedInTransaction !== null && storedInTransaction === JSON.stringify(response)) return;
      await store
        .update({
            Key,
            UpdateExpression: 'SET #state = :completed, #response = :response REMOVE locked_until, claim_id',
            ConditionExpression: ownCompletion.ConditionExpression,
            ExpressionAttributeNames: { ...ownClaim.ExpressionAttributeNames, '#response': 'response' },
            ExpressionAttributeValues: { ':completed': 'completed', ':response': seal(teamId, key, response), ':in_progress': 'in_progress', ':claim': claimId },
        })
        .catch(ignoreLostClaim);
    },
    release: async () => {
      await store
        .delete({
            Key,
            ...ownClaim,
            ExpressionAttributeValues: { ':in_progress': 'in_progress', ':claim': claimId },
        })
        .catch(ignoreLostClaim);
    },
  };
}
