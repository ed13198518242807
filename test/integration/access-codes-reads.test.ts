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
import { describe, expect, it } from 'vitest';
import { generateAccessCodes } from '../../shared/domain/access-codes/generation.js';
import { AccessCode, AccessCodeList } from '../../shared/domain/access-codes/schema.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { keys } from '../../shared/store/keys.js';
import { expectRestProblem, expectToolProblem } from '../support/guarantees.js';
import { rest, tool } from '../support/calls.js';
import {
  ctx,
  events,
  generate,
  listAll,
  listPath,
  partitionItems,
  useAccessCodesFixture,
} from '../support/fixtures/access-codes.js';
import { HOUR_MS } from '../../shared/clock.js';

useAccessCodesFixture();

describe('reading codes', () => {
  it('lists and reads codes with their suffix only, pages with cursors, and filters by batch, plan and status', async () => {
    const first = await generate({ count: 3 });
    const second = await generate({ count: 2, prefix: 'vip' });
    const otherPlan = await createPlan(ctx.runtime, ctx.principal, ctx.project.id, {
      name: 'Bronze',
      amount: 300,
      currency: 'USD',
      interval: 'month',
    });
    const third = await generateAccessCodes(ctx.runtime, ctx.principal, {
      project_id: ctx.project.id,
      plan_id: otherPlan.id,
      count: 1,
      effect: 'trial',
      access_days: 7,
      max_redemptions: null,
      expires_at: null,
    });

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const reply = await rest(ctx.runtime, {
        method: 'GET',
        path: listPath(),
        token: ctx.token,
        query: { limit: '2', ...(cursor ? { cursor } : {}) },
      });
      expect(reply.status).toBe(200);
      const page = AccessCodeList.parse(reply.json);
      seen.push(...page.data.map((code) => code.id));
      for (const item of reply.json.data) expect(item).not.toHaveProperty('code');
      cursor = page.next_cursor ?? undefined;
      pages++;
    } while (cursor && pages < 10);
    const allIds = [...first.codes, ...second.codes, ...third.codes].map((code) => code.id);
    expect(seen.sort()).toEqual([...allIds].sort());
    expect(pages).toBeGreaterThanOrEqual(3);

    const listed = await listAll({ batch_id: second.batch.id });
    expect(listed.map((code) => code.id).sort()).toEqual(second.codes.map((code) => code.id).sort());
    for (const code of listed) {
      const shown = second.codes.find((candidate) => candidate.id === code.id)!.code;
      expect(code).toMatchObject({
        batch_id: second.batch.id,
        plan_id: ctx.planId,
        code_suffix: shown.slice(-4),
        status: 'active',
        times_redeemed: 0,
        max_redemptions: 1,
      });
    }
    expect((await listAll({ plan_id: otherPlan.id })).map((code) => code.id)).toEqual([third.codes[0].id]);
    expect(await listAll({ status: 'revoked' })).toEqual([]);
    expect(await listAll({ status: 'active' })).toHaveLength(6);

    const viaTool = await tool(ctx.runtime, ctx.principal, 'list_access_codes', {
      project_id: ctx.project.id,
      batch_id: first.batch.id,
    });
    expect(
      AccessCodeList.parse(viaTool.structuredContent)
        .data.map((code) => code.id)
        .sort(),
    ).toEqual(first.codes.map((code) => code.id).sort());

    const read = await rest(ctx.runtime, {
      method: 'GET',
      path: `/v1/access-codes/${third.codes[0].id}`,
      token: ctx.token,
    });
    expect(read.status).toBe(200);
    expect(AccessCode.parse(read.json)).toMatchObject({
      id: third.codes[0].id,
      effect: 'trial',
      access_days: 7,
      max_redemptions: null,
      code_suffix: third.codes[0].code.slice(-4),
    });
    expect(read.text).not.toContain(third.codes[0].code);
    expectRestProblem(
      await rest(ctx.runtime, { method: 'GET', path: `/v1/access-codes/${randomUUID()}`, token: ctx.token }),
      'NOT_FOUND',
    );
    expectRestProblem(
      await rest(ctx.runtime, { method: 'GET', path: listPath(randomUUID()), token: ctx.token }),
      'NOT_FOUND',
    );
    expectRestProblem(
      await rest(ctx.runtime, { method: 'GET', path: listPath(), token: ctx.token, query: { status: 'redeemed' } }),
      'VALIDATION_FAILED',
    );
  });
});

describe('revoking a code', () => {
  it('revokes an active code once (CONFLICT afterwards), over REST and the tool, and replays a retried request', async () => {
    const { codes } = await generate({ count: 3 });
    const key = randomUUID();
    const path = `/v1/access-codes/${codes[0].id}/revoke`;
    const revoked = await rest(ctx.runtime, {
      method: 'POST',
      path,
      token: ctx.token,
      headers: { 'Idempotency-Key': key },
    });
    expect(revoked.status, revoked.text).toBe(200);
    expect(AccessCode.parse(revoked.json)).toMatchObject({
      id: codes[0].id,
      status: 'revoked',
      revoked_at: new Date(ctx.clock.nowMs()).toISOString(),
    });
    const replay = await rest(ctx.runtime, {
      method: 'POST',
      path,
      token: ctx.token,
      headers: { 'Idempotency-Key': key },
    });
    expect(replay.headers['idempotent-replay']).toBe('true');
    expect(replay.json).toEqual(revoked.json);
    const again = expectRestProblem(await rest(ctx.runtime, { method: 'POST', path, token: ctx.token }), 'CONFLICT');
    expect(again.detail).toContain('revoked');

    const viaTool = await tool(ctx.runtime, ctx.principal, 'revoke_access_code', { id: codes[1].id });
    expect(AccessCode.parse(viaTool.structuredContent).status).toBe('revoked');
    expectToolProblem(await tool(ctx.runtime, ctx.principal, 'revoke_access_code', { id: codes[1].id }), 'CONFLICT');
    expectToolProblem(await tool(ctx.runtime, ctx.principal, 'revoke_access_code', { id: randomUUID() }), 'NOT_FOUND');

    expect((await listAll({ status: 'revoked' })).map((code) => code.id).sort()).toEqual(
      [codes[0].id, codes[1].id].sort(),
    );
    expect((await listAll({ status: 'active' })).map((code) => code.id)).toEqual([codes[2].id]);
    expectRestProblem(
      await rest(ctx.runtime, { method: 'POST', path, token: ctx.token, body: { reason: 'x' } }),
      'VALIDATION_FAILED',
    );
  });
});

describe('expiry by the clock', () => {
  it('reads expired as soon as expires_at passes, and the deadline worker emits access_code.expired exactly once per code, however often it runs', async () => {
    const expiresAt = new Date(ctx.clock.nowMs() + HOUR_MS).toISOString();
    const { batch, codes } = await generate({ count: 3, expires_at: expiresAt });
    expect(batch.expires_at).toBe(expiresAt);
    const deadlineKey = keys.deadline(ctx.teamId, 'access_code.expire', batch.id);
    expect(await ctx.runtime.store.get(deadlineKey)).toMatchObject({ due_at: expiresAt, project_id: ctx.project.id });
    await rest(ctx.runtime, { method: 'POST', path: `/v1/access-codes/${codes[2].id}/revoke`, token: ctx.token });

    // Not due yet: the worker applies nothing.
    expect(await applyDueDeadlines(ctx.runtime, ctx.clock.nowMs())).toEqual({ applied: 0, failed: 0 });
    expect((await listAll({ status: 'active' })).map((code) => code.id).sort()).toEqual(
      [codes[0].id, codes[1].id].sort(),
    );

    ctx.clock.advance(HOUR_MS + 1000);
    // Between expiry and the worker's run, reads already say expired (and only an active code can be revoked).
    const read = await rest(ctx.runtime, { method: 'GET', path: `/v1/access-codes/${codes[0].id}`, token: ctx.token });
    expect(read.json.status).toBe('expired');
    expect((await listAll({ status: 'expired' })).map((code) => code.id).sort()).toEqual(
      [codes[0].id, codes[1].id].sort(),
    );
    expect(await listAll({ status: 'active' })).toEqual([]);
    expect((await listAll({ status: 'revoked' })).map((code) => code.id)).toEqual([codes[2].id]);
    expectRestProblem(
      await rest(ctx.runtime, { method: 'POST', path: `/v1/access-codes/${codes[1].id}/revoke`, token: ctx.token }),
      'CONFLICT',
    );
    expect(await events('access_code.expired')).toEqual([]);

    // Two runs at once, then another: each code expires once.
    const runs = await Promise.all([
      applyDueDeadlines(ctx.runtime, ctx.clock.nowMs()),
      applyDueDeadlines(ctx.runtime, ctx.clock.nowMs()),
    ]);
    expect(runs.reduce((sum, run) => sum + run.failed, 0)).toBe(0);
    await applyDueDeadlines(ctx.runtime, ctx.clock.nowMs());
    await applyDueDeadlines(ctx.runtime, ctx.clock.nowMs());
    const expired = await events('access_code.expired');
    expect(expired.map((event) => (event.data as { access_code: AccessCode }).access_code.id).sort()).toEqual(
      [codes[0].id, codes[1].id].sort(),
    );
    for (const event of expired)
      expect(event).toMatchObject({
        project_id: ctx.project.id,
        data: { access_code: { status: 'expired', batch_id: batch.id, expires_at: expiresAt } },
      });
    expect(await ctx.runtime.store.get(deadlineKey)).toBeUndefined();
    const stored = await partitionItems(`ACCESS_CODE#${batch.id}#`);
    expect(stored.map((item) => item.status).sort()).toEqual(['expired', 'expired', 'revoked']);
    expect((await listAll({ status: 'expired' })).map((code) => code.id).sort()).toEqual(
      [codes[0].id, codes[1].id].sort(),
    );
  });

  it('writes no deadline for codes that never expire', async () => {
    const { batch } = await generate({ count: 1 });
    expect(await ctx.runtime.store.get(keys.deadline(ctx.teamId, 'access_code.expire', batch.id))).toBeUndefined();
  });
});
