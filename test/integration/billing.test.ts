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
import { beforeEach, describe, expect, it } from 'vitest';
import { isoTime, type ManualClock } from '../../shared/clock.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { periodContaining } from '../../shared/domain/billing/account.js';
import { changeTier, markInvoicePaid, markInvoicePaymentFailed } from '../../shared/domain/billing/changes.js';
import { GRACE_PERIOD_MS, TIER_LIMITS, TIER_PRICES, type BillingInvoice } from '../../shared/domain/billing/schema.js';
import { BUILT_IN_ROLE_IDS } from '../../shared/domain/roles/built-in.js';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { relayOutbox } from '../../shared/domain/webhook-deliveries/sweeper.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { openApiDocument } from '../../shared/http/openapi.js';
import { OPERATIONS } from '../../shared/operations/registry.js';
import { keys } from '../../shared/store/keys.js';
import { lockTeam } from '../support/billing.js';
import { teamEvents } from '../support/events.js';
import { domainLines, expectRestProblem, expectToolProblem, scanTable } from '../support/guarantees.js';
import { rest, tool, type RestReply } from '../support/calls.js';
import { runCli } from '../support/local-process.js';
import { createTestRuntime, seedTeam, seedToken, testClock, type TestRuntime } from '../support/store.js';

const DAY = 86_400_000;
let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let seen: number;

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  team = await seedTeam(runtime.store, clock, undefined, 'free');
  seen = (await teamEvents(runtime.store, team.team.id)).length;
});

/** The team's events since the last call (each checked against its published schema; billing ones team-scoped). */
async function newEvents(): Promise<EventEnvelope[]> {
  const events = await teamEvents(runtime.store, team.team.id);
  const fresh = events.slice(seen);
  seen = events.length;
  for (const event of fresh) if (event.type.startsWith('billing.')) expect(event.project_id, event.type).toBeNull();
  return fresh;
}
const types = (events: EventEnvelope[]) => events.map((event) => event.type);

const call = (
  method: string,
  path: string,
  body?: unknown,
  options: { token?: string; query?: Record<string, string> } = {},
) => rest(runtime, { method, path, token: options.token ?? team.token, body, query: options.query });
async function ok(reply: Promise<RestReply>, status = 200) {
  const answered = await reply;
  expect(answered.status, answered.text).toBe(status);
  return answered.json;
}
const createProject = (name = `p-${randomUUID().slice(0, 6)}`) =>
  call('POST', '/v1/projects', { name, platform_type: 'discord' });
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
/** Runs the deadline worker at the clock's now. */
const tick = () => applyDueDeadlines(runtime, clock.nowMs());
const invoices = async (): Promise<BillingInvoice[]> => (await ok(call('GET', '/v1/billing/invoices'))).data;

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
    expect(Date.parse(billing.current_period_end) - created).toBeGreaterThanOrEqual(28 * DAY);
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
    clock.advance(DAY);
    await changeTier(runtime, team.team.id, 'business'); // between paid tiers: same period, next invoice at the new price
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
    clock.advance(40 * DAY);
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

describe('grace period and lockdown', () => {
  async function paidTeamWithFailedInvoice() {
    await changeTier(runtime, team.team.id, 'pro');
    const [invoice] = await invoices();
    const failed = await markInvoicePaymentFailed(runtime, team.team.id, invoice.id, 'card_declined');
    return { invoice, failed };
  }

  it('a failed payment starts a 7-day grace period with full access; paying in time recovers', async () => {
    const { invoice, failed } = await paidTeamWithFailedInvoice();
    const graceEnd = isoTime(clock.nowMs() + GRACE_PERIOD_MS);
    expect(failed.billing_account).toMatchObject({ status: 'grace_period', grace_period_ends_at: graceEnd });
    expect(failed.invoice).toMatchObject({ status: 'open', attempt_count: 1, last_payment_error: 'card_declined' });
    const events = await newEvents();
    expect(types(events)).toEqual([
      'billing.tier_changed',
      'billing.invoice_created',
      'billing.payment_failed',
      'billing.grace_period_started',
    ]);
    expect(events[2].data).toMatchObject({
      invoice: { id: invoice.id, attempt_count: 1 },
      attempt_count: 1,
      next_attempt_at: null,
    });
    expect(events[3].data).toMatchObject({ grace_period_ends_at: graceEnd });
    await markInvoicePaymentFailed(runtime, team.team.id, invoice.id, 'insufficient_funds'); // a retry fails too: the same grace period
    expect(types(await newEvents())).toEqual(['billing.payment_failed']);
    expect((await createProject()).status).toBe(201); // still working
    expect(types(await newEvents())).toEqual(['project.created']);

    const paid = await markInvoicePaid(runtime, team.team.id, invoice.id);
    expect(paid.billing_account).toMatchObject({ status: 'ok', grace_period_ends_at: null });
    expect(paid.invoice).toMatchObject({
      status: 'paid',
      amount_paid: TIER_PRICES.pro,
      paid_at: isoTime(clock.nowMs()),
    });
    const settled = await newEvents();
    expect(types(settled)).toEqual(['billing.invoice_paid', 'billing.grace_period_ended']);
    expect(settled[1].data).toMatchObject({ outcome: 'recovered', billing_account: { status: 'ok' } });
    clock.advance(GRACE_PERIOD_MS + 60_000);
    expect(await tick()).toEqual({ applied: 0, failed: 0 }); // the grace deadline went with the payment
    expect((await ok(call('GET', '/v1/billing'))).status).toBe('ok');
    await expect(markInvoicePaid(runtime, team.team.id, invoice.id)).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('locks the team at the grace period’s end: creator writes get 402 on REST and MCP, reads, billing and the subscriber side keep running, paying lifts it', async () => {
    // Before the lock: a project, a subscription renewing by the clock, an endpoint for its renewals.
    const project = await ok(createProject(), 201);
    const plan = await ok(
      call('POST', `/v1/projects/${project.id}/plans`, {
        name: 'Gold',
        amount: 900,
        currency: 'EUR',
        interval: 'month',
      }),
      201,
    );
    const subscriber = await ok(call('POST', `/v1/projects/${project.id}/subscribers`, { display_name: 'Ada' }), 201);
    const subscription = await ok(
      call('POST', `/v1/projects/${project.id}/subscriptions`, { subscriber_id: subscriber.id, plan_id: plan.id }),
      201,
    );
    const endpoint = await ok(
      call('POST', '/v1/webhook-endpoints', {
        name: 'renewals',
        url: 'https://receiver.example/hook',
        events: ['subscription.renewed'],
      }),
      201,
    );
    const { invoice } = await paidTeamWithFailedInvoice();
    await newEvents();

    clock.advance(GRACE_PERIOD_MS + 60_000);
    await tick();
    const locked = (await newEvents()).filter((event) => event.type.startsWith('billing.'));
    expect(types(locked)).toEqual(['billing.grace_period_ended', 'billing.lockdown_started']);
    expect(locked[0].data).toMatchObject({
      outcome: 'locked',
      billing_account: { status: 'locked', locked_at: isoTime(clock.nowMs()) },
    });
    expect((locked[1].data as { reason: string }).reason).toContain('unpaid');

    // Creator writes: transactional ones, single-item ones and token minting, on both surfaces, write nothing.
    const before = await scanTable(runtime.store);
    const lockedWrites: RestReply[] = [
      await createProject(),
      await call('POST', `/v1/projects/${project.id}`, { name: 'Renamed' }),
      await call('POST', `/v1/webhook-endpoints/${endpoint.id}`, { name: 'renamed' }),
      await call('POST', '/v1/tokens', { abilities: ['team:view'] }),
      await call('POST', `/v1/subscriptions/${subscription.id}/pause`),
    ];
    for (const reply of lockedWrites) {
      expectRestProblem(reply, 'BILLING_LOCKED');
      expect(reply.status).toBe(402);
    }
    expectToolProblem(
      await tool(runtime, team.principal, 'create_project', { name: 'by tool', platform_type: 'telegram' }),
      'BILLING_LOCKED',
    );
    expectToolProblem(
      await tool(runtime, team.principal, 'pause_subscription', { id: subscription.id }),
      'BILLING_LOCKED',
    );
    expect(domainLines(await scanTable(runtime.store))).toEqual(domainLines(before));
    const activity = await ok(call('GET', '/v1/activity', undefined, { query: { limit: '10' } }));
    expect(
      activity.data.filter((entry: { outcome: string }) => entry.outcome === 'BILLING_LOCKED').length,
    ).toBeGreaterThanOrEqual(lockedWrites.length);

    // Reads, billing itself.
    expect((await ok(call('GET', '/v1/projects'))).data).toHaveLength(1);
    expect((await tool(runtime, team.principal, 'list_projects', {})).isError).toBeFalsy();
    expect((await ok(call('GET', '/v1/billing'))).status).toBe('locked');
    expect((await ok(call('GET', `/v1/billing/invoices/${invoice.id}`))).status).toBe('open');
    expect((await ok(call('POST', '/v1/billing/tier', { tier: 'business' }))).status).toBe('locked');

    // The subscriber side: the clock renews the subscription and its event is fanned out to the endpoint.
    clock.set(Date.parse(subscription.current_period_end) + 60_000);
    runtime.drain();
    await tick();
    expect((await ok(call('GET', `/v1/subscriptions/${subscription.id}`))).current_period_start).toBe(
      subscription.current_period_end,
    );
    expect(types(await newEvents())).toContain('subscription.renewed');
    await relayOutbox(runtime, clock.nowMs());
    expect(runtime.drain().queued.length).toBeGreaterThan(0);

    // Paying lifts the lock.
    await markInvoicePaid(runtime, team.team.id, invoice.id);
    const lifted = await newEvents();
    expect(types(lifted)).toEqual(['billing.invoice_paid', 'billing.lockdown_lifted']);
    expect(lifted[1].data).toMatchObject({ billing_account: { status: 'ok', locked_at: null } });
    expect((await createProject()).status).toBe(201);
    expect(
      (await tool(runtime, team.principal, 'create_project', { name: 'by tool', platform_type: 'telegram' })).isError,
    ).toBeFalsy();
  });

  it('another team is not locked with this one', async () => {
    const other = await seedTeam(runtime.store, clock, undefined, 'free');
    await lockTeam(runtime, team.team.id);
    expectRestProblem(await createProject(), 'BILLING_LOCKED');
    expect(
      (
        await rest(runtime, {
          method: 'POST',
          path: '/v1/projects',
          token: other.token,
          body: { name: 'free to go', platform_type: 'discord' },
        })
      ).status,
    ).toBe(201);
  });
});

describe('the operator CLI', () => {
  it('sets the tier, records a failed and a paid invoice through the CLI entry, and refuses bad input', async () => {
    const env = {
      ...process.env,
      DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
      TABLE_NAME: runtime.store.tableName,
      DEAD_LETTER_TABLE_NAME: runtime.store.deadLetterTableName,
    };
    const tier = await runCli(['billing', 'set-tier', '--team', team.team.id, '--tier', 'pro'], env);
    expect(tier.code, tier.stderr).toBe(0);
    expect(JSON.parse(tier.stdout)).toMatchObject({ team_id: team.team.id, tier: 'pro', status: 'ok' });
    const [invoice] = await invoices();

    const failed = await runCli(
      ['billing', 'invoice-failed', '--team', team.team.id, '--invoice', invoice.id, '--reason', 'card_declined'],
      env,
    );
    expect(failed.code, failed.stderr).toBe(0);
    expect(JSON.parse(failed.stdout)).toMatchObject({
      billing_account: { status: 'grace_period' },
      invoice: { id: invoice.id, attempt_count: 1, last_payment_error: 'card_declined' },
    });

    const paid = await runCli(['billing', 'invoice-paid', '--team', team.team.id, '--invoice', invoice.id], env);
    expect(paid.code, paid.stderr).toBe(0);
    expect(JSON.parse(paid.stdout)).toMatchObject({ billing_account: { status: 'ok' }, invoice: { status: 'paid' } });
    // The CLI process stamps its events with the real time (ULIDs), so compare them as a set.
    const all = types(await teamEvents(runtime.store, team.team.id)).filter((type) => type.startsWith('billing.'));
    expect(all.sort()).toEqual([
      'billing.grace_period_ended',
      'billing.grace_period_started',
      'billing.invoice_created',
      'billing.invoice_paid',
      'billing.payment_failed',
      'billing.tier_changed',
    ]);

    const again = await runCli(['billing', 'invoice-paid', '--team', team.team.id, '--invoice', invoice.id], env);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr)).toMatchObject({ code: 'CONFLICT' });
    const badTier = await runCli(['billing', 'set-tier', '--team', team.team.id, '--tier', 'platinum'], env);
    expect(badTier.code).toBe(1);
    expect(JSON.parse(badTier.stderr)).toMatchObject({ code: 'VALIDATION_FAILED' });
    const unknown = await runCli(['billing', 'invoice-failed', '--team', team.team.id, '--invoice', randomUUID()], env);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ code: 'NOT_FOUND' });
    expect(tier.stdout + failed.stdout + paid.stdout).not.toContain(keys.billingAccount(team.team.id).sk + '"'); // answers are the public shapes
  }, 120_000);
});

describe('the OpenAPI document', () => {
  it('lists 402 on every locked write and every limited create, and not on billing or reads', () => {
    const document = openApiDocument() as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
    };
    for (const operation of OPERATIONS) {
      const responses = document.paths[operation.rest.path][operation.rest.method.toLowerCase()].responses;
      const lockable = operation.rest.method !== 'GET' && operation.ability !== null && operation.lockdown !== 'exempt';
      expect(Boolean(responses['402']), operation.id).toBe(lockable || operation.tierLimit !== undefined);
      if (lockable) expect(responses['402'].description, operation.id).toContain('BILLING_LOCKED');
      if (operation.tierLimit) expect(responses['402'].description, operation.id).toContain('TIER_LIMIT_REACHED');
    }
    expect(
      OPERATIONS.filter((operation) => operation.tierLimit)
        .map((operation) => operation.id)
        .sort(),
    ).toEqual(['createProject', 'createSubscriber', 'createWebhookEndpoint', 'inviteTeamMember', 'redeemAccessCode']);
  });
});
