/**
 * The MCP task calls and the worker run of the access-code batch job tests (test/integration/mcp-tasks-access-codes*,
 * test/integration/access-code-batch-jobs.test.ts), over the access-code fixture's context.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { processJobMessage } from '../../shared/domain/job-worker.js';
import type { Runtime } from '../../shared/runtime.js';
import { entity } from '../../shared/store/keys.js';
import type { TransactionItem } from '../../shared/store/requests.js';
import { ctx } from './fixtures/access-codes.js';
import { scanTable } from './guarantees.js';
import { modernRpc } from './mcp-raw.js';

/** One raw 2026-07-28 request (declaring the Tasks extension unless `tasks` is false) with the fixture team's token. */
export function rpc(
  method: string,
  params: Record<string, unknown>,
  options: { bearer?: string; tasks?: boolean } = {},
) {
  return modernRpc(ctx.runtime, options.bearer ?? ctx.token, method, params, {
    tasks: options.tasks,
    clientName: 'access-code-tasks-test',
    clientIp: '198.51.100.50',
  });
}

/** Calls `generate_access_codes` for `count` codes of the fixture's plan. */
export function generateCall(count: number, options: { tasks?: boolean; key?: string; plan?: string } = {}) {
  const args = { project_id: ctx.project.id, plan_id: options.plan ?? ctx.planId, count };
  return rpc(
    'tools/call',
    { name: 'generate_access_codes', arguments: { ...args, idempotency_key: options.key ?? randomUUID() } },
    options,
  );
}

/** Starts a task of `count` codes; returns its id. */
export async function startTask(count = 150): Promise<string> {
  const created = await generateCall(count);
  expect(created.result, JSON.stringify(created)).toMatchObject({ resultType: 'task', status: 'working' });
  return created.result.taskId as string;
}

/**
 * Runs the queued batch jobs (the worker's role) on `runtime`; `afterChunk(n)` runs once the n-th chunk of codes
 * committed, before the worker writes the next one (what it throws is the chunk write's error).
 */
export async function runJobs(
  afterChunk?: (chunk: number) => Promise<void>,
  runtime: Runtime = ctx.runtime,
): Promise<string[]> {
  let chunks = 0;
  const store = runtime.store;
  const observed: Runtime = {
    ...runtime,
    store: {
      ...store,
      transactWrite: async (items: TransactionItem[]) => {
        await store.transactWrite(items);
        if (items.some((item) => 'Put' in item && item.Put.Item.entity === entity.accessCode))
          await afterChunk?.(++chunks);
      },
    },
  };
  const outcomes: string[] = [];
  for (let message = ctx.runtime.accessCodeBatches.shift(); message; message = ctx.runtime.accessCodeBatches.shift())
    outcomes.push(await processJobMessage(observed, message));
  return outcomes;
}

/** The item types of access codes, but jobs: codes, batches, lookups, references, redemptions. */
const CODE_ENTITIES: ReadonlySet<unknown> = new Set([
  entity.accessCode,
  entity.accessCodeBatch,
  entity.accessCodeLookup,
  entity.accessCodeRef,
  entity.accessCodeRedemption,
]);

/** Every access-code item of the test's own table (a scan), by entity: `{ access_code: n, … }`. */
export async function codeItemCounts(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const item of await scanTable(ctx.runtime.store))
    if (CODE_ENTITIES.has(item.entity)) counts[String(item.entity)] = (counts[String(item.entity)] ?? 0) + 1;
  return counts;
}
