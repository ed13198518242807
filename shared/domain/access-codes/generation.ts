import pMap from 'p-map';
import type { Principal } from '../../auth/principal.js';
import { requireProjectAccess } from '../../auth/authorize.js';
import { isoTime } from '../../clock.js';
import { scheduleDeadline } from '../../deadlines/deadline.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { logger } from '../../logger.js';
import {
  activateBatch,
  collidingCodes,
  deleteBatch,
  deleteCodes,
  discardPendingBatch,
  putCodes,
  putPendingBatch,
} from '../../store/access-codes/writes.js';
import { ConditionFailedError, TransactionCanceledError } from '../../store/store.js';
import { outsideRequestScope } from '../../store/request-scope.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { codeSource, normalizeCode } from './codes.js';
import { requirePlanOfProject, type PlanOfProject } from './plan.js';
import type { AccessCodeBatch, AccessCodeEffect, GeneratedAccessCodes } from './schema.js';

/**
 * Generation of access code batches (DESIGN D14, D18): the batch written in chunks so that a failure
 * half-way leaves no visible half batch. The stored shape is described in repository.ts.
 */

/** Codes written per transaction: three items each (code, lookup, reference), under DynamoDB's 100. */
const CODES_PER_TRANSACTION = 33;
/** Chunk transactions of one batch in flight at once. */
const CHUNK_CONCURRENCY = 6;
/**
 * Times a chunk is rewritten with fresh codes after a collision with an existing code, or after a transaction conflict.
 */
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

/** One code of a batch being written: its id and its text (held in memory only, returned once). */
interface PendingCode {
  id: string;
  code: string;
}

/**
 * A generation run by a background job (the access-code batch worker): its writes join the batch's transactions, and
 * each fails with the job's problem once the job stopped (cancelled), so no chunk commits after a cancel.
 */
export interface GenerationJob {
  /** Adds to the pending batch's transaction: the job records the batch, on condition that it still runs. */
  begin(tx: Transaction, batch: AccessCodeBatch): void;
  /** Adds to a chunk's transaction: the job counts `count` more codes written, on condition that it still runs. */
  wrote(tx: Transaction, count: number): void;
  /** Given the codes, before the last transaction: the writes that complete the job in it (the codes kept sealed). */
  complete(generated: GeneratedAccessCodes): Promise<(tx: Transaction) => void>;
}

/**
 * Checks a generation request before anything is written: the principal's project scope, `expires_at` in the future,
 * project and plan active (D18). Returns the plan's check for the batch's transactions. Errors: NOT_FOUND,
 * VALIDATION_FAILED, CONFLICT.
 */
export async function checkGeneration(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  input: GenerateAccessCodesInput,
): Promise<PlanOfProject> {
  requireProjectAccess(principal, input.project_id);
  if (input.expires_at !== null && Date.parse(input.expires_at) <= runtime.clock.nowMs()) {
    throw new ProblemError('VALIDATION_FAILED', 'expires_at must be in the future.', {
      errors: [{ path: 'expires_at', message: 'must be a time in the future' }],
    });
  }
  return requirePlanOfProject(runtime.store, principal, input.project_id, input.plan_id);
}

/**
 * Generates `count` codes for a project's plan (D18), returning each code this once; the batch is written `pending` and
 * flipped `active` last, with `access_code.batch_generated` (never the codes) and the request's idempotency record
 * (D3). Errors: NOT_FOUND, VALIDATION_FAILED, CONFLICT.
 */
export async function generateAccessCodes(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  input: GenerateAccessCodesInput,
): Promise<GeneratedAccessCodes> {
  const plan = await checkGeneration(runtime, principal, input);
  return writeBatch(runtime, principal.teamId, plan, input);
}

/**
 * Writes a checked batch of `teamId` (see {@link generateAccessCodes}; `plan` from {@link checkGeneration} or
 * `requirePlanOfProject`). With `job`, chunks are written one at a time inside the job's conditions (see {@link
 * GenerationJob}) and a failure only discards the batch (the job's cancel or failure deletes its codes). Errors:
 * CONFLICT, and the job's problem.
 */
export async function writeBatch(
  runtime: UnitOfWorkRuntime,
  teamId: string,
  plan: PlanOfProject,
  input: GenerateAccessCodesInput,
  job?: GenerationJob,
): Promise<GeneratedAccessCodes> {
  const projectId = input.project_id;
  const nowMs = runtime.clock.nowMs();
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

  // The steps before the last write outside the request's scope: the request's idempotency completion
  // and activity entry go with the final transaction, whose result is the response (D3).
  await outsideRequestScope(() =>
    unitOfWork(runtime, teamId, (tx) => {
      plan.check(tx);
      putPendingBatch(tx, teamId, batch);
      job?.begin(tx, batch);
    }),
  );

  const taken = new Set<string>();
  const fresh = (): PendingCode => {
    for (;;) {
      const code = codeSource.newCode(prefix);
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

  const writeChunk = async (chunk: PendingCode[]) => {
    for (let attempt = 1; !aborted; attempt++) {
      try {
        await unitOfWork(runtime, teamId, (tx) => {
          putCodes(tx, teamId, batch, chunk, now);
          job?.wrote(tx, chunk.length);
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
          // A code taken by an earlier batch of the project: replace the colliding codes and write the chunk again.
          const failed = collidingCodes(error);
          if (failed.size === 0) chunk.forEach((_, index) => failed.add(index));
          for (const index of failed) if (index < chunk.length) chunk[index] = fresh();
        } else {
          // Cancelled by a conflict or throttling: wait a little (jittered, growing), then write it again.
          await new Promise((resolve) => setTimeout(resolve, CONFLICT_BACKOFF_MS * attempt * (0.5 + Math.random())));
        }
      }
    }
  };

  try {
    // Every chunk settles before the outcome is decided, so a cleanup never races a chunk still in flight.
    // A job writes one chunk at a time: each of its chunks also updates the job item.
    await outsideRequestScope(() =>
      pMap(chunks, writeChunk, { concurrency: job ? 1 : CHUNK_CONCURRENCY, stopOnError: false }),
    ).catch((error: unknown) => {
      throw error instanceof AggregateError ? error.errors[0] : error;
    });
    if (aborted) throw new Error('access code batch aborted');
    const completeJob = await job?.complete({
      batch,
      codes: chunks.flat().map((code) => ({ id: code.id, code: code.code })),
    });
    return await withConflictRetries(() =>
      unitOfWork(runtime, teamId, (tx) => {
        completeJob?.(tx);
        plan.check(tx);
        activateBatch(tx, teamId, projectId, batch.id);
        if (batch.expires_at !== null)
          scheduleDeadline(tx, {
            teamId,
            kind: 'access_code.expire',
            subjectId: batch.id,
            projectId,
            dueAt: batch.expires_at,
          });
        tx.emit({ type: 'access_code.batch_generated', projectId, data: { batch } });
        const generated: GeneratedAccessCodes = {
          batch,
          codes: chunks.flat().map((code) => ({ id: code.id, code: code.code })),
        };
        return generated;
      }),
    );
  } catch (error) {
    // Rethrown: the idempotency key is released and a retry generates one new batch; what a crash leaves stays
    // invisible (not active).
    const cleanup = job
      ? discardPendingBatch(runtime.store, teamId, projectId, batch.id).catch((discardError: unknown) => {
          // Discarded or deleted already by the job's cancel.
          if (!(discardError instanceof ConditionFailedError)) throw discardError;
        })
      : discardBatch(runtime, teamId, projectId, batch.id, written);
    await outsideRequestScope(() => cleanup).catch((cleanupError) =>
      logger.error('access code batch cleanup failed; the pending batch stays invisible', {
        batch_id: batch.id,
        error: cleanupError as Error,
      }),
    );
    throw error;
  }
}

/**
 * Runs a transaction again (at most {@link CHUNK_ATTEMPTS} times, with a growing jittered wait) while DynamoDB cancels
 * it for a conflict or throttling.
 */
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
async function discardBatch(
  runtime: UnitOfWorkRuntime,
  teamId: string,
  projectId: string,
  batchId: string,
  written: readonly PendingCode[][],
): Promise<void> {
  await discardPendingBatch(runtime.store, teamId, projectId, batchId);
  await pMap(
    written,
    (chunk) => unitOfWork(runtime, teamId, (tx) => deleteCodes(tx, teamId, projectId, batchId, chunk)),
    { concurrency: CHUNK_CONCURRENCY },
  );
  await deleteBatch(runtime.store, teamId, projectId, batchId);
}
