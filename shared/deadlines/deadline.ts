import { createHash } from 'node:crypto';
import { isoTime } from '../clock.js';
import { Team } from '../domain/teams/schema.js';
import { Timestamp } from '../schemas/common.js';
import * as z from '../schemas/zod.js';
import { dueAtUnchanged } from '../store/expressions.js';
import { entity, keys, secondaryIndex } from '../store/keys.js';
import { recordParser } from '../store/records.js';
import type { Item } from '../store/requests.js';
import type { Transaction, UnitOfWorkRuntime } from '../store/unit-of-work.js';

/**
 * Deadline index (D14, D15): clock-driven work is a deadline item written in the SAME unit of work as its object;
 * `applyDueDeadlines` hands due ones to their kind's handler, which removes it transactionally (applied once). One item
 * per (team, kind, subject) under `keys.deadline`, found through {@link DEADLINE_SHARDS} hashed GSI shards sorted by
 * ISO due time. Metadata and builders only, so any domain may import it.
 */

/** Number of index shards (DESIGN D14: worker indexes are sharded, e.g. 16 shards). */
export const DEADLINE_SHARDS = 16;

/**
 * Deadline kinds, each naming its handler (`handlers.ts`); subject (project): `access_code.expire` batch (its project),
 * `subscription.clock` subscription (D15), `billing.period`/`billing.grace_period` team (null; D20),
 * `member.platform_sync` member and `subscription.invite_links` subscription (D22 backoff; one per subject),
 * `message.reminders` subscription (D32: its next reminder message), `gift.delivery` gift (D33: its access code to the
 * recipient). The daily access audit (D34) has an index partition of its own (`store/access-audit-schedule.ts`).
 */
const DEADLINE_KINDS = [
  'access_code.expire',
  'subscription.clock',
  'billing.period',
  'billing.grace_period',
  'member.platform_sync',
  'subscription.invite_links',
  'message.reminders',
  'gift.delivery',
] as const;
/** A kind of deadline (see {@link DEADLINE_KINDS}). */
export type DeadlineKind = (typeof DEADLINE_KINDS)[number];

/** A deadline: what is due, for whom, and when. */
export interface Deadline {
  teamId: string;
  kind: DeadlineKind;
  /** The id of the object the deadline is about (its meaning depends on the kind). */
  subjectId: string;
  /** The project of the subject, for per-project objects (their keys need it); null for team-level ones. */
  projectId: string | null;
  /** When it is due: ISO 8601 UTC (DESIGN D12). */
  dueAt: string;
}

/**
 * Applies one due deadline (registered by kind in `shared/deadlines/handlers.ts`). It must remove the
 * deadline in the same transaction as its effect ({@link completeDeadline}) — or, for work spread over
 * several transactions, make each step conditional on the state it changes and remove the deadline
 * last — so that applying it twice, or from two runs at once, does nothing the second time. A throw
 * leaves the deadline for the next run.
 */
export type DeadlineHandler = (runtime: UnitOfWorkRuntime, deadline: Deadline) => Promise<void>;

/** The shard (0 … {@link DEADLINE_SHARDS} − 1) of a deadline: a stable hash of its identity. */
export function deadlineShard(teamId: string, kind: string, subjectId: string): number {
  return createHash('sha256').update(`${teamId}#${kind}#${subjectId}`).digest()[0] % DEADLINE_SHARDS;
}

/**
 * The stored item of a deadline (`due_at` ISO, plus its sharded GSI keys). Put it in the unit of work
 * that creates or changes the object ({@link scheduleDeadline}); a later put of the same (team, kind,
 * subject) re-schedules it.
 */
export function deadlineItem(deadline: Deadline): Item {
  return {
    ...keys.deadline(deadline.teamId, deadline.kind, deadline.subjectId),
    entity: entity.deadline,
    team_id: deadline.teamId,
    kind: deadline.kind,
    subject_id: deadline.subjectId,
    project_id: deadline.projectId,
    due_at: deadline.dueAt,
    [secondaryIndex.partitionKey]: keys.deadlineIndex(
      deadlineShard(deadline.teamId, deadline.kind, deadline.subjectId),
    ),
    [secondaryIndex.sortKey]: keys.deadlineIndexSortKey(
      deadline.dueAt,
      deadline.teamId,
      deadline.kind,
      deadline.subjectId,
    ),
  };
}

/** Adds the deadline's item to a unit of work (creates it, or moves its due time). */
export function scheduleDeadline(tx: Transaction, deadline: Deadline): void {
  tx.put(deadlineItem(deadline));
}

/**
 * Adds the removal of `deadline` to a unit of work — the handler's own transaction — on condition that
 * it is still there with the same due time: when another run already applied it (or it was moved), the
 * whole transaction fails with `ConditionFailedError`, so nothing is applied twice.
 */
export function completeDeadline(tx: Transaction, deadline: Deadline): void {
  tx.delete(keys.deadline(deadline.teamId, deadline.kind, deadline.subjectId), dueAtUnchanged(deadline.dueAt));
}

/** A deadline item as stored ({@link deadlineItem}); `project_id` null or absent for team-level subjects. */
const StoredDeadline = z.object({
  team_id: Team.shape.id,
  kind: z.enum(DEADLINE_KINDS),
  subject_id: z.string(),
  project_id: z.optional(z.nullable(z.string())),
  due_at: Timestamp,
});

const parseStoredDeadline = recordParser(entity.deadline, StoredDeadline);

/**
 * The {@link Deadline} of a stored deadline item (an index item or a keyed read), parsed through its stored-record
 * schema.
 */
export function deadlineOf(item: Item): Deadline {
  const stored = parseStoredDeadline(item);
  return {
    teamId: stored.team_id,
    kind: stored.kind,
    subjectId: stored.subject_id,
    projectId: stored.project_id ?? null,
    dueAt: stored.due_at,
  };
}

/**
 * The exclusive upper bound of the index sort keys due at `nowMs` (epoch MILLISECONDS): every sort key
 * of a deadline due at or before `nowMs` is smaller (its due time sorts first and is ≤ now).
 */
export function dueSortKeyBound(nowMs: number): string {
  return isoTime(nowMs + 1);
}
