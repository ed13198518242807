/**
 * Access codes (DESIGN D18) over REST and the tool server: batches of 1–1,000 codes for one plan of the
 * project, shown once (reads show only a suffix; the table keeps only a digest); the batch written in
 * chunks so that a failure half-way leaves no visible half batch; `access_code.batch_generated` with the
 * batch id and count only; case-insensitive uniqueness per project through the code-lookup items;
 * list filters and paging; revocation with its CONFLICT paths; expiry by the clock through the deadline
 * index — `expired` at read time at once, and `access_code.expired` exactly once per code when the
 * deadline worker runs, however often and however concurrently.
 */

import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { codeDigest, codeSource, normalizeCode } from '../../shared/domain/access-codes/codes.js';
import { GeneratedAccessCodes } from '../../shared/domain/access-codes/schema.js';
import { setPlanStatus } from '../../shared/domain/plans/changes.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { createStore } from '../../shared/store/store.js';
import {
  domainSnapshot,
  expectRestProblem,
  expectToolProblem,
  failingStore,
  scanTable,
  withStore,
} from '../support/guarantees.js';
import { rest, tool } from '../support/calls.js';
import {
  ctx,
  events,
  generate,
  listAll,
  partitionItems,
  useAccessCodesFixture,
} from '../support/fixtures/access-codes.js';

useAccessCodesFixture();

/** Codes the generator hands out before random ones (to force collisions). */
const forced: string[] = [];
beforeEach(() => {
  forced.length = 0;
  const random = codeSource.newCode;
  vi.spyOn(codeSource, 'newCode').mockImplementation((prefix) => forced.shift() ?? random(prefix));
});
afterEach(() => {
  vi.restoreAllMocks();
});

const CODE_PATTERN = /^([A-Z0-9]+-)?[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}-[2-9A-HJKMNP-Z]{4}$/;

const batchesPath = (projectId = ctx.project.id) => `/v1/projects/${projectId}/access-codes/batches`;

describe('generating a batch', () => {
  it('answers 201 with every code once, emits access_code.batch_generated with the batch id and count only, and replays instead of generating twice', async () => {
    const key = randomUUID();
    const body = { plan_id: ctx.planId, count: 40, prefix: 'spring', access_days: 30, max_redemptions: null };
    const reply = await rest(ctx.runtime, {
      method: 'POST',
      path: batchesPath(),
      token: ctx.token,
      headers: { 'Idempotency-Key': key },
      body,
    });
    expect(reply.status, reply.text).toBe(201);
    const generated = GeneratedAccessCodes.parse(reply.json);
    expect(generated.batch).toMatchObject({
      project_id: ctx.project.id,
      plan_id: ctx.planId,
      count: 40,
      prefix: 'SPRING',
      effect: 'free_access',
      access_days: 30,
      max_redemptions: null,
      expires_at: null,
    });
    expect(generated.codes).toHaveLength(40);
    for (const { code } of generated.codes) expect(code).toMatch(CODE_PATTERN);
    expect(generated.codes.every(({ code }) => code.startsWith('SPRING-'))).toBe(true);
    expect(new Set(generated.codes.map(({ code }) => normalizeCode(code))).size).toBe(40);

    const replay = await rest(ctx.runtime, {
      method: 'POST',
      path: batchesPath(),
      token: ctx.token,
      headers: { 'Idempotency-Key': key },
      body,
    });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replay']).toBe('true');
    expect(replay.json).toEqual(reply.json);
    expect(await partitionItems('ACCESS_CODE_BATCH#')).toHaveLength(1);
    expect(await partitionItems('ACCESS_CODE#')).toHaveLength(40);

    const batchEvents = await events('access_code.batch_generated');
    expect(batchEvents).toHaveLength(1);
    expect(batchEvents[0]).toMatchObject({
      project_id: ctx.project.id,
      data: { batch: { id: generated.batch.id, count: 40 } },
    });
    const everything = JSON.stringify(await scanTable(ctx.runtime.store));
    for (const { code } of generated.codes) {
      expect(JSON.stringify(batchEvents)).not.toContain(code.slice(7));
      // The table keeps a digest of each code and its suffix, never the code.
      expect(everything).not.toContain(code);
      expect(everything).not.toContain(normalizeCode(code));
      expect(everything).toContain(codeDigest(code));
    }
  });

  /** 1,000 codes are ~3,000 items in ~30 transactions against DynamoDB Local (a budget, not a timing assertion). */
  const LARGEST_BATCH_TIMEOUT_MS = 180_000;

  it(
    'generates the largest batch, 1,000 codes, all distinct and all listed',
    async () => {
      const reply = await rest(ctx.runtime, {
        method: 'POST',
        path: batchesPath(),
        token: ctx.token,
        body: { plan_id: ctx.planId, count: 1000 },
      });
      expect(reply.status, reply.text).toBe(201);
      const generated = GeneratedAccessCodes.parse(reply.json);
      expect(new Set(generated.codes.map(({ code }) => normalizeCode(code))).size).toBe(1000);
      const listed = await listAll({ batch_id: generated.batch.id });
      expect(listed).toHaveLength(1000);
      expect(new Set(listed.map((code) => code.id))).toEqual(new Set(generated.codes.map((code) => code.id)));
      expect(await events('access_code.batch_generated')).toHaveLength(1);
    },
    LARGEST_BATCH_TIMEOUT_MS,
  );

  it('generates through the tool with the defaults (free_access, one redemption, no expiry) and replays an idempotency_key', async () => {
    const args = { project_id: ctx.project.id, plan_id: ctx.planId, count: 2, idempotency_key: randomUUID() };
    const result = await tool(ctx.runtime, ctx.principal, 'generate_access_codes', args);
    expect(result.isError, JSON.stringify(result.structuredContent)).toBeFalsy();
    const generated = GeneratedAccessCodes.parse(result.structuredContent);
    expect(generated.batch).toMatchObject({
      count: 2,
      prefix: null,
      effect: 'free_access',
      access_days: null,
      max_redemptions: 1,
      expires_at: null,
    });
    for (const { code } of generated.codes) expect(code).toMatch(CODE_PATTERN);
    const again = await tool(ctx.runtime, ctx.principal, 'generate_access_codes', args);
    expect(again._meta).toEqual({ 'idempotent-replay': true });
    expect(again.structuredContent).toEqual(result.structuredContent);
    expect(await partitionItems('ACCESS_CODE_BATCH#')).toHaveLength(1);
  });

  it('refuses bad input with VALIDATION_FAILED and writes nothing', async () => {
    const before = await domainSnapshot(ctx.runtime.store);
    const past = new Date(ctx.clock.nowMs() - 1000).toISOString();
    for (const body of [
      { plan_id: ctx.planId, count: 1, colour: 'red' },
      { plan_id: ctx.planId, count: 0 },
      { plan_id: ctx.planId, count: 1001 },
      { plan_id: ctx.planId, count: 1, prefix: 'not-ok!' },
      { plan_id: ctx.planId, count: 1, effect: 'forever' },
      { plan_id: ctx.planId, count: 1, access_days: 0 },
      { plan_id: ctx.planId, count: 1, max_redemptions: 0 },
      { plan_id: 'not-a-uuid', count: 1 },
      { count: 1 },
    ]) {
      expectRestProblem(
        await rest(ctx.runtime, { method: 'POST', path: batchesPath(), token: ctx.token, body }),
        'VALIDATION_FAILED',
      );
    }
    const problem = expectRestProblem(
      await rest(ctx.runtime, {
        method: 'POST',
        path: batchesPath(),
        token: ctx.token,
        body: { plan_id: ctx.planId, count: 1, expires_at: past },
      }),
      'VALIDATION_FAILED',
    );
    expect(problem.errors?.map((error) => error.path)).toEqual(['expires_at']);
    expectToolProblem(
      await tool(ctx.runtime, ctx.principal, 'generate_access_codes', {
        project_id: ctx.project.id,
        plan_id: ctx.planId,
        count: 1,
        code: 'MINE',
      }),
      'VALIDATION_FAILED',
    );
    expect(await domainSnapshot(ctx.runtime.store)).toEqual(before);
  });

  it('needs a plan of the same project (NOT_FOUND), an active plan and an active project (CONFLICT), and writes nothing otherwise', async () => {
    const other = await createProject(ctx.runtime, ctx.principal, { name: 'Other', platform_type: 'telegram' });
    const otherPlan = await createPlan(ctx.runtime, ctx.principal, other.id, {
      name: 'Silver',
      amount: 500,
      currency: 'EUR',
      interval: 'month',
    });
    const closed = await createPlan(ctx.runtime, ctx.principal, ctx.project.id, {
      name: 'Closed',
      amount: 100,
      currency: 'USD',
      interval: 'month',
    });
    await setPlanStatus(ctx.runtime, ctx.principal, closed.id, 'inactive');
    const before = await domainSnapshot(ctx.runtime.store);
    const post = (projectId: string, planId: string) =>
      rest(ctx.runtime, {
        method: 'POST',
        path: batchesPath(projectId),
        token: ctx.token,
        body: { plan_id: planId, count: 1 },
      });
    expectRestProblem(await post(ctx.project.id, otherPlan.id), 'NOT_FOUND');
    expectRestProblem(await post(ctx.project.id, randomUUID()), 'NOT_FOUND');
    expectRestProblem(await post(randomUUID(), ctx.planId), 'NOT_FOUND');
    expectRestProblem(await post(ctx.project.id, closed.id), 'CONFLICT');
    expectToolProblem(
      await tool(ctx.runtime, ctx.principal, 'generate_access_codes', {
        project_id: other.id,
        plan_id: ctx.planId,
        count: 1,
      }),
      'NOT_FOUND',
    );
    expect(await domainSnapshot(ctx.runtime.store)).toEqual(before);
  });

  it('keeps codes unique per project, case-insensitively: a code already taken (or drawn twice) is replaced', async () => {
    expect(normalizeCode('abcd-efgh jkmn')).toBe('ABCDEFGHJKMN');
    expect(codeDigest('abcd-efgh-jkmn')).toBe(codeDigest('ABCDEFGHJKMN'));
    forced.push('ABCD-EFGH-JKMN');
    const first = await generate({ count: 1 });
    expect(first.codes.map(({ code }) => code)).toEqual(['ABCD-EFGH-JKMN']);
    // The next batch draws the same code twice, then the taken one: each is replaced by a fresh code.
    forced.push('WXYZ-WXYZ-WXYZ', 'WXYZ-WXYZ-WXYZ', 'ABCD-EFGH-JKMN');
    const second = await generate({ count: 3 });
    const codes = second.codes.map(({ code }) => code);
    expect(codes).toHaveLength(3);
    expect(codes).toContain('WXYZ-WXYZ-WXYZ');
    expect(codes).not.toContain('ABCD-EFGH-JKMN');
    expect(new Set(codes.map(normalizeCode)).size).toBe(3);
    expect((await scanTable(ctx.runtime.store)).filter((item) => item.entity === 'access_code_lookup')).toHaveLength(4);
    expect(await listAll()).toHaveLength(4);
  });

  it('leaves no visible half batch when a chunk fails: nothing to read, no event, and what was written is removed', async () => {
    const before = await domainSnapshot(ctx.runtime.store);
    let transactions = 0;
    // 100 codes: one pending-batch transaction, then four chunk transactions; the third transaction fails.
    const broken = withStore(
      ctx.runtime,
      failingStore(
        ctx.runtime.store,
        (command) => command.constructor.name === 'TransactWriteCommand' && ++transactions === 3,
      ),
    );
    const reply = await rest(broken, {
      method: 'POST',
      path: batchesPath(),
      token: ctx.token,
      body: { plan_id: ctx.planId, count: 100 },
    });
    expectRestProblem(reply, 'INTERNAL_ERROR');
    expect(await listAll()).toEqual([]);
    expect(await events('access_code.batch_generated')).toEqual([]);
    expect(await domainSnapshot(ctx.runtime.store)).toEqual(before);
  });

  it('replays, never generates again, when the answer of the final transaction was lost after it committed', async () => {
    // The store commits the transaction that activates the batch, then reports a failure (a lost answer).
    const document = new Proxy(ctx.runtime.store.document, {
      get(target, property, receiver) {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return async (command: {
          constructor: { name: string };
          input: { TransactItems?: { Update?: { UpdateExpression?: string } }[] };
        }) => {
          const result = await (target.send as (command: unknown) => Promise<unknown>).call(target, command);
          const activates =
            command.constructor.name === 'TransactWriteCommand' &&
            command.input.TransactItems?.some((item) => item.Update?.UpdateExpression === 'SET #state = :active');
          if (activates) throw new Error('injected: the answer was lost after the commit');
          return result;
        };
      },
    });
    const lossy = withStore(
      ctx.runtime,
      createStore({
        document,
        tableName: ctx.runtime.store.tableName,
        deadLetterTableName: ctx.runtime.store.deadLetterTableName,
      }),
    );
    const call = {
      method: 'POST',
      path: batchesPath(),
      token: ctx.token,
      headers: { 'Idempotency-Key': randomUUID() },
      body: { plan_id: ctx.planId, count: 50 },
    };
    expectRestProblem(await rest(lossy, call), 'INTERNAL_ERROR');
    const retried = await rest(ctx.runtime, call);
    expect(retried.status, retried.text).toBe(201);
    expect(retried.headers['idempotent-replay']).toBe('true');
    const generated = GeneratedAccessCodes.parse(retried.json);
    expect(generated.codes).toHaveLength(50);
    expect(await partitionItems('ACCESS_CODE_BATCH#')).toHaveLength(1);
    expect((await listAll()).map((code) => code.id).sort()).toEqual(generated.codes.map((code) => code.id).sort());
    expect(await events('access_code.batch_generated')).toHaveLength(1);
  });

  it('keeps what a crash leaves behind invisible and unreadable (the batch never became active)', async () => {
    let transactions = 0;
    // The pending batch and one chunk are written; every later transaction (the cleanup's too) fails.
    const broken = withStore(
      ctx.runtime,
      failingStore(
        ctx.runtime.store,
        (command) => command.constructor.name === 'TransactWriteCommand' && ++transactions > 2,
      ),
    );
    const reply = await rest(broken, {
      method: 'POST',
      path: batchesPath(),
      token: ctx.token,
      body: { plan_id: ctx.planId, count: 100 },
    });
    expectRestProblem(reply, 'INTERNAL_ERROR');
    const leftovers = await partitionItems('ACCESS_CODE#');
    expect(leftovers.length).toBeGreaterThan(0);
    expect(await listAll()).toEqual([]);
    for (const item of leftovers.slice(0, 3)) {
      expectRestProblem(
        await rest(ctx.runtime, { method: 'GET', path: `/v1/access-codes/${String(item.id)}`, token: ctx.token }),
        'NOT_FOUND',
      );
      expectRestProblem(
        await rest(ctx.runtime, {
          method: 'POST',
          path: `/v1/access-codes/${String(item.id)}/revoke`,
          token: ctx.token,
        }),
        'NOT_FOUND',
      );
    }
    expect(await events('access_code.batch_generated')).toEqual([]);
  });
});
