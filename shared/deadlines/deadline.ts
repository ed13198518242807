import { createHash } from 'node:crypto';
import { isoTime } from '../clock.js';
import { Team } from '../domain/teams/schema.js';
import { Timestamp } from '../schemas/common.js';
import * as z from '../schemas/zod.js';
import { entity, keys, secondaryIndex } from '../store/keys.js';
import { recordParser } from '../store/records.js';
import type { Item } from '../store/requests.js';
import type { Transaction, UnitOfWorkRuntime } from '../store/unit-of-work.js';

/**
 * The deadline index (DESIGN D14, D15): clock-driven work ("this access code batch expires at T",
 * later "this trial ends at T") is written as a deadline item in the SAME unit of work as the object
 * it concerns, and a scheduled worker (`applyDueDeadlines`, every minute) finds the due ones and hands
 * each to the handler of its kind, which removes the deadline in its own transaction, so applying a
 * deadline twice does nothing.
 *
 * Storage: one item per (team, kind, subject) under `keys.deadline` (a partition of its own, so
 * re-scheduling is one keyed put). It is found through the sparse GSI: partition
 * `keys.deadlineIndex(shard)` — one of {@link DEADLINE_SHARDS} shards chosen by a hash of its identity,
 * so no single index partition takes every write — and a sort key that starts with the due time (ISO
 * 8601, which sorts by time): the worker reads each shard's due range (`sort key < now`) oldest first.
 * This module is metadata and item builders only (no handler code), so any domain may import it.
 */

/** Number of index shards (DESIGN D14: worker indexes are sharded, e.g. 16 shards). */
export const DEADLINE_SHARDS = 16;

/**
 * Every kind of deadline, written once (a closed list): the kind names the handler that applies it
 * (`shared/deadlines/handlers.ts` maps each kind to its function).
 * - `access_code.expire`: the codes of an access code batch reach their `expires_at` (subject: the
 *   batch id; project: the batch's project).
 * - `subscription.clock`: a subscription's next clock-driven transition is due (D15: scheduled start,
 *   trial end, period end or renewal, fixed-term end, incomplete expiry, past-due and unpaid limits;
 *   subject: the subscription id; project: its project). One per subscription, moved by each transition.
 * - `billing.period`: a team on a paid tier reaches the start of its next monthly period, which gets its
 *   invoice (D20; subject: the team id; project: null). Moved by each period; gone once the team is on `free`.
 * - `billing.grace_period`: a team's 7-day grace period after a failed invoice payment ends, and the team
 *   is locked unless it paid meanwhile (D20; subject: the team id; project: null).
 * - `member.platform_sync`: a platform call for a member failed (its `platform_error`) and the next
 *   attempt to bring the platform in line with the member's access is due (D22, exponential backoff;
 *   subject: the member id; project: its project). One per member, moved by each failed attempt, gone
 *   on success or when the attempts run out.
 * - `subscription.invite_links`: a grant's personal invite links could not be made for a subscriber
 *   without a member and the next attempt is due (D22, the same backoff as
 *   `member.platform_sync`; subject: the subscription id; project: its project). One per subscription,
 *   moved by each failed attempt, gone on success, when the links are no longer needed or the attempts run out.
 */
const DEADLINE_KINDS = ['access_code.expire', 'subscription.clock', 'billing.period', 'billing.grace_period', 'member.platform_sync', 'subscription.invite_links'] as const;
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
    [secondaryIndex.partitionKey]: keys.deadlineIndex(deadlineShard(deadline.teamId, deadline.kind, deadline.subjectId)),
    [secondaryIndex.sortKey]: keys.deadlineIndexSortKey(deadline.dueAt, deadline.teamId, deadline.kind, deadline.subjectId),
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
  tx.delete(keys.deadline(deadline.teamId, deadline.kind, deadline.subjectId), {
    condition: 'attribute_exists(pk) AND due_at = :due_at',
    values: { ':due_at': deadline.dueAt },
  });
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

/** The {@link Deadline} of a stored deadline item (an index item or a keyed read), parsed through its stored-record schema. */
export function deadlineOf(item: Item): Deadline {
  const stored = parseStoredDeadline(item);
  return { teamId: stored.team_id, kind: stored.kind, subjectId: stored.subject_id, projectId: stored.project_id ?? null, dueAt: stored.due_at };
}

/**
 * The exclusive upper bound of the index sort keys due at `nowMs` (epoch MILLISECONDS): every sort key
 * of a deadline due at or before `nowMs` is smaller (its due time sorts first and is ≤ now).
 */
export function dueSortKeyBound(nowMs: number): string {
  return isoTime(nowMs + 1);
}
