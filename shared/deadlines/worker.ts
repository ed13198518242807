import pMap from 'p-map';
import { logger } from '../logger.js';
import { deadlineStore } from '../store/deadlines.js';
import type { Key } from '../store/requests.js';
import type { UnitOfWorkRuntime } from '../store/unit-of-work.js';
import { DEADLINE_SHARDS, deadlineOf, dueSortKeyBound, type Deadline, type DeadlineKind } from './deadline.js';
import { DEADLINE_HANDLERS, type DeadlineHandler } from './handlers.js';

/** Due deadlines read per index query (one page of one shard; the worker processes it before reading on). */
const DEADLINE_PAGE_SIZE = 25;
/** Shards scanned at the same time. */
const DEADLINE_SHARD_CONCURRENCY = 4;
/** Most deadlines one run applies per shard (the rest wait for the next run, a minute later). */
const DEADLINE_MAX_PER_SHARD = 500;

/** Options of {@link applyDueDeadlines} (tests inject handlers and small pages). */
export interface ApplyDueDeadlinesOptions {
  /** Handlers by kind (a kind without one fails its deadlines, which stay). @default {@link DEADLINE_HANDLERS} */
  handlers?: Readonly<Partial<Record<DeadlineKind, DeadlineHandler>>>;
  /** @default {@link DEADLINE_PAGE_SIZE} */
  pageSize?: number;
  /** @default {@link DEADLINE_MAX_PER_SHARD} */
  maxPerShard?: number;
  /** Called with each handler failure (the deadline stays and is retried by the next run). */
  onError?: (error: unknown, deadline: Deadline) => void;
}

/** What a run did: deadlines handed to their handler, and handler failures (left for the next run). */
export interface DeadlineRunResult {
  applied: number;
  failed: number;
}

/**
 * Applies deadlines due at `nowMs` (epoch ms; D15) shard by shard, oldest first, ≤ `maxPerShard` per shard; each is
 * re-read by key and skipped when gone or moved. Handlers remove their deadline transactionally (applied once); a
 * throwing handler is counted and retried next run. Throws only when the index is unreadable.
 */
export async function applyDueDeadlines(
  runtime: UnitOfWorkRuntime,
  nowMs: number,
  options: ApplyDueDeadlinesOptions = {},
): Promise<DeadlineRunResult> {
  const handlers = options.handlers ?? DEADLINE_HANDLERS;
  const pageSize = options.pageSize ?? DEADLINE_PAGE_SIZE;
  const maxPerShard = options.maxPerShard ?? DEADLINE_MAX_PER_SHARD;
  const onError =
    options.onError ??
    ((error: unknown, deadline: Deadline) =>
      logger.error('deadline failed', { kind: deadline.kind, subject_id: deadline.subjectId, error: error as Error }));
  const bound = dueSortKeyBound(nowMs);
  const result: DeadlineRunResult = { applied: 0, failed: 0 };
  const shards = Array.from({ length: DEADLINE_SHARDS }, (_, shard) => shard);

  await pMap(
    shards,
    async (shard) => {
      let seen = 0;
      let startKey: Key | undefined;
      do {
        const page = await deadlineStore.pageDue(
          runtime.store,
          shard,
          bound,
          startKey,
          Math.min(pageSize, maxPerShard - seen),
        );
        seen += page.items.length;
        for (const indexed of page.items) {
          const deadline = deadlineOf(indexed);
          const current = await deadlineStore.read(runtime.store, deadline);
          if (!current || current.due_at !== deadline.dueAt) continue; // applied or moved meanwhile
          const handler = handlers[deadline.kind];
          try {
            if (!handler) throw new Error(`No handler for deadline kind ${deadline.kind}`);
            await handler(runtime, deadline);
            result.applied++;
          } catch (error) {
            result.failed++;
            onError(error, deadline);
          }
        }
        startKey = page.lastEvaluatedKey;
      } while (startKey && seen < maxPerShard);
    },
    { concurrency: DEADLINE_SHARD_CONCURRENCY },
  );
  return result;
}
