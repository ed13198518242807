/**
 * The creator's own billing (DESIGN D20) against DynamoDB Local with an injected clock:
 * tiers, limits and usage (`GET /v1/billing`), tier changes (`POST /v1/billing/tier`), invoices issued by
 * the `billing.period` deadline at each period start (applied once however often the worker runs),
 * TIER_LIMIT_REACHED (402) for every limited create with one `billing.usage_limit_reached` per limit
 * and period, the 7-day grace period and the lockdown by the clock — BILLING_LOCKED (402) for creator
 * writes over REST and MCP, while reads, billing and the subscriber side (clock transitions, webhook
 * fan-out) keep running — lifted by paying; the operator CLI's billing commands through the CLI entry;
 * 402 in the OpenAPI document. Every event is read from the outbox and checked against its published
 * schema (`teamEvents`), with `project_id` null.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { DAY_MS, isoTime } from '../../shared/clock.js';
import { periodContaining } from '../../shared/domain/billing/account.js';
import { changeTier } from '../../shared/domain/billing/changes.js';
import { TIER_LIMITS, TIER_PRICES } from '../../shared/domain/billing/schema.js';
import { BUILT_IN_ROLE_IDS } from '../../shared/domain/roles/built-in.js';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { ensureTeamOwner } from '../../shared/domain/team-members/changes.js';
import { expectRestProblem, expectToolProblem, scanTable } from '../support/guarantees.js';
import { tool } from '../support/calls.js';
import { seedToken } from '../support/store.js';
import {
  call,
  clock,
  createProject,
  invoices,
  newEvents,
  ok,
  runtime,
  team,
  tick,
  types,
  useBillingFixture,
} from '../support/fixtures/billing.js';

useBillingFixture();

const createEndpoint = () =>
  call('POST', '/v1/webhook-endpoints', {
    name: 'hook',
    url: 'https://receiver.example/hook',
    events: ['project.created'],
  });

const invite = (index: number) =>
  call('POST', '/v1/team-members/invitations', {
    email: `m${index}-${randomUUID().slice(0, 6)}@example.com`,
    name: `Member ${index}`,
    role_ids: [BUILT_IN_ROLE_IDS.viewer],
  });

describe('tier, limits and usage', () => {
  it('shows a new team on free with its limits, no usage, status ok and the month from its creation', async () => {
    const billing = await ok(call('GET', '/v1/billing'));
    const created = Date.parse(team.team.created_at);
    expect(billing).toEqual({
      team_id: team.team.id,
      tier: 'free',
      status: 'ok',
      limits: TIER_LIMITS.free,
      current_period_start: team.team.created_at,
      current_period_end: isoTime(periodContaining(created, created).endMs),
      grace_period_ends_at: null,
      locked_at: null,
      usage: { projects: 0, subscribers: 0, webhook_endpoints: 0, team_members: 0 },
    });
    expect(Date.parse(billing.current_period_end) - created).toBeGreaterThanOrEqual(28 * DAY_MS);
    expect(await invoices()).toEqual([]);
    expect(await newEvents()).toEqual([]);
  });

  it('counts projects, subscribers, webhook endpoints and team members as they are created and deleted', async () => {
    const project = await ok(createProject(), 201);
    await ok(createProject(), 201);
    const endpoint = await ok(createEndpoint(), 201);
    await ok(call('POST', `/v1/projects/${project.id}/subscribers`, { display_name: 'Ada' }), 201);
    const member = await ok(invite(1), 201);
    expect((await ok(call('GET', '/v1/billing'))).usage).toEqual({
      projects: 2,
      subscribers: 1,
      webhook_endpoints: 1,
      team_members: 1,
    });
    const other = (await ok(call('GET', '/v1/projects'))).data.find(
      (candidate: { id: string }) => candidate.id !== project.id,
    );
    await ok(call('DELETE', `/v1/projects/${other.id}`));
    await ok(call('DELETE', `/v1/webhook-endpoints/${endpoint.id}`));
    await ok(call('DELETE', `/v1/team-members/${member.id}`));
    expect((await ok(call('GET', '/v1/billing'))).usage).toEqual({
      projects: 1,
      subscribers: 1,
      webhook_endpoints: 0,
      team_members: 0,
    });
  });

  it('counts the owner like every active member, as GET /v1/team-members lists them', async () => {
    await ensureTeamOwner(runtime, team.team.id, { email: `owner-${randomUUID()}@example.com`, name: 'Owner' });
    await ok(invite(1), 201);
    const members = (await ok(call('GET', '/v1/team-members'))).data;
    expect(members).toHaveLength(2);
    expect((await ok(call('GET', '/v1/billing'))).usage.team_members).toBe(members.length);
  });

  it('needs billing:view, billing-invoice:view(-any) and billing:update, team-wide', async () => {
    const weak = await seedToken(runtime.store, clock, { teamId: team.team.id, abilities: ['team:view'] });
    expectRestProblem(await call('GET', '/v1/billing', undefined, { token: weak.token }), 'TOKEN_MISSING_ABILITY');
    expectRestProblem(
      await call('GET', '/v1/billing/invoices', undefined, { token: weak.token }),
      'TOKEN_MISSING_ABILITY',
    );
    expectRestProblem(
      await call('GET', `/v1/billing/invoices/${randomUUID()}`, undefined, { token: weak.token }),
      'TOKEN_MISSING_ABILITY',
    );
    expectRestProblem(
      await call('POST', '/v1/billing/tier', { tier: 'pro' }, { token: weak.token }),
      'TOKEN_MISSING_ABILITY',
    );
    const viewer = await seedToken(runtime.store, clock, { teamId: team.team.id, abilities: ['billing:view'] });
    expect((await call('GET', '/v1/billing', undefined, { token: viewer.token })).status).toBe(200);
    expectRestProblem(
      await call('POST', '/v1/billing/tier', { tier: 'pro' }, { token: viewer.token }),
      'TOKEN_MISSING_ABILITY',
    );
    const project = await ok(createProject(), 201);
    const scoped = await seedToken(runtime.store, clock, { teamId: team.team.id, projectIds: [project.id] });
    expectRestProblem(await call('GET', '/v1/billing', undefined, { token: scoped.token }), 'TOKEN_MISSING_ABILITY');
    expectRestProblem(
      await call('POST', '/v1/billing/tier', { tier: 'pro' }, { token: scoped.token }),
      'TOKEN_MISSING_ABILITY',
    );
    expectRestProblem(await call('POST', '/v1/billing/tier', { tier: 'platinum' }), 'VALIDATION_FAILED');
    expectRestProblem(await call('GET', `/v1/billing/invoices/${randomUUID()}`), 'NOT_FOUND');
    expect((await ok(call('GET', '/v1/billing'))).tier).toBe('free');
  });
});

describe('tier changes and invoices', () => {
  it('moving from free to pro starts a monthly period with its invoice at once; the same tier again changes nothing', async () => {
    const account = await ok(call('POST', '/v1/billing/tier', { tier: 'pro' }));
    const now = clock.nowMs();
    const periodEnd = periodContaining(now, now).endMs;
    expect(account).toEqual({
      team_id: team.team.id,
      tier: 'pro',
      status: 'ok',
      limits: TIER_LIMITS.pro,
      current_period_start: isoTime(now),
      current_period_end: isoTime(periodEnd),
      grace_period_ends_at: null,
      locked_at: null,
    });
    const events = await newEvents();
    expect(types(events)).toEqual(['billing.tier_changed', 'billing.invoice_created']);
    expect(events[0].data).toEqual({ billing_account: account, previous_tier: 'free' });
    const [invoice] = await invoices();
    expect(invoice).toEqual({
      id: expect.any(String),
      team_id: team.team.id,
      number: `INV-${team.team.id.slice(0, 8).toUpperCase()}-0001`,
      tier: 'pro',
      status: 'open',
      amount_due: TIER_PRICES.pro,
      amount_paid: 0,
      currency: 'USD',
      period_start: isoTime(now),
      period_end: isoTime(periodEnd),
      due_at: isoTime(now),
      attempt_count: 0,
      last_payment_error: null,
      paid_at: null,
      created_at: isoTime(now),
      updated_at: isoTime(now),
    });
    expect(events[1].data).toEqual({ billing_account: account, invoice });
    expect(await ok(call('GET', `/v1/billing/invoices/${invoice.id}`))).toEqual(invoice);
    const withStatus = (status: string) => ok(call('GET', '/v1/billing/invoices', undefined, { query: { status } }));
    expect(await withStatus('open')).toEqual({ data: [invoice], next_cursor: null });
    expect(await withStatus('paid')).toEqual({ data: [], next_cursor: null });

    expect(await ok(call('POST', '/v1/billing/tier', { tier: 'pro' }))).toEqual(account);
    expect(await newEvents()).toEqual([]);
    const business = await ok(call('POST', '/v1/billing/tier', { tier: 'business' }));
    expect(business).toMatchObject({
      tier: 'business',
      limits: TIER_LIMITS.business,
      current_period_start: isoTime(now),
    });
    expect(types(await newEvents())).toEqual(['billing.tier_changed']);
    expect(await invoices()).toHaveLength(1);
  });

  it('issues the next invoice at each period start by the clock, once however often the worker runs, at the tier of that moment', async () => {
    await changeTier(runtime, team.team.id, 'pro');
    const first = (await invoices())[0];
    clock.advance(DAY_MS);
    // Between paid tiers: same period, next invoice at the new price
    await changeTier(runtime, team.team.id, 'business');
    await newEvents();
    clock.set(Date.parse(first.period_end) + 60_000);
    const runs = await Promise.all([tick(), tick()]); // two workers at once: one invoice
    expect(runs.every((run) => run.failed === 0)).toBe(true);
    expect(await tick()).toEqual({ applied: 0, failed: 0 });
    const events = await newEvents();
    expect(types(events)).toEqual(['billing.invoice_created']);
    const listed = await invoices();
    expect(listed.map((invoice) => invoice.number)).toEqual([
      `INV-${team.team.id.slice(0, 8).toUpperCase()}-0002`,
      first.number,
    ]); // newest first
    expect(listed[0]).toMatchObject({
      tier: 'business',
      amount_due: TIER_PRICES.business,
      period_start: first.period_end,
      status: 'open',
    });
    expect(Date.parse(listed[0].period_end)).toBe(
      periodContaining(Date.parse(first.period_start), Date.parse(first.period_end)).endMs,
    );
    expect(
      (await ok(call('GET', '/v1/billing/invoices', undefined, { query: { status: 'open', limit: '1' } }))).data,
    ).toHaveLength(1);

    // Back on free: the next period start issues nothing and the clock stops.
    await changeTier(runtime, team.team.id, 'free');
    await newEvents();
    clock.set(Date.parse(listed[0].period_end) + 60_000);
    expect(await tick()).toEqual({ applied: 1, failed: 0 });
    expect(await newEvents()).toEqual([]);
    expect(await invoices()).toHaveLength(2);
    expect((await scanTable(runtime.store)).filter((item) => item.entity === 'deadline')).toEqual([]);
  });

  it('gives a free team no invoice and no clock at all', async () => {
    clock.advance(40 * DAY_MS);
    expect(await tick()).toEqual({ applied: 0, failed: 0 });
    expect(await invoices()).toEqual([]);
    const billing = await ok(call('GET', '/v1/billing'));
    expect(Date.parse(billing.current_period_start)).toBeGreaterThan(Date.parse(team.team.created_at));
    expect(Date.parse(billing.current_period_start)).toBeLessThanOrEqual(clock.nowMs());
    expect(Date.parse(billing.current_period_end)).toBeGreaterThan(clock.nowMs());
  });
});

describe('tier limits', () => {
  it('admits exactly the free tier’s 3 of 10 concurrent projects, answers 402 on REST and MCP, and notices once per period', async () => {
    const replies = await Promise.all(Array.from({ length: 10 }, () => createProject()));
    expect(replies.filter((reply) => reply.status === 201)).toHaveLength(TIER_LIMITS.free.projects);
    for (const refused of replies.filter((reply) => reply.status !== 201)) {
      const problem = expectRestProblem(refused, 'TIER_LIMIT_REACHED');
      expect(refused.status).toBe(402);
      expect(problem.detail).toContain('free tier allows 3 projects');
    }
    expectToolProblem(
      await tool(runtime, team.principal, 'create_project', { name: 'by tool', platform_type: 'telegram' }),
      'TIER_LIMIT_REACHED',
    );
    const events = (await newEvents()).filter((event) => event.type.startsWith('billing.'));
    expect(types(events)).toEqual(['billing.usage_limit_reached']);
    expect(events[0].data).toMatchObject({ billing_account: { tier: 'free' }, metric: 'projects', usage: 3, limit: 3 });
    expect((await ok(call('GET', '/v1/billing'))).usage.projects).toBe(3);

    // The next period notices again (once), and a higher tier lifts the limit.
    const billing = await ok(call('GET', '/v1/billing'));
    clock.set(Date.parse(billing.current_period_end) + 1_000);
    expectRestProblem(await createProject(), 'TIER_LIMIT_REACHED');
    expectRestProblem(await createProject(), 'TIER_LIMIT_REACHED');
    expect(types((await newEvents()).filter((event) => event.type.startsWith('billing.')))).toEqual([
      'billing.usage_limit_reached',
    ]);
    await changeTier(runtime, team.team.id, 'pro');
    expect((await createProject()).status).toBe(201);
  });

  it('limits webhook endpoints and team members, each with its own notice', async () => {
    for (let index = 0; index < TIER_LIMITS.free.webhook_endpoints; index++) await ok(createEndpoint(), 201);
    const refused = await createEndpoint();
    expectRestProblem(refused, 'TIER_LIMIT_REACHED');
    expect(refused.json.detail).toContain('webhook endpoints');
    for (let index = 0; index < TIER_LIMITS.free.team_members; index++) await ok(invite(index), 201);
    expectRestProblem(await invite(99), 'TIER_LIMIT_REACHED');
    expectRestProblem(await invite(100), 'TIER_LIMIT_REACHED');
    const notices = (await newEvents()).filter((event) => event.type === 'billing.usage_limit_reached');
    expect(notices.map((event) => (event.data as { metric: string }).metric)).toEqual([
      'webhook_endpoints',
      'team_members',
    ]);
    expect((await ok(call('GET', '/v1/billing'))).usage).toMatchObject({ webhook_endpoints: 3, team_members: 3 });
  });

  it('limits subscribers across the team’s projects', async () => {
    const projects = [await ok(createProject(), 201), await ok(createProject(), 201)];
    await Promise.all(
      Array.from({ length: TIER_LIMITS.free.subscribers }, (_, index) =>
        createSubscriber(runtime, team.principal, projects[index % 2].id, {
          display_name: `s${index}`,
          consent: false,
        }),
      ),
    );
    const refused = await call('POST', `/v1/projects/${projects[1].id}/subscribers`, { display_name: 'one too many' });
    expectRestProblem(refused, 'TIER_LIMIT_REACHED');
    const notice = (await newEvents()).find((event) => event.type === 'billing.usage_limit_reached');
    expect(notice?.data).toMatchObject({ metric: 'subscribers', usage: 100, limit: 100 });
    expect((await ok(call('GET', '/v1/billing'))).usage.subscribers).toBe(100);
  });
});
