/**
 * The creator's own billing (DESIGN D20) against DynamoDB Local with an injected clock:
 * tiers, limits and usage (`GET /v1/billing`), tier changes (`POST /v1/billing/tier`), invoices issued by
 * the `billing.period` deadline at each period start (applied once however often the worker runs),
 * TIER_LIMIT_REACHED (402) for every limited create with one `billing.usage_limit_reached` per limit
 * and period, the 7-day grace period and the lockdown by the clock — BILLING_LOCKED (402) for creator
 * writes over REST and MCP, while reads, billing and the subscriber side (clock transitions, webhook
 * fan-out) keep running — lifted by paying; the operator CLI's billing commands through the CLI entry, and its
 * token for a locked team;
 * 402 in the OpenAPI document. Every event is read from the outbox and checked against its published
 * schema (`teamEvents`), with `project_id` null.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isoTime } from '../../shared/clock.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { changeTier, markInvoicePaid, markInvoicePaymentFailed } from '../../shared/domain/billing/changes.js';
import { GRACE_PERIOD_MS, TIER_PRICES } from '../../shared/domain/billing/schema.js';
import { relayOutbox } from '../../shared/domain/webhook-deliveries/sweeper.js';
import { openApiDocument } from '../../shared/http/openapi.js';
import { OPERATIONS } from '../../shared/operations/registry.js';
import { keys } from '../../shared/store/keys.js';
import { lockTeam } from '../support/billing.js';
import { teamEvents } from '../support/events.js';
import { domainLines, expectRestProblem, expectToolProblem, scanTable } from '../support/guarantees.js';
import { rest, tool, type RestReply } from '../support/calls.js';
import { runCli } from '../support/local-process.js';
import { seedTeam } from '../support/store.js';
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
    // A retry fails too: the same grace period
    await markInvoicePaymentFailed(runtime, team.team.id, invoice.id, 'insufficient_funds');
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
  /** The environment that points the CLI at this test's tables. */
  const cliEnvironment = () => ({
    ...process.env,
    DYNAMODB_ENDPOINT: process.env.DYNAMODB_ENDPOINT,
    TABLE_NAME: runtime.store.tableName,
    DEAD_LETTER_TABLE_NAME: runtime.store.deadLetterTableName,
  });

  it('sets the tier, records a failed and a paid invoice through the CLI entry, and refuses bad input', async () => {
    const env = cliEnvironment();
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
    // Answers are the public shapes
    expect(tier.stdout + failed.stdout + paid.stdout).not.toContain(keys.billingAccount(team.team.id).sk + '"');
  }, 120_000);

  it('is not held back by the lock: a locked team still gets a token from the operator, and its log shows who', async () => {
    await lockTeam(runtime, team.team.id);
    expectRestProblem(await createProject(), 'BILLING_LOCKED');
    const minted = await runCli(
      ['token', 'create', '--team', team.team.id, '--abilities', 'billing:view', '--name', 'to pay'],
      cliEnvironment(),
    );
    expect(minted.code, minted.stderr).toBe(0);
    const token = JSON.parse(minted.stdout) as { token: string };
    expect((await rest(runtime, { method: 'GET', path: '/v1/billing', token: token.token })).json).toMatchObject({
      status: 'locked',
    });
    const [entry] = (await listActivity(runtime.store, team.team.id, { limit: 1, operation: 'createToken' })).data;
    expect(entry).toMatchObject({ surface: 'operator', outcome: 'ok', token_id: null });
  }, 60_000);
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
