import pMap from 'p-map';
import type { Principal } from '../../auth/principal.js';
import { canAccessProject, requireProjectAccess } from '../../auth/authorize.js';
import { isoTime } from '../../clock.js';
import { scheduleDeadline } from '../../deadlines/deadline.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { logger } from '../../logger.js';
import { entity, keys, sortKeyPrefix } from '../../store/keys.js';
import { ConditionFailedError, TransactionCanceledError, queryPage, type Item, type Page, type Store } from '../../store/store.js';
import { outsideRequestScope } from '../../store/request-scope.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { codeDigest, codeSuffix, newCode, normalizeCode } from './codes.js';
import { requirePlanOfProject } from './plan.js';
import type { AccessCode, AccessCodeBatch, AccessCodeEffect, AccessCodeStatus, GeneratedAccessCodes } from './schema.js';

/**
 * Persistence and use cases of access codes (DESIGN D14, D18), over the Store port. A project's codes
 * and batches live in its own partition `TEAM#<team>#PROJECT#<project>#ACCESS_CODE`:
 * - code items `ACCESS_CODE#<batch>#<code id>` (a batch is one key range): the public fields, never the
 *   code — only its digest is kept, in the lookup item, and its suffix;
 * - batch items `ACCESS_CODE_BATCH#<batch>`, `state` `pending` while the batch is being written and
 *   `active` once it is complete: codes are visible (reads) and redeemable only in an active batch.
 * Each code also has, in partitions of their own (only ever read by key; see `keys.ts`):
 * - a lookup item keyed by the SHA-256 of the normalized code → the code's id, batch and key: its
 *   conditional put makes codes unique per project (case-insensitive), and a redemption
 *   (`redemption.ts`) finds a presented code by it;
 * - a reference item keyed by the code id → its project and batch, for reads by id alone; beside it,
 *   one redemption item per subscriber who redeemed the code (`keys.accessCodeRedemption`).
 *
 * Stored attributes are those of {@link AccessCode} except `expires_at` (stored as `code_expires_at`,
 * absent for "never": `expires_at` is the table's TTL attribute, DESIGN §3) and `status`, whose stored
 * value is `active`, `exhausted`, `expired` or `revoked` and is read through {@link effectiveStatus}.
 */

/** Codes written per transaction: three items each (code, lookup, reference), under DynamoDB's 100. */
const CODES_PER_TRANSACTION = 33;
/** Chunk transactions of one batch in flight at once. */
const CHUNK_CONCURRENCY = 6;
/** Times a chunk is rewritten with fresh codes after a collision with an existing code, or after a transaction conflict. */
const CHUNK_ATTEMPTS = 5;
/** Base wait (MILLISECONDS) before rewriting a chunk whose transaction was cancelled by a conflict or throttling. */
const CONFLICT_BACKOFF_MS = 50;

/** The input of {@link generateAccessCodes} (the validated request, defaults applied). */
export interface GenerateAccessCodesInput {
  project_id: string;
  plan_id: string;
  count: number;
  prefix?: string;
  effect: AccessCodeEffect;
  access_days: number | null;
  max_redemptions: number | null;
  expires_at: string | null;
}

/** The query of {@link listAccessCodes}. */
export interface ListAccessCodesInput {
  project_id: string;
  limit: number;
  cursor?: string;
  batch_id?: string;
  plan_id?: string;
  status?: AccessCodeStatus;
}

const notFound = (codeId: string) => new ProblemError('NOT_FOUND', `No access code ${codeId}.`);

/**
 * The status a code has at `nowMs` (epoch MILLISECONDS): `revoked` and `exhausted` as stored; an
 * `active` code whose `code_expires_at` has passed is `expired` (before the deadline worker records it).
 */
function effectiveStatus(item: Item, nowMs: number): AccessCodeStatus {
  const stored = item.status as AccessCodeStatus;
  if (stored !== 'active') return stored;
  const expiresAt = item.code_expires_at as string | undefined;
  return expiresAt !== undefined && Date.parse(expiresAt) <= nowMs ? 'expired' : 'active';
}

/** The public view of a stored code item at `nowMs` (epoch MILLISECONDS). */
export function toAccessCode(item: Item, nowMs: number): AccessCode {
  return {
    id: item.id as string,
    project_id: item.project_id as string,
    batch_id: item.batch_id as string,
    plan_id: item.plan_id as string,
    code_suffix: item.code_suffix as string,
    effect: item.effect as AccessCodeEffect,
    access_days: (item.access_days as number | null | undefined) ?? null,
    max_redemptions: (item.max_redemptions as number | null | undefined) ?? null,
    times_redeemed: (item.times_redeemed as number | undefined) ?? 0,
    expires_at: (item.code_expires_at as string | undefined) ?? null,
    status: effectiveStatus(item, nowMs),
    revoked_at: (item.revoked_at as string | null | undefined) ?? null,
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

/** One code of a batch being written: its id and its text (held in memory only, returned once). */
interface PendingCode {
  id: string;
  code: string;
}

/**
 * Generates a batch of `count` codes for a plan of the project (DESIGN D18) and returns the batch
 * and, this once, every code. A batch can exceed one DynamoDB transaction (3 items per code, 100 per
 * transaction), so it is written so that a failure half-way leaves no visible half batch:
 * 1. one transaction puts the batch item with `state: pending`, checking that the project and the
 *    plan are still active (nothing is written when they are not);
 * 2. the codes are written in chunks of {@link CODES_PER_TRANSACTION} (code, lookup and reference
 *    items, each put only if absent), {@link CHUNK_CONCURRENCY} at a time; a chunk whose code collides
 *    with an existing code of the project is rewritten with fresh codes;
 * 3. one last transaction flips the batch to `active` (only from `pending`; project and plan checked
 *    again), writes the expiry deadline (when `expires_at` is set) and emits
 *    `access_code.batch_generated` (batch id and count, never the codes) — the batch becomes visible and
 *    redeemable all at once, with its event (D6). Inside a request, this transaction also carries the
 *    request's idempotency completion and activity entry (steps 1–2 run outside the request scope), so
 *    a retry after it committed replays the stored response (D3) and never generates a second batch.
 * Codes of a batch that is not active are invisible to every read and will not redeem. When a step
 * fails, the items already written are deleted (best effort; what a crash leaves behind stays
 * invisible) and the error is rethrown, so the request's idempotency key is released and a retry
 * generates one new batch.
 * Errors: NOT_FOUND (project outside the token's scope or absent; plan absent or of another project),
 * VALIDATION_FAILED (`expires_at` not in the future), CONFLICT (archived project, inactive plan, or
 * either changed while the batch was being written).
 */
export async function generateAccessCodes(runtime: UnitOfWorkRuntime, principal: Principal, input: GenerateAccessCodesInput): Promise<GeneratedAccessCodes> {
  const teamId = principal.teamId;
  const projectId = input.project_id;
  requireProjectAccess(principal, projectId);
  const nowMs = runtime.clock.nowMs();
  if (input.expires_at !== null && Date.parse(input.expires_at) <= nowMs) {
    throw new ProblemError('VALIDATION_FAILED', 'expires_at must be in the future.', { errors: [{ path: 'expires_at', message: 'must be a time in the future' }] });
  }
  const plan = await requirePlanOfProject(runtime.store, principal, projectId, input.plan_id);
  const now = isoTime(nowMs);
  const prefix = input.prefix ? input.prefix.toUpperCase() : null;
  const batch: AccessCodeBatch = {
    id: newUuid(),
    project_id: projectId,
    plan_id: input.plan_id,
    count: input.count,
    prefix,
    effect: input.effect,
    access_days: input.access_days,
    max_redemptions: input.max_redemptions,
    expires_at: input.expires_at,
    created_at: now,
  };
  const batchKey = keys.accessCodeBatch(teamId, projectId, batch.id);
  const { expires_at: batchExpiresAt, ...batchFields } = batch;

  // The steps before the last write outside the request's scope: the request's idempotency completion
  // and activity entry go with the final transaction, whose result is the response (D3).
  await outsideRequestScope(() =>
    unitOfWork(runtime, teamId, (tx) => {
      plan.check(tx);
      tx.put(
        { ...batchKey, entity: entity.accessCodeBatch, team_id: teamId, ...batchFields, code_expires_at: batchExpiresAt ?? undefined, state: 'pending' },
        { condition: 'attribute_not_exists(pk)' },
      );
    }),
  );

  const taken = new Set<string>();
  const fresh = (): PendingCode => {
    for (;;) {
      const code = newCode(prefix);
      const normalized = normalizeCode(code);
      if (taken.has(normalized)) continue;
      taken.add(normalized);
      return { id: newUuid(), code };
    }
  };
  const chunks: PendingCode[][] = [];
  for (let start = 0; start < input.count; start += CODES_PER_TRANSACTION) {
    chunks.push(Array.from({ length: Math.min(CODES_PER_TRANSACTION, input.count - start) }, fresh));
  }
  const written: PendingCode[][] = [];
  let aborted = false;

  const codeItem = (code: PendingCode): Item => ({
    ...keys.accessCode(teamId, projectId, batch.id, code.id),
    entity: entity.accessCode,
    team_id: teamId,
    id: code.id,
    project_id: projectId,
    batch_id: batch.id,
    plan_id: batch.plan_id,
    code_suffix: codeSuffix(code.code),
    effect: batch.effect,
    access_days: batch.access_days,
    max_redemptions: batch.max_redemptions,
    times_redeemed: 0,
    code_expires_at: batch.expires_at ?? undefined,
    status: 'active',
    revoked_at: null,
    created_at: now,
    updated_at: now,
  });
  const writeChunk = async (chunk: PendingCode[]) => {
    for (let attempt = 1; !aborted; attempt++) {
      try {
        await unitOfWork(runtime, teamId, (tx) => {
          for (const code of chunk) {
            const item = codeItem(code);
            tx.put(item, { condition: 'attribute_not_exists(pk)' });
            tx.put(
              { ...keys.accessCodeLookup(teamId, projectId, codeDigest(code.code)), entity: entity.accessCodeLookup, team_id: teamId, project_id: projectId, access_code_id: code.id, batch_id: batch.id, code_sk: item.sk },
              { condition: 'attribute_not_exists(pk)' },
            );
            tx.put({ ...keys.accessCodeRef(teamId, code.id), entity: entity.accessCodeRef, team_id: teamId, project_id: projectId, batch_id: batch.id }, { condition: 'attribute_not_exists(pk)' });
          }
        });
        written.push(chunk);
        return;
      } catch (error) {
        const retriable = error instanceof ConditionFailedError || error instanceof TransactionCanceledError;
        if (!retriable || attempt >= CHUNK_ATTEMPTS) {
          aborted = true;
          throw error;
        }
        if (error instanceof ConditionFailedError) {
          // A code taken by an earlier batch of the project (item 3k+1 is code k's lookup): replace the
          // colliding codes (ids are fresh UUIDs, so only lookups can collide) and write the chunk again.
          const failed = new Set(error.failedItems.map((index) => Math.floor(index / 3)));
          if (failed.size === 0) chunk.forEach((_, index) => failed.add(index));
          for (const index of failed) chunk[index] = fresh();
        } else {
          // Cancelled by a conflict or throttling: wait a little (jittered, growing), then write it again.
          await new Promise((resolve) => setTimeout(resolve, CONFLICT_BACKOFF_MS * attempt * (0.5 + Math.random())));
        }
      }
    }
  };

  try {
    // Every chunk settles before the outcome is decided, so a cleanup never races a chunk still in flight.
    await outsideRequestScope(() => pMap(chunks, writeChunk, { concurrency: CHUNK_CONCURRENCY, stopOnError: false })).catch((error: unknown) => {
      throw error instanceof AggregateError ? error.errors[0] : error;
    });
    if (aborted) throw new Error('access code batch aborted');
    return await withConflictRetries(() => unitOfWork(runtime, teamId, (tx) => {
      plan.check(tx);
      tx.update(batchKey, {
        expression: 'SET #state = :active',
        condition: '#state = :pending',
        names: { '#state': 'state' },
        values: { ':active': 'active', ':pending': 'pending' },
      });
      if (batch.expires_at !== null) scheduleDeadline(tx, { teamId, kind: 'access_code.expire', subjectId: batch.id, projectId, dueAt: batch.expires_at });
      tx.emit({ type: 'access_code.batch_generated', projectId, data: { batch } });
      const generated: GeneratedAccessCodes = { batch, codes: chunks.flat().map((code) => ({ id: code.id, code: code.code })) };
      return generated;
    }));
  } catch (error) {
    await outsideRequestScope(() => discardBatch(runtime, teamId, projectId, batch.id, written)).catch((cleanupError) =>
      logger.error('access code batch cleanup failed; the pending batch stays invisible', { batch_id: batch.id, error: cleanupError as Error }),
    );
    throw error;
  }
}

/** Runs a transaction again (at most {@link CHUNK_ATTEMPTS} times, with a growing jittered wait) while DynamoDB cancels it for a conflict or throttling. */
async function withConflictRetries<T>(write: () => Promise<T>): Promise<T> {
  return retryOnLostRace(write, {
    attempts: CHUNK_ATTEMPTS,
    retryable: (error) => error instanceof TransactionCanceledError,
    waitMs: (_error, attempt) => CONFLICT_BACKOFF_MS * attempt * (0.5 + Math.random()),
  });
}

/**
 * Deletes what a failed generation wrote: its written chunks (only items of this batch) and its batch
 * item. It first moves the batch from `pending` to `discarded`, so a batch whose final transaction did
 * commit (its answer lost on the way) is never taken apart: then the condition fails and nothing is deleted.
 */
async function discardBatch(runtime: UnitOfWorkRuntime, teamId: string, projectId: string, batchId: string, written: readonly PendingCode[][]): Promise<void> {
  const batchKey = keys.accessCodeBatch(teamId, projectId, batchId);
  await runtime.store.update({ Key: batchKey, UpdateExpression: 'SET #state = :discarded', ConditionExpression: '#state = :pending', ExpressionAttributeNames: { '#state': 'state' }, ExpressionAttributeValues: { ':discarded': 'discarded', ':pending': 'pending' } });
  const ofBatch = { condition: 'batch_id = :batch', values: { ':batch': batchId } };
  await pMap(
    written,
    (chunk) =>
      unitOfWork(runtime, teamId, (tx) => {
        for (const code of chunk) {
          tx.delete(keys.accessCode(teamId, projectId, batchId, code.id));
          tx.delete(keys.accessCodeLookup(teamId, projectId, codeDigest(code.code)), ofBatch);
          tx.delete(keys.accessCodeRef(teamId, code.id), ofBatch);
        }
      }),
    { concurrency: CHUNK_CONCURRENCY },
  );
  await runtime.store.delete({ Key: batchKey });
}

/** Batch items of `batchIds` (one BatchGetItem) that are `active`, by id. */
async function activeBatches(store: Store, teamId: string, projectId: string, batchIds: Iterable<string>): Promise<Set<string>> {
  const ids = [...new Set(batchIds)];
  if (ids.length === 0) return new Set();
  const items = await store.batchGet(ids.map((batchId) => keys.accessCodeBatch(teamId, projectId, batchId)));
  return new Set(items.filter((item) => item.state === 'active').map((item) => item.id as string));
}

/**
 * Lists a project's codes (DESIGN D12, D18), in key order (grouped by batch), paged; filters: one batch
 * (a key range), a plan, a status (as {@link effectiveStatus} computes it at `nowMs`, epoch MILLISECONDS).
 * Codes of batches still being written are left out, so a page may hold fewer than `limit`.
 * Errors: NOT_FOUND (project absent, of another team or outside the token's scope), VALIDATION_FAILED
 * (a cursor of another list).
 */
export async function listAccessCodes(store: Store, principal: Principal, nowMs: number, query: ListAccessCodesInput): Promise<Page<AccessCode>> {
  const teamId = principal.teamId;
  requireProjectAccess(principal, query.project_id);
  const now = isoTime(nowMs);
  const conditions: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (query.plan_id) {
    conditions.push('plan_id = :plan');
    values[':plan'] = query.plan_id;
  }
  if (query.status) {
    names['#status'] = 'status';
    values[':status'] = query.status;
    if (query.status === 'active') {
      conditions.push('#status = :status AND (attribute_not_exists(code_expires_at) OR code_expires_at > :now)');
      values[':now'] = now;
    } else if (query.status === 'expired') {
      conditions.push('(#status = :status OR (#status = :active AND code_expires_at <= :now))');
      values[':active'] = 'active';
      values[':now'] = now;
    } else {
      conditions.push('#status = :status');
    }
  }
  const [project, page] = await Promise.all([
    store.get(keys.project(teamId, query.project_id), { projection: 'pk' }),
    queryPage(store, {
      partition: keys.accessCodePartition(teamId, query.project_id),
      sortKeyPrefix: query.batch_id ? sortKeyPrefix.accessCodeInBatch(query.batch_id) : sortKeyPrefix.accessCode,
      limit: query.limit,
      cursor: query.cursor,
      map: (item) => item,
      filter: conditions.length ? { expression: conditions.join(' AND '), names: Object.keys(names).length ? names : undefined, values } : undefined,
    }),
  ]);
  if (!project) throw new ProblemError('NOT_FOUND', `No project ${query.project_id}.`);
  const visible = await activeBatches(store, teamId, query.project_id, page.data.map((item) => item.batch_id as string));
  return { data: page.data.filter((item) => visible.has(item.batch_id as string)).map((item) => toAccessCode(item, nowMs)), next_cursor: page.next_cursor };
}

/** The stored code item with id `codeId` in an active batch of an existing project of the principal's team and scope; else NOT_FOUND. */
async function findCode(store: Store, principal: Principal, codeId: string): Promise<Item> {
  const ref = await store.get(keys.accessCodeRef(principal.teamId, codeId));
  if (!ref) throw notFound(codeId);
  const projectId = ref.project_id as string;
  const batchId = ref.batch_id as string;
  if (!canAccessProject(principal, projectId)) throw notFound(codeId);
  const items = await store.batchGet([keys.accessCode(principal.teamId, projectId, batchId, codeId), keys.accessCodeBatch(principal.teamId, projectId, batchId), keys.project(principal.teamId, projectId)]);
  const code = items.find((item) => item.entity === entity.accessCode);
  const batch = items.find((item) => item.entity === entity.accessCodeBatch);
  const project = items.find((item) => item.entity === entity.project);
  if (!code || batch?.state !== 'active' || !project) throw notFound(codeId);
  return code;
}

/**
 * Reads one code by id (never the code itself: `code_suffix`), its status computed at `nowMs` (epoch
 * MILLISECONDS). Errors: NOT_FOUND (absent, of another team, outside the token's project scope, or in a
 * batch still being written).
 */
export async function getAccessCode(store: Store, principal: Principal, nowMs: number, codeId: string): Promise<AccessCode> {
  return toAccessCode(await findCode(store, principal, codeId), nowMs);
}

/**
 * Revokes an active code (DESIGN D18): it can no longer be redeemed; redemptions already made stay.
 * Conditional on the code still being active at the commit, so a concurrent expiry, redemption of the
 * last use or revocation wins cleanly. No webhook event (the catalogue has none for revocation); the
 * activity log records the call. Errors: NOT_FOUND (see {@link getAccessCode}), CONFLICT (the code is
 * revoked, exhausted or expired).
 */
export async function revokeAccessCode(runtime: UnitOfWorkRuntime, principal: Principal, codeId: string): Promise<AccessCode> {
  const item = await findCode(runtime.store, principal, codeId);
  const nowMs = runtime.clock.nowMs();
  const status = effectiveStatus(item, nowMs);
  const conflict = (current: string) => new ProblemError('CONFLICT', `The access code is ${current}; only an active code can be revoked.`);
  if (status !== 'active') throw conflict(status);
  const now = isoTime(nowMs);
  return unitOfWork(runtime, principal.teamId, (tx: Transaction) => {
    tx.update(keys.accessCode(principal.teamId, item.project_id as string, item.batch_id as string, codeId), {
      expression: 'SET #status = :revoked, revoked_at = :now, updated_at = :now',
      condition: 'attribute_exists(pk) AND #status = :active AND (attribute_not_exists(code_expires_at) OR code_expires_at > :now)',
      names: { '#status': 'status' },
      values: { ':revoked': 'revoked', ':active': 'active', ':now': now },
      onConditionFailed: () => conflict('no longer active (revoked, used up or expired meanwhile)'),
    });
    return toAccessCode({ ...item, status: 'revoked', revoked_at: now, updated_at: now }, nowMs);
  });
}
