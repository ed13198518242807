/**
 * Access-code batches above 100 codes as MCP tasks (2026-07-28, Tasks extension; DESIGN D5, D18): the call answers a
 * task at once, the worker writes the batch chunk by chunk (progress in `tasks/get`), the completed task shows the
 * codes to the first `tasks/get` only (they are kept sealed until then), `tasks/cancel` leaves no active batch and no
 * redeemable code; another team finds no such task; without the extension, and for 100 codes or fewer, the tool answers
 * inline as before. Through `handleMcpHttpRequest` on DynamoDB Local, the worker run by hand.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { codeSource } from '../../shared/domain/access-codes/codes.js';
import { changeTier } from '../../shared/domain/billing/changes.js';
import { setPlanStatus } from '../../shared/domain/plans/changes.js';
import { GeneratedAccessCodes } from '../../shared/domain/access-codes/schema.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { keys } from '../../shared/store/keys.js';
import { rest } from '../support/calls.js';
import { generateCall, rpc, runJobs, startTask } from '../support/access-code-tasks.js';
import { ctx, events, listAll, partitionItems, useAccessCodesFixture } from '../support/fixtures/access-codes.js';
import { lockTeam } from '../support/billing.js';
import { seedTeam } from '../support/store.js';
import { DAY_MS } from '../../shared/clock.js';

useAccessCodesFixture();

/** Every code the generator made in this test, in order (the task shows codes once; a cancelled job never). */
let made: string[];
beforeEach(() => {
  made = [];
  const random = codeSource.newCode;
  vi.spyOn(codeSource, 'newCode').mockImplementation((prefix) => {
    const code = random(prefix);
    made.push(code);
    return code;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
});

const TASK_ID = /^access_code_batch_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Redeems `code` for a new subscriber over REST; resolves with the HTTP status. */
async function redeemStatus(code: string): Promise<number> {
  const reply = await rest(ctx.runtime, {
    method: 'POST',
    path: `/v1/projects/${ctx.project.id}/access-codes/redeem`,
    token: ctx.token,
    body: { code, subscriber: { display_name: 'Ada' } },
  });
  return reply.status;
}

describe('access-code batches above 100 as tasks', () => {
  it('answers a task at once, reports progress, then shows the codes to the first tasks/get only', async () => {
    const key = randomUUID();
    const created = await generateCall(150, { key });
    expect(created.result).toMatchObject({
      resultType: 'task',
      taskId: expect.stringMatching(TASK_ID),
      status: 'working',
      statusMessage: '0 of 150 codes written.',
      ttlMs: DAY_MS,
    });
    const { taskId } = created.result;
    expect(await listAll()).toEqual([]);
    // The same call retried with its idempotency key answers the same task; no second job.
    expect((await generateCall(150, { key })).result).toMatchObject({ resultType: 'task', taskId });
    expect(ctx.runtime.accessCodeBatches).toHaveLength(1);

    const progress: string[] = [];
    const outcomes = await runJobs(async (chunk) => {
      if (chunk === 1) progress.push((await rpc('tasks/get', { taskId })).result.statusMessage);
    });
    expect(outcomes).toEqual(['access_code_batch_completed']);
    expect(progress).toEqual(['33 of 150 codes written.']);

    const done = await rpc('tasks/get', { taskId });
    expect(done.result).toMatchObject({ status: 'completed', statusMessage: '150 of 150 codes written.' });
    const generated = GeneratedAccessCodes.parse(done.result.result.structuredContent);
    expect(JSON.parse(done.result.result.content[0].text)).toEqual(done.result.result.structuredContent);
    expect(generated.batch).toMatchObject({ project_id: ctx.project.id, plan_id: ctx.planId, count: 150 });
    expect(new Set(generated.codes.map(({ code }) => code)).size).toBe(150);
    const listed = await listAll();
    expect(listed).toHaveLength(150);
    expect(new Set(listed.map((code) => code.id))).toEqual(new Set(generated.codes.map(({ id }) => id)));
    expect(listed.every((code) => code.batch_id === generated.batch.id && code.status === 'active')).toBe(true);
    for (const { code } of [generated.codes[0], generated.codes[149]]) expect(await redeemStatus(code)).toBe(201);

    // Shown once: a second read gets the result without codes and says so.
    const again = await rpc('tasks/get', { taskId });
    expect(again.result).toMatchObject({
      status: 'completed',
      statusMessage: expect.stringContaining('shown once'),
      result: { structuredContent: { batch: { id: generated.batch.id }, codes: [] } },
    });
    expect(again.result.result.content[1].text).toContain('no longer stored');
    // A completed task cannot be cancelled.
    const late = await rpc('tasks/cancel', { taskId });
    expect(late.error).toMatchObject({ code: -32602, message: expect.stringContaining('is completed') });
    expect(await listAll()).toHaveLength(150);

    // One batch_generated event; no event or activity entry holds a code.
    expect(await events('access_code.batch_generated')).toHaveLength(1);
    const { data: activity } = await listActivity(ctx.runtime.store, ctx.teamId, { limit: 100 });
    const logged = JSON.stringify([await events(), activity]);
    for (const { code } of generated.codes) expect(logged).not.toContain(code);
  });

  it('keeps the codes sealed until read, then off the item; of two concurrent reads one gets them', async () => {
    const taskId = await startTask(120);
    await runJobs();
    const jobKey = keys.accessCodeBatchJob(ctx.teamId, taskId.slice('access_code_batch_'.length));
    const stored = await ctx.runtime.store.get(jobKey, { consistent: true });
    expect(stored?.sealed_codes).toMatchObject({ v: 1, kek: 'local', ciphertext: expect.any(String) });
    expect(stored?.expires_at).toBe(Math.floor(ctx.clock.nowMs() / 1000) + 86_400);
    expect(made.length).toBeGreaterThanOrEqual(120);
    const text = JSON.stringify(stored);
    for (const code of made) expect(text).not.toContain(code);

    const reads = await Promise.all([rpc('tasks/get', { taskId }), rpc('tasks/get', { taskId })]);
    const counts = reads.map((read) => read.result.result.structuredContent.codes.length).sort();
    expect(counts).toEqual([0, 120]);
    expect((await ctx.runtime.store.get(jobKey, { consistent: true }))?.sealed_codes).toBeUndefined();
  });

  it('cancels mid-way: the batch written so far is deleted, nothing is active and no code redeems', async () => {
    const taskId = await startTask(150);
    const cancels: unknown[] = [];
    const outcomes = await runJobs(async (chunk) => {
      if (chunk === 2) cancels.push(await rpc('tasks/cancel', { taskId }));
    });
    expect(cancels).toEqual([
      { status: 200, jsonrpc: '2.0', id: 1, result: expect.objectContaining({ resultType: 'complete' }) },
    ]);
    expect(outcomes).toEqual(['access_code_batch_cancelled']);
    expect((await rpc('tasks/get', { taskId })).result).toMatchObject({
      status: 'cancelled',
      statusMessage: 'Cancelled: 66 of 150 codes written; they were deleted.',
    });
    expect(await listAll()).toEqual([]);
    expect(await partitionItems('ACCESS_CODE')).toEqual([]);
    for (const code of made.slice(0, 3)) expect(await redeemStatus(code)).toBe(404);
    expect(await events('access_code.batch_generated')).toEqual([]);
    // Cancelling again is acknowledged; each cancel is one activity entry of the pipeline.
    expect((await rpc('tasks/cancel', { taskId })).result).toMatchObject({ resultType: 'complete' });
    const { data } = await listActivity(ctx.runtime.store, ctx.teamId, { limit: 100 });
    expect(data.filter((entry) => entry.operation === 'tasks/cancel')).toEqual([
      expect.objectContaining({ surface: 'mcp', outcome: 'ok', status: 200 }),
      expect.objectContaining({ surface: 'mcp', outcome: 'ok', status: 200 }),
    ]);
  });

  it('cancels before the worker starts: the job writes nothing', async () => {
    const taskId = await startTask(101);
    expect((await rpc('tasks/cancel', { taskId })).result).toMatchObject({ resultType: 'complete' });
    expect(await runJobs()).toEqual(['skipped']);
    expect((await rpc('tasks/get', { taskId })).result.status).toBe('cancelled');
    expect(await partitionItems('ACCESS_CODE')).toEqual([]);
  });

  it('fails when the plan was deactivated before the worker ran: the problem is the task error, nothing is active', async () => {
    const taskId = await startTask(110);
    await setPlanStatus(ctx.runtime, ctx.principal, ctx.planId, 'inactive');
    expect(await runJobs()).toEqual(['access_code_batch_failed']);
    const failed = await rpc('tasks/get', { taskId });
    expect(failed.result).toMatchObject({
      status: 'failed',
      statusMessage: expect.stringContaining('active plan'),
      error: { code: -32603, data: { code: 'CONFLICT' } },
    });
    expect(await listAll()).toEqual([]);
    expect((await rpc('tasks/cancel', { taskId })).error).toMatchObject({ code: -32602 });
  });

  it("another team's token finds no such task and cannot cancel it; an unknown id is no task either", async () => {
    const taskId = await startTask();
    const other = await seedTeam(ctx.runtime.store, ctx.clock);
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const refused = await rpc(method, { taskId }, { bearer: other.token });
      expect(refused.error).toEqual({ code: -32602, message: 'Failed to retrieve task: Task not found' });
    }
    expect((await rpc('tasks/get', { taskId })).result.status).toBe('working');
    expect((await rpc('tasks/get', { taskId: `access_code_batch_${randomUUID()}` })).error?.code).toBe(-32602);
  });

  it('checks the request before making a task: an unknown plan is the tool error, and no job is queued', async () => {
    const refused = await generateCall(150, { plan: randomUUID() });
    expect(refused.result).toMatchObject({ isError: true, structuredContent: { code: 'NOT_FOUND' } });
    expect(ctx.runtime.accessCodeBatches).toEqual([]);
  });

  it('runs the dry run and the billing lockdown before any task: a summary, then BILLING_LOCKED, and no job', async () => {
    const args = { project_id: ctx.project.id, plan_id: ctx.planId, count: 150, dry_run: true };
    const dry = await rpc('tools/call', { name: 'generate_access_codes', arguments: args });
    expect(dry.result).toMatchObject({ structuredContent: { dry_run: true, changes: { count: 150 } } });
    await changeTier(ctx.runtime, ctx.teamId, 'free'); // the fixture's team is on business: no invoice to fail
    await lockTeam(ctx.runtime, ctx.teamId);
    const locked = await generateCall(150);
    expect(locked.result).toMatchObject({ isError: true, structuredContent: { code: 'BILLING_LOCKED' } });
    expect(ctx.runtime.accessCodeBatches).toEqual([]);
  });

  it('answers inline without the extension, and for 100 codes with it', async () => {
    for (const [count, tasks] of [
      [150, false],
      [100, true],
    ] as const) {
      const answer = await generateCall(count, { tasks });
      expect(answer.result.resultType).toBe('complete');
      expect(GeneratedAccessCodes.parse(answer.result.structuredContent).codes).toHaveLength(count);
    }
    expect(ctx.runtime.accessCodeBatches).toEqual([]);
    expect(await listAll()).toHaveLength(250);
  });
});
