/**
 * Subscription plans (DESIGN D6, D14, D16, D22): create, read by id alone, list per project (status filter, paging),
 * update (price versions when subscriptions exist), activate, deactivate and delete (only without live subscriptions);
 * sync is in plans-sync.test.ts. Every operation over REST, the four plan tools over the tool server; every event
 * emitted is read from the outbox and checked against its published JSON Schema. Against DynamoDB Local, with an
 * injected clock.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_PLANS_PER_PROJECT } from '../../shared/domain/plans/schema.js';
import { keys } from '../../shared/store/keys.js';
import { domainSnapshot, expectRestProblem, expectToolProblem } from '../support/guarantees.js';
import { tool } from '../support/calls.js';
import { seedToken } from '../support/store.js';

import {
  call,
  clock,
  connectManual,
  createGold,
  gold,
  newEvents,
  projectId,
  runtime,
  setLiveSubscriptions,
  team,
  types,
  usePlansFixture,
} from '../support/fixtures/plans.js';

usePlansFixture();

describe('create, read and list', () => {
  it('creates a plan over REST and the tool, reads it by id alone, and lists a project’s plans by status with paging', async () => {
    const plan = await createGold();
    expect(plan).toEqual({
      id: expect.any(String),
      project_id: projectId,
      name: 'Gold',
      description: 'Everything',
      amount: 900,
      currency: 'EUR',
      interval: 'month',
      interval_count: 1,
      access_days: null,
      trial_days: 0,
      trial_payment_method_required: true,
      allow_promotion_codes: false,
      grace_days: 7,
      status: 'active',
      price_version: 1,
      price_history: [
        {
          version: 1,
          amount: 900,
          currency: 'EUR',
          interval: 'month',
          interval_count: 1,
          access_days: null,
          effective_from: plan.created_at,
        },
      ],
      sync_status: 'not_synced',
      payment_provider: null,
      provider_product_id: null,
      provider_price_id: null,
      synced_at: null,
      sync_error: null,
      created_at: expect.any(String),
      updated_at: plan.created_at,
    });
    const events = await newEvents();
    expect(types(events)).toEqual(['plan.created']);
    expect(events[0]).toMatchObject({ project_id: projectId, data: { plan } });

    clock.advance(1_000);
    const pass = await tool(runtime, team.principal, 'create_plan', {
      project_id: projectId,
      name: 'Day pass',
      amount: 300,
      currency: 'USD',
      interval: 'one_time',
      access_days: 7,
      status: 'inactive',
    });
    expect(pass.isError).toBeFalsy();
    expect(pass.structuredContent).toMatchObject({
      interval: 'one_time',
      access_days: 7,
      interval_count: 1,
      status: 'inactive',
    });
    clock.advance(1_000);
    const yearly = await createGold({ name: 'Yearly', interval: 'year', trial_days: 14 });
    expect(types(await newEvents())).toEqual(['plan.created', 'plan.created']);

    expect((await call('GET', `/v1/plans/${plan.id}`)).json).toEqual(plan);
    expect((await tool(runtime, team.principal, 'get_plan', { id: plan.id })).structuredContent).toEqual(plan);

    const all = await call('GET', `/v1/projects/${projectId}/plans`);
    expect(all.json.data.map((item: { name: string }) => item.name)).toEqual(['Gold', 'Day pass', 'Yearly']);
    const active = await tool(runtime, team.principal, 'list_plans', { project_id: projectId, status: 'active' });
    expect((active.structuredContent.data as { id: string }[]).map((item) => item.id)).toEqual([plan.id, yearly.id]);
    const first = await call('GET', `/v1/projects/${projectId}/plans`, undefined, {
      token: team.token,
      query: { limit: '2' },
    });
    expect(first.json.data).toHaveLength(2);
    const second = await call('GET', `/v1/projects/${projectId}/plans`, undefined, {
      token: team.token,
      query: { limit: '2', cursor: first.json.next_cursor },
    });
    expect(second.json.data.map((item: { name: string }) => item.name)).toEqual(['Yearly']);
    expect(second.json.next_cursor).toBeNull();
    // A cursor of another list (the projects list) is refused.
    await call('POST', '/v1/projects', { name: 'Second', platform_type: 'discord' });
    const otherCursor = (await call('GET', '/v1/projects', undefined, { token: team.token, query: { limit: '1' } }))
      .json.next_cursor;
    expect(otherCursor).toEqual(expect.any(String));
    expectRestProblem(
      await call('GET', `/v1/projects/${projectId}/plans`, undefined, {
        token: team.token,
        query: { cursor: otherCursor },
      }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(await call('GET', `/v1/projects/${randomUUID()}/plans`), 'NOT_FOUND');
  });

  it('refuses inconsistent billing terms and unknown fields, writing nothing', async () => {
    const before = await domainSnapshot(runtime.store);
    const cases: [Record<string, unknown>, string][] = [
      [{ interval: 'one_time' }, 'access_days'],
      [{ access_days: 30 }, 'access_days'],
      [{ interval: 'month', interval_count: 13 }, 'interval_count'],
      [{ interval: 'year', interval_count: 2 }, 'interval_count'],
      [{ interval: 'one_time', access_days: 30, trial_days: 7 }, 'trial_days'],
      [{ currency: 'XYZ' }, 'currency'],
      [{ currency: 'eur' }, 'currency'],
      [{ amount: -1 }, 'amount'],
      [{ amount: 1.5 }, 'amount'],
      [{ interval: 'day' }, 'interval'],
      [{ grace_days: 31 }, 'grace_days'],
      [{ grace_days: -1 }, 'grace_days'],
      [{ grace_days: 2.5 }, 'grace_days'],
      [{ is_active: true }, ''],
    ];
    for (const [overrides, field] of cases) {
      const problem = expectRestProblem(
        await call('POST', `/v1/projects/${projectId}/plans`, { ...gold, ...overrides }),
        'VALIDATION_FAILED',
      );
      expect(
        problem.errors?.some((error) => error.path.includes(field)),
        JSON.stringify(problem.errors),
      ).toBe(true);
    }
    expectToolProblem(
      await tool(runtime, team.principal, 'create_plan', { project_id: projectId, ...gold, interval: 'one_time' }),
      'VALIDATION_FAILED',
    );
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });

  it('replays a retried creation with the same Idempotency-Key: one plan, one event', async () => {
    const key = randomUUID();
    const first = await call('POST', `/v1/projects/${projectId}/plans`, gold, {
      token: team.token,
      headers: { 'Idempotency-Key': key },
    });
    const again = await call('POST', `/v1/projects/${projectId}/plans`, gold, {
      token: team.token,
      headers: { 'Idempotency-Key': key },
    });
    expect(again.headers['idempotent-replay']).toBe('true');
    expect(again.json).toEqual(first.json);
    expect((await call('GET', `/v1/projects/${projectId}/plans`)).json.data).toHaveLength(1);
    expect(types(await newEvents())).toEqual(['plan.created']);
  });

  it('shows a project-scoped token only the plans of its projects, by id and by list', async () => {
    const plan = await createGold();
    const otherProject = (await call('POST', '/v1/projects', { name: 'Other', platform_type: 'discord' })).json.id;
    const otherPlan = (await call('POST', `/v1/projects/${otherProject}/plans`, gold)).json;
    const scoped = await seedToken(runtime.store, clock, { teamId: team.team.id, projectIds: [projectId] });
    expect((await call('GET', `/v1/plans/${plan.id}`, undefined, { token: scoped.token })).status).toBe(200);
    expectRestProblem(await call('GET', `/v1/plans/${otherPlan.id}`, undefined, { token: scoped.token }), 'NOT_FOUND');
    expectRestProblem(
      await call('GET', `/v1/projects/${otherProject}/plans`, undefined, { token: scoped.token }),
      'NOT_FOUND',
    );
    expectRestProblem(
      await call('POST', `/v1/plans/${otherPlan.id}`, { name: 'Mine now' }, { token: scoped.token }),
      'NOT_FOUND',
    );
    expectToolProblem(await tool(runtime, scoped.principal, 'get_plan', { id: otherPlan.id }), 'NOT_FOUND');
  });

  it('holds at most 40 plans per project, and deleting the project deletes them all in one transaction', async () => {
    for (let index = 0; index < MAX_PLANS_PER_PROJECT; index++) await createGold({ name: `Plan ${index}` });
    expectRestProblem(await call('POST', `/v1/projects/${projectId}/plans`, gold), 'CONFLICT');
    expect((await call('DELETE', `/v1/projects/${projectId}`)).json).toEqual({ id: projectId, deleted: true });
    const left = (
      await runtime.store.query({
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: {
          ':pk': keys.teamPartition(team.team.id),
          ':prefix': keys.plan(team.team.id, '').sk,
        },
      })
    ).items;
    expect(left).toEqual([]);
  });
});

describe('update, activate, deactivate', () => {
  it('edits the price in place without subscriptions and adds a price version with them', async () => {
    const plan = await createGold();
    await newEvents();
    clock.advance(60_000);
    const edited = await call('POST', `/v1/plans/${plan.id}`, { amount: 1_000, name: 'Gold+' });
    expect(edited.json).toMatchObject({
      amount: 1_000,
      name: 'Gold+',
      price_version: 1,
      price_history: [{ version: 1, amount: 1_000 }],
    });
    expect(edited.json.price_history).toHaveLength(1);
    let events = await newEvents();
    expect(types(events)).toEqual(['plan.updated']);
    expect(events[0].data.plan).toEqual(edited.json);

    await setLiveSubscriptions(plan.id, 3);
    clock.advance(60_000);
    const repriced = await tool(runtime, team.principal, 'update_plan', {
      id: plan.id,
      amount: 1_200,
      interval: 'year',
    });
    expect(repriced.structuredContent).toMatchObject({
      amount: 1_200,
      interval: 'year',
      interval_count: 1,
      price_version: 2,
    });
    expect(
      (repriced.structuredContent.price_history as { version: number; amount: number; interval: string }[]).map(
        (entry) => [entry.version, entry.amount, entry.interval],
      ),
    ).toEqual([
      [1, 1_000, 'month'],
      [2, 1_200, 'year'],
    ]);
    expect(types(await newEvents())).toEqual(['plan.updated']);

    // Non-price changes keep the version; to one_time needs access_days and drops the trial and its card choice.
    await call('POST', `/v1/plans/${plan.id}`, { trial_days: 7, trial_payment_method_required: false });
    expectRestProblem(await call('POST', `/v1/plans/${plan.id}`, { interval: 'one_time' }), 'VALIDATION_FAILED');
    const pass = await call('POST', `/v1/plans/${plan.id}`, { interval: 'one_time', access_days: 30 });
    expect(pass.json).toMatchObject({ interval: 'one_time', access_days: 30, trial_days: 0, price_version: 3 });
    expect(pass.json.trial_payment_method_required).toBe(true);
    events = await newEvents();
    expect(types(events)).toEqual(['plan.updated', 'plan.updated']);

    const before = await domainSnapshot(runtime.store);
    await call('POST', `/v1/plans/${plan.id}`, { amount: 1_200 });
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    expectRestProblem(await call('POST', `/v1/plans/${plan.id}`, { price_version: 9 }), 'VALIDATION_FAILED');
    expectRestProblem(await call('POST', `/v1/plans/${randomUUID()}`, { name: 'Ghost' }), 'NOT_FOUND');
  });

  it('sets the grace period (0 to 30 days, default 7) on create and update, without a price version; a plan stored without one reads as 7', async () => {
    const plan = await createGold({ grace_days: 0 });
    expect(plan.grace_days).toBe(0);
    await setLiveSubscriptions(plan.id, 2);
    await newEvents();
    clock.advance(60_000);
    const longer = await call('POST', `/v1/plans/${plan.id}`, { grace_days: 30 });
    expect(longer.status, longer.text).toBe(200);
    expect(longer.json).toMatchObject({ grace_days: 30, price_version: 1, sync_status: 'not_synced' });
    expect(longer.json.price_history).toHaveLength(1);
    const events = await newEvents();
    expect(types(events)).toEqual(['plan.updated']);
    expect(events[0].data.plan).toEqual(longer.json);
    const viaTool = await tool(runtime, team.principal, 'update_plan', { id: plan.id, grace_days: 3 });
    expect(viaTool.structuredContent).toMatchObject({ grace_days: 3, price_version: 1 });
    expect(types(await newEvents())).toEqual(['plan.updated']);

    const before = await domainSnapshot(runtime.store);
    expect((await call('POST', `/v1/plans/${plan.id}`, { grace_days: 3 })).json.grace_days).toBe(3);
    const tooLong = expectRestProblem(
      await call('POST', `/v1/plans/${plan.id}`, { grace_days: 31 }),
      'VALIDATION_FAILED',
    );
    expect(tooLong.errors?.some((error) => error.path.includes('grace_days'))).toBe(true);
    expectToolProblem(
      await tool(runtime, team.principal, 'update_plan', { id: plan.id, grace_days: 31 }),
      'VALIDATION_FAILED',
    );
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    expect(await newEvents()).toEqual([]);

    await runtime.store.update({ Key: keys.plan(team.team.id, plan.id), UpdateExpression: 'REMOVE grace_days' });
    expect((await call('GET', `/v1/plans/${plan.id}`)).json.grace_days).toBe(7);
  });

  it('activates and deactivates through their routes and through update_plan, refusing repeats', async () => {
    const plan = await createGold();
    await newEvents();
    const off = await call('POST', `/v1/plans/${plan.id}/deactivate`);
    expect(off.json.status).toBe('inactive');
    expectRestProblem(await call('POST', `/v1/plans/${plan.id}/deactivate`), 'CONFLICT');
    const on = await call('POST', `/v1/plans/${plan.id}/activate`);
    expect(on.json.status).toBe('active');
    expectRestProblem(await call('POST', `/v1/plans/${plan.id}/activate`), 'CONFLICT');
    const both = await tool(runtime, team.principal, 'update_plan', {
      id: plan.id,
      status: 'inactive',
      description: null,
    });
    expect(both.structuredContent).toMatchObject({ status: 'inactive', description: null });
    expect(types(await newEvents())).toEqual([
      'plan.deactivated',
      'plan.activated',
      'plan.updated',
      'plan.deactivated',
    ]);
    const listed = await call('GET', `/v1/projects/${projectId}/plans`, undefined, {
      token: team.token,
      query: { status: 'inactive' },
    });
    expect(listed.json.data.map((item: { id: string }) => item.id)).toEqual([plan.id]);
  });

  it('in an archived project, refuses activation and sync but allows deactivation', async () => {
    const plan = await createGold({ status: 'inactive' });
    const active = await createGold({ name: 'Active' });
    await connectManual();
    await call('POST', `/v1/projects/${projectId}/archive`);
    await newEvents();
    expect(expectRestProblem(await call('POST', `/v1/plans/${plan.id}/activate`), 'CONFLICT').detail).toContain(
      'archived',
    );
    expectRestProblem(await call('POST', `/v1/plans/${plan.id}`, { status: 'active' }), 'CONFLICT');
    expectRestProblem(await call('POST', `/v1/plans/${plan.id}/sync`), 'CONFLICT');
    expect((await call('POST', `/v1/plans/${active.id}/deactivate`)).json.status).toBe('inactive');
    expect(types(await newEvents())).toEqual(['plan.deactivated']);
  });
});

describe('delete', () => {
  it('deletes a plan only without live subscriptions', async () => {
    const plan = await createGold();
    await setLiveSubscriptions(plan.id, 1);
    const before = await domainSnapshot(runtime.store);
    expect(expectRestProblem(await call('DELETE', `/v1/plans/${plan.id}`), 'CONFLICT').detail).toContain(
      'live subscription',
    );
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    await setLiveSubscriptions(plan.id, 0);
    expect((await call('DELETE', `/v1/plans/${plan.id}`)).json).toEqual({ id: plan.id, deleted: true });
    expectRestProblem(await call('GET', `/v1/plans/${plan.id}`), 'NOT_FOUND');
    expectRestProblem(await call('DELETE', `/v1/plans/${plan.id}`), 'NOT_FOUND');
    expect((await call('GET', `/v1/projects/${projectId}/plans`)).json.data).toEqual([]);
    // The project no longer counts it: it can be deleted with nothing left behind.
    expect((await call('DELETE', `/v1/projects/${projectId}`)).status).toBe(200);
  });
});
