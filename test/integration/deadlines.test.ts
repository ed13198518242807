/**
 * The deadline index and its worker (DESIGN D14, D15): deadlines written in a unit of work, spread over
 * the index shards, found by `applyDueDeadlines` once due (page by page), applied once however often
 * and however concurrently the worker runs (handlers remove their deadline in their own transaction),
 * left for the next run when a handler fails; and run by the local runtime's timer.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { isoTime, MINUTE_MS } from '../../shared/clock.js';
import {
  DEADLINE_SHARDS,
  completeDeadline,
  deadlineShard,
  dueSortKeyBound,
  scheduleDeadline,
  type Deadline,
  type DeadlineHandler,
} from '../../shared/deadlines/deadline.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { generateAccessCodes } from '../../shared/domain/access-codes/generation.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { createLocalRuntime } from '../../shared/local/runtime.js';
import { keys } from '../../shared/store/keys.js';
import { ConditionFailedError } from '../../shared/store/store.js';
import { unitOfWork } from '../../shared/store/unit-of-work.js';
import { scanTable } from '../support/guarantees.js';
import { expectPublishedEvent } from '../support/events.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;

beforeEach(async () => {
  // Own tables per test: the worker reads the table-wide index.
  clock = testClock();
  runtime = await createTestRuntime({ clock });
});

const deadline = (subjectId: string, dueAtMs: number, teamId = randomUUID()): Deadline => ({
  teamId,
  kind: 'access_code.expire',
  subjectId,
  projectId: null,
  dueAt: isoTime(dueAtMs),
});

async function schedule(...deadlines: Deadline[]): Promise<void> {
  for (const item of deadlines) await unitOfWork(runtime, item.teamId, (tx) => scheduleDeadline(tx, item));
}

/**
 * A handler that records its effect (a marker item per subject, put only once) in the same transaction
 * as the deadline's removal, as real handlers do; a deadline already applied fails the transaction.
 */
function markingHandler(calls: string[]): DeadlineHandler {
  return async (handlerRuntime, due) => {
    calls.push(due.subjectId);
    try {
      await unitOfWork(handlerRuntime, due.teamId, (tx) => {
        completeDeadline(tx, due);
        tx.put(
          { pk: `TEST#${due.subjectId}`, sk: 'APPLIED', applied_at: isoTime(handlerRuntime.clock.nowMs()) },
          { condition: 'attribute_not_exists(pk)' },
        );
      });
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  };
}

async function appliedSubjects(): Promise<string[]> {
  return (await scanTable(runtime.store))
    .filter((item) => String(item.pk).startsWith('TEST#'))
    .map((item) => String(item.pk).slice('TEST#'.length))
    .sort();
}

async function remainingDeadlines(): Promise<string[]> {
  return (await scanTable(runtime.store))
    .filter((item) => item.entity === 'deadline')
    .map((item) => item.subject_id as string)
    .sort();
}

describe('the deadline index', () => {
  it('spreads deadlines over the shards by a stable hash, and orders each shard by due time', () => {
    const teamId = randomUUID();
    const shards = new Set(
      Array.from({ length: 200 }, (_, index) => deadlineShard(teamId, 'access_code.expire', `s${index}`)),
    );
    expect(shards.size).toBe(DEADLINE_SHARDS);
    expect(deadlineShard(teamId, 'access_code.expire', 's1')).toBe(deadlineShard(teamId, 'access_code.expire', 's1'));
    const now = clock.nowMs();
    expect(keys.deadlineIndexSortKey(isoTime(now), teamId, 'access_code.expire', 'x') < dueSortKeyBound(now)).toBe(
      true,
    );
    expect(keys.deadlineIndexSortKey(isoTime(now + 1), teamId, 'access_code.expire', 'x') < dueSortKeyBound(now)).toBe(
      false,
    );
  });
});

describe('applyDueDeadlines', () => {
  it('applies every due deadline once, page by page across the shards, and leaves the others', async () => {
    const now = clock.nowMs();
    const due = Array.from({ length: 40 }, (_, index) =>
      deadline(`due-${String(index).padStart(2, '0')}`, now - index * MINUTE_MS),
    );
    const later = Array.from({ length: 5 }, (_, index) => deadline(`later-${index}`, now + (index + 1) * MINUTE_MS));
    await schedule(...due, ...later);
    const calls: string[] = [];
    const result = await applyDueDeadlines(runtime, now, {
      handlers: { 'access_code.expire': markingHandler(calls) },
      pageSize: 3,
    });
    expect(result).toEqual({ applied: 40, failed: 0 });
    expect(calls.sort()).toEqual(due.map((item) => item.subjectId).sort());
    expect(await appliedSubjects()).toEqual(due.map((item) => item.subjectId).sort());
    expect(await remainingDeadlines()).toEqual(later.map((item) => item.subjectId).sort());

    // A minute later, one more is due; the applied ones are gone and never run again.
    const nextCalls: string[] = [];
    expect(
      await applyDueDeadlines(runtime, now + MINUTE_MS, {
        handlers: { 'access_code.expire': markingHandler(nextCalls) },
      }),
    ).toEqual({ applied: 1, failed: 0 });
    expect(nextCalls).toEqual(['later-0']);
  });

  it('applies a deadline once when runs overlap, and not at all once it was moved later', async () => {
    const now = clock.nowMs();
    const teamId = randomUUID();
    await schedule(...Array.from({ length: 10 }, (_, index) => deadline(`s${index}`, now - MINUTE_MS, teamId)));
    // Re-scheduling (a put of the same team, kind and subject) moves a deadline.
    await schedule(deadline('s9', now + 10 * MINUTE_MS, teamId));
    const calls: string[] = [];
    const handlers = { 'access_code.expire': markingHandler(calls) };
    await Promise.all([
      applyDueDeadlines(runtime, now, { handlers, pageSize: 2 }),
      applyDueDeadlines(runtime, now, { handlers, pageSize: 2 }),
      applyDueDeadlines(runtime, now, { handlers }),
    ]);
    expect(await appliedSubjects()).toEqual(['s0', 's1', 's2', 's3', 's4', 's5', 's6', 's7', 's8']);
    expect(await remainingDeadlines()).toEqual(['s9']);
    expect(calls).not.toContain('s9');
  });

  it('keeps a deadline whose handler fails, counts the failure, and applies it on a later run', async () => {
    const now = clock.nowMs();
    await schedule(deadline('flaky', now - MINUTE_MS), deadline('fine', now - MINUTE_MS));
    const onError = vi.fn();
    let failures = 1;
    const calls: string[] = [];
    const marking = markingHandler(calls);
    const handler: DeadlineHandler = async (handlerRuntime, due) => {
      if (due.subjectId === 'flaky' && failures-- > 0) throw new Error('flaky handler');
      await marking(handlerRuntime, due);
    };
    expect(await applyDueDeadlines(runtime, now, { handlers: { 'access_code.expire': handler }, onError })).toEqual({
      applied: 1,
      failed: 1,
    });
    expect(onError).toHaveBeenCalledWith(expect.any(Error), expect.objectContaining({ subjectId: 'flaky' }));
    expect(await remainingDeadlines()).toEqual(['flaky']);
    expect(
      await applyDueDeadlines(runtime, now + MINUTE_MS, { handlers: { 'access_code.expire': handler }, onError }),
    ).toEqual({ applied: 1, failed: 0 });
    expect(await remainingDeadlines()).toEqual([]);
    expect(await appliedSubjects()).toEqual(['fine', 'flaky']);
  });

  it('reads no more than a run may apply: at most maxPerShard per shard, the rest on the next run', async () => {
    const now = clock.nowMs();
    const teamId = randomUUID();
    // Subjects of one shard only.
    const subjects: string[] = [];
    for (let index = 0; subjects.length < 5; index++)
      if (deadlineShard(teamId, 'access_code.expire', `x${index}`) === 3) subjects.push(`x${index}`);
    await schedule(...subjects.map((subject) => deadline(subject, now - MINUTE_MS, teamId)));
    const calls: string[] = [];
    const handlers = { 'access_code.expire': markingHandler(calls) };
    expect(await applyDueDeadlines(runtime, now, { handlers, pageSize: 2, maxPerShard: 3 })).toEqual({
      applied: 3,
      failed: 0,
    });
    expect(await remainingDeadlines()).toHaveLength(2);
    expect(await applyDueDeadlines(runtime, now, { handlers, pageSize: 2, maxPerShard: 3 })).toEqual({
      applied: 2,
      failed: 0,
    });
    expect(await remainingDeadlines()).toEqual([]);
  });
});

describe('the local runtime', () => {
  it('runs the deadline worker on its timer: an expired batch’s codes become expired with their event, and stop() ends it', async () => {
    const { principal, team } = await seedTeam(runtime.store, clock);
    const project = await createProject(runtime, principal, { name: 'Club', platform_type: 'discord' });
    const plan = await createPlan(runtime, principal, project.id, {
      name: 'Gold',
      amount: 900,
      currency: 'USD',
      interval: 'month',
    });
    const expiresAt = isoTime(clock.nowMs() + 10 * MINUTE_MS);
    const { batch, codes } = await generateAccessCodes(runtime, principal, {
      project_id: project.id,
      plan_id: plan.id,
      count: 2,
      effect: 'free_access',
      access_days: null,
      max_redemptions: 1,
      expires_at: expiresAt,
    });
    clock.advance(10 * MINUTE_MS + 1000);

    const errors: unknown[] = [];
    const local = createLocalRuntime({
      store: runtime.store,
      clock,
      transport: runtime.transport,
      deadlineIntervalMs: 25,
      onError: (error) => errors.push(error),
    });
    local.start();
    try {
      await vi.waitFor(
        async () =>
          expect(await runtime.store.get(keys.deadline(team.id, 'access_code.expire', batch.id))).toBeUndefined(),
        { timeout: 20_000, interval: 50 },
      );
    } finally {
      await local.stop();
    }
    expect(errors).toEqual([]);
    const items = await scanTable(runtime.store);
    const expiredEvents = items.filter((item) => item.entity === 'event' && item.type === 'access_code.expired');
    for (const event of expiredEvents) expectPublishedEvent(event as never);
    expect(expiredEvents.map((event) => (event.data as { access_code: { id: string } }).access_code.id).sort()).toEqual(
      codes.map((code) => code.id).sort(),
    );
    expect(items.filter((item) => item.entity === 'access_code').map((item) => item.status)).toEqual([
      'expired',
      'expired',
    ]);
  });
});
