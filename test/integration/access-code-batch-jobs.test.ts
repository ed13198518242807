/**
 * What a stopped access-code batch job leaves (DESIGN D5, D18): a cancel, a failure part-way and a crashed run leave
 * no item of their batch in the table (codes, lookups, references, the batch); the sweeper queues a running job with
 * no progress for its grace again, and the rerun deletes what the crashed run wrote before it writes a new batch; after
 * its last run a stopped job fails.
 * Through `handleMcpHttpRequest` on DynamoDB Local, the worker and the sweeper run by hand, the clock injected.
 */
import { describe, expect, it } from 'vitest';
import { BATCH_JOB_MAX_RUNS } from '../../shared/domain/access-codes/batch-job.js';
import { processJobMessage } from '../../shared/domain/job-worker.js';
import { SWEEP_GRACE_MS } from '../../shared/domain/webhook-deliveries/policy.js';
import { sweep } from '../../shared/domain/webhook-deliveries/sweeper.js';
import type { AccessCodeBatchMessage, Runtime } from '../../shared/runtime.js';
import { keys } from '../../shared/store/keys.js';
import { codeItemCounts, rpc, runJobs, startTask } from '../support/access-code-tasks.js';
import { ctx, listAll, useAccessCodesFixture } from '../support/fixtures/access-codes.js';

useAccessCodesFixture();

/** The items a batch of `count` codes keeps once active: each code, its lookup and reference; the batch. */
const activeBatchItems = (count: number) => ({
  access_code: count,
  access_code_lookup: count,
  access_code_ref: count,
  access_code_batch: 1,
});

/** A runtime whose store fails every write once `down.value` is true: the worker's process died. */
function crashable(down: { value: boolean }): Runtime {
  const store = ctx.runtime.store;
  const dead = async () => {
    if (down.value) throw new Error('worker process stopped');
  };
  return {
    ...ctx.runtime,
    store: {
      ...store,
      update: async (request) => (await dead(), store.update(request)),
      delete: async (request) => (await dead(), store.delete(request)),
      transactWrite: async (items) => (await dead(), store.transactWrite(items)),
    },
  };
}

describe('stopped access-code batch jobs leave nothing behind', () => {
  it('a cancel mid-way deletes every item the batch wrote, lookups included', async () => {
    const taskId = await startTask(150);
    const outcomes = await runJobs(async (chunk) => {
      if (chunk === 2) expect((await rpc('tasks/cancel', { taskId })).result).toMatchObject({ resultType: 'complete' });
    });
    expect(outcomes).toEqual(['access_code_batch_cancelled']);
    expect(await codeItemCounts()).toEqual({});
  });

  it('a failure part-way marks the task failed and deletes every item the batch wrote', async () => {
    const taskId = await startTask(150);
    const outcomes = await runJobs(async (chunk) => {
      if (chunk === 3) throw new Error('connection reset');
    });
    expect(outcomes).toEqual(['access_code_batch_failed']);
    expect((await rpc('tasks/get', { taskId })).result).toMatchObject({
      status: 'failed',
      error: { data: { code: 'INTERNAL_ERROR' } },
    });
    expect(await codeItemCounts()).toEqual({});
    expect(await listAll()).toEqual([]);
  });

  it('the sweeper restarts a crashed job after its grace; the rerun deletes what the crash left and completes', async () => {
    const taskId = await startTask(150);
    const down = { value: false };
    await expect(
      runJobs(async (chunk) => {
        if (chunk === 2) down.value = true;
      }, crashable(down)),
    ).rejects.toThrow('worker process stopped');
    expect(await codeItemCounts()).toEqual({ ...activeBatchItems(66), access_code_batch: 1 });
    expect((await rpc('tasks/get', { taskId })).result).toMatchObject({ status: 'working' });

    // Not stalled yet: nothing is queued.
    ctx.clock.advance(SWEEP_GRACE_MS - 1);
    expect(await sweep(ctx.runtime)).toMatchObject({ accessCodeBatches: 0 });
    expect(ctx.runtime.accessCodeBatches).toEqual([]);
    ctx.clock.advance(2);
    expect(await sweep(ctx.runtime)).toMatchObject({ accessCodeBatches: 1 });
    expect(await runJobs()).toEqual(['access_code_batch_completed']);

    const done = await rpc('tasks/get', { taskId });
    expect(done.result).toMatchObject({ status: 'completed', statusMessage: '150 of 150 codes written.' });
    expect(done.result.result.structuredContent.codes).toHaveLength(150);
    expect(await listAll()).toHaveLength(150);
    expect(await codeItemCounts()).toEqual(activeBatchItems(150));
    // A finished job is never queued again.
    ctx.clock.advance(10 * SWEEP_GRACE_MS);
    expect(await sweep(ctx.runtime)).toMatchObject({ accessCodeBatches: 0 });
    expect(ctx.runtime.accessCodeBatches).toEqual([]);
  });

  it('a job stopped after its last run fails at the next restart and its batch is deleted', async () => {
    const taskId = await startTask(150);
    const down = { value: false };
    await expect(
      runJobs(async (chunk) => {
        if (chunk === 1) down.value = true;
      }, crashable(down)),
    ).rejects.toThrow('worker process stopped');
    // As if the sweeper had restarted it until its last run, which stopped too.
    await ctx.runtime.store.update({
      Key: keys.accessCodeBatchJob(ctx.teamId, taskId.slice('access_code_batch_'.length)),
      UpdateExpression: 'SET runs = :runs',
      ExpressionAttributeValues: { ':runs': BATCH_JOB_MAX_RUNS },
    });
    ctx.clock.advance(SWEEP_GRACE_MS + 1);
    expect(await sweep(ctx.runtime)).toMatchObject({ accessCodeBatches: 1 });
    expect(await runJobs()).toEqual(['access_code_batch_failed']);
    expect((await rpc('tasks/get', { taskId })).result).toMatchObject({
      status: 'failed',
      statusMessage: expect.stringContaining(`stopped ${BATCH_JOB_MAX_RUNS} times`),
    });
    expect(await codeItemCounts()).toEqual({});
  });

  it('a second message for a job that progressed within the grace is skipped; the running job completes', async () => {
    const taskId = await startTask(120);
    const message: AccessCodeBatchMessage = {
      kind: 'access_code_batch',
      team_id: ctx.teamId,
      job_id: taskId.slice('access_code_batch_'.length),
    };
    const duplicates: string[] = [];
    const outcomes = await runJobs(async (chunk) => {
      if (chunk === 1) duplicates.push(await processJobMessage(ctx.runtime, message));
    });
    expect(duplicates).toEqual(['skipped']);
    expect(outcomes).toEqual(['access_code_batch_completed']);
    expect(await codeItemCounts()).toEqual(activeBatchItems(120));
  });
});
