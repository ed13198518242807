import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes, randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import { ProblemError } from '../errors.js';
import { idempotencyRecords, type IdempotencyHolder, type IdempotencyRecord } from '../store/idempotency-records.js';
import { keys } from '../store/keys.js';
import type { RequestItem } from '../store/request-scope.js';
import type { Store } from '../store/store.js';

/** Keys are kept 24 hours (DESIGN D3). */
const IDEMPOTENCY_RETENTION_SECONDS = 24 * 60 * 60;
/**
 * A claim older than this (seconds) is considered abandoned (the first request crashed) and may be taken
 * over (DESIGN D3): a retry after a crash is answered IDEMPOTENCY_KEY_IN_USE for at most this long. Every
 * Lambda that runs operations (REST 10 s; the tool server, the dashboard and the public pages) times out
 * within it (`lib/`, asserted by the stack test), so a request still running is never taken over.
 */
export const IDEMPOTENCY_LOCK_SECONDS = 15;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The response stored under a key and replayed on a retry. */
export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  /** The JSON body as sent (string). */
  body: string;
}

/**
 * How an operation takes `Idempotency-Key` (D3): `'claim'` (default) claims before running, so a concurrent duplicate
 * gets 409; `'in-transaction'` (one unit of work only) stores the COMPLETED record in the effect's transaction: free on
 * success, and a concurrent duplicate replays the first response (1 GetItem).
 */
export type IdempotencyMode = 'claim' | 'in-transaction';

/** Result of {@link beginIdempotentRequest}. */
export type IdempotencyClaim =
  | {
      kind: 'claimed';
      /**
       * Stores the response (one UpdateItem, or in `'in-transaction'` mode one conditional PutItem when no
       * transaction carried the record), unless the effect's transaction already stored exactly it.
       * `storedWithEffect`: whether the request's first transaction committed (the request scope's
       * `committedWith`); omitted means "if `completionInTransaction` was called".
       */
      complete(response: StoredResponse, storedWithEffect?: boolean): Promise<void>;
      /**
       * After the operation failed with `error` (nothing of this request is stored): in `'claim'` mode
       * deletes the claim (so a retry runs again) and rethrows `error`; in `'in-transaction'` mode reads the
       * record once (GetItem) and returns the stored response to replay (completed, same fingerprint),
       * throws IDEMPOTENCY_KEY_REUSED (other fingerprint) or IDEMPOTENCY_KEY_IN_USE (a claim still in
       * progress), or rethrows `error` when there is no record.
       */
      settleFailure(error: unknown): Promise<StoredResponse>;
      /**
       * The record's write as one item of the effect's transaction (DESIGN D3, D14: the response is stored
       * with the effect, so a crash between them can never run the effect twice): in `'claim'` mode the
       * completion of the claim (an Update); in `'in-transaction'` mode the Put of the completed record,
       * conditional on the key being free (no record, or an expired one), whose failure throws
       * IDEMPOTENCY_KEY_IN_USE ({@link keyInUse}: never a lost race the operation would retry).
       */
      completionInTransaction(response: StoredResponse): RequestItem;
    }
  | { kind: 'replay'; response: StoredResponse };

/**
 * IDEMPOTENCY_KEY_IN_USE (409, `Retry-After: 1`): the key is held by a request still running — a claim in
 * progress, or, for an `'in-transaction'` record whose condition failed, a duplicate that committed first
 * or another request's record. A ProblemError, never a ConditionFailedError, so a transition's lost-race
 * loop (`isLostRace`) does not retry it; the pipeline then reads the record ({@link IdempotencyClaim}
 * `settleFailure`) and answers by it.
 */
function keyInUse(): ProblemError {
  return new ProblemError(
    'IDEMPOTENCY_KEY_IN_USE',
    'A request with this Idempotency-Key is still being processed. Retry shortly.',
    { headers: { 'Retry-After': '1' } },
  );
}

/**
 * Validates an `Idempotency-Key` value: absent is allowed (null), anything but a UUID throws
 * VALIDATION_FAILED (DESIGN D3). `path` names the field in the problem (`header.idempotency-key` or
 * `arguments.idempotency_key`). Returns the key in lower case.
 */
export function parseIdempotencyKey(value: string | undefined, path: string): string | null {
  if (value === undefined || value === '') return null;
  if (!UUID.test(value)) {
    throw new ProblemError('VALIDATION_FAILED', 'The idempotency key must be a UUID.', {
      errors: [{ path, message: 'must be a UUID' }],
    });
  }
  return value.toLowerCase();
}

/**
 * The idempotency key (a UUID) of a request that carries a natural single-use id instead of an `Idempotency-Key`
 * (DESIGN D3): a Discord callback's `state`, a bot command's interaction or update id. The same `name` gives the same
 * key.
 */
export function derivedIdempotencyKey(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
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
 * What a request holding `fingerprint` gets from the record `existing` of its key (DESIGN D3), shared by
 * both modes of {@link beginIdempotentRequest}: the stored response to replay (completed, same
 * fingerprint); throws IDEMPOTENCY_KEY_REUSED (422) for another fingerprint (another request, route,
 * surface or token) and IDEMPOTENCY_KEY_IN_USE (409, `Retry-After: 1`) while the first still runs.
 */
function answerOfRecord(
  teamId: string,
  key: string,
  fingerprint: string,
  existing: IdempotencyRecord | undefined,
): StoredResponse {
  if (existing?.fingerprint !== fingerprint) {
    throw new ProblemError(
      'IDEMPOTENCY_KEY_REUSED',
      'This Idempotency-Key was already used for a different request. Use a new UUID for each distinct write.',
    );
  }
  if (existing?.state !== 'completed' || !existing.response) {
    throw keyInUse();
  }
  return open(teamId, key, existing.response);
}

/**
 * Takes an idempotency key (D3); a key older than 24 h or an abandoned claim counts as new. `'claim'`: one conditional
 * write → `claimed` (then `complete()` or `settleFailure()`), `replay`, or throws IDEMPOTENCY_KEY_REUSED (422) /
 * IDEMPOTENCY_KEY_IN_USE (409, `Retry-After: 1`). `'in-transaction'`: {@link IdempotencyMode}.
 */
export async function beginIdempotentRequest(
  store: Store,
  clock: Clock,
  teamId: string,
  key: string,
  fingerprint: string,
  mode: IdempotencyMode = 'claim',
): Promise<IdempotencyClaim> {
  const nowSeconds = Math.floor(clock.nowMs() / 1000);
  // `complete` and release act only on this request's own record (its random claim id).
  const holder: IdempotencyHolder = { key: recordAddress(teamId, key), claimId: randomUUID(), fingerprint, nowSeconds };
  const expiresAt = nowSeconds + IDEMPOTENCY_RETENTION_SECONDS;
  if (mode === 'claim') {
    const outcome = await idempotencyRecords.claim(store, holder, nowSeconds + IDEMPOTENCY_LOCK_SECONDS, expiresAt);
    if (!outcome.claimed) return { kind: 'replay', response: answerOfRecord(teamId, key, fingerprint, outcome.record) };
  }
  let storedInTransaction: string | null = null;
  return {
    kind: 'claimed',
    completionInTransaction: (response) => {
      storedInTransaction = JSON.stringify(response);
      const sealed = seal(teamId, key, response);
      if (mode === 'in-transaction')
        return { item: idempotencyRecords.completedRecordItem(holder, sealed, expiresAt), onConditionFailed: keyInUse };
      // The claim id stays until `complete`, which may still replace the response by the final one.
      return idempotencyRecords.claimCompletionItem(holder, sealed);
    },
    complete: async (response, storedWithEffect = storedInTransaction !== null) => {
      // A lost claim (the key not free, or no longer this request's claim) is left as it is: the writes resolve false.
      if (!storedWithEffect || storedInTransaction === null) {
        // No transaction carried the record (the operation wrote nothing, or not in a unit of work).
        if (mode === 'in-transaction') {
          await idempotencyRecords.putCompleted(store, holder, seal(teamId, key, response), expiresAt);
          return;
        }
      } else if (storedInTransaction === JSON.stringify(response)) {
        return;
      }
      await idempotencyRecords.complete(store, holder, seal(teamId, key, response));
    },
    settleFailure: async (error) => {
      if (mode === 'claim') {
        await idempotencyRecords.release(store, holder).catch(() => undefined);
        throw error;
      }
      const existing = await idempotencyRecords.read(store, holder.key);
      // An expired record (not yet removed by the TTL) is no record.
      if (!existing || (existing.expires_at ?? 0) < nowSeconds) throw error;
      return answerOfRecord(teamId, key, fingerprint, existing);
    },
  };
}
