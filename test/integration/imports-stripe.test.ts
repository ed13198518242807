/**
 * Import from Stripe (DESIGN D34): the loopback Stripe fake holds 200 customers with a mix of subscription statuses.
 * A dry run reports what would be created and skipped and creates nothing; the import creates the plans, subscribers
 * and subscriptions once, with Stripe's statuses and periods, emitting no `subscription.created`; a second import
 * creates nothing, and a subscription changed at Stripe is updated; only GETs reach Stripe (nobody is charged); a page
 * Stripe's rate limit refused runs again, and a job whose page message was lost resumes where it stopped.
 */
import { describe, expect, it } from 'vitest';
import { restartStalledImports } from '../../shared/domain/imports/restart.js';
import { ImportPageRetry, processImportPage } from '../../shared/domain/imports/worker.js';
import { SWEEP_GRACE_MS } from '../../shared/domain/webhook-deliveries/policy.js';
import { parseStoredSubscriber } from '../../shared/domain/subscribers/record.js';
import { loadSubscriber } from '../../shared/domain/subscribers/repository.js';
import { TeamEventCursor } from '../support/events.js';
import {
  call,
  clock,
  ok,
  projectId,
  runtime,
  seeded,
  stripeApi,
  team,
  useStripeAccountFixture,
  runImport,
  linkedSubscription,
} from '../support/fixtures/stripe-account.js';

const CUSTOMERS = 200; // two of Stripe's pages of 100, and more skips than the 50 a job lists

useStripeAccountFixture({ customers: CUSTOMERS });

/** Our status of each seeded Stripe state (`SEEDED_STATES` order); null: skipped. */
const EXPECTED = ['active', 'trialing', 'past_due', 'pending_cancellation', 'paused', null, 'unpaid', null];
const importedCount = 150; // 25 in each of the six imported states (200 = 25 × 8)
const zero = { created: 0, updated: 0, mapped: 0, unchanged: 0, skipped: 0 };

describe('POST /v1/projects/{id}/imports (source stripe)', () => {
  it('a dry run reports what would be created and skipped, and why, and creates nothing', async () => {
    const job = await runImport({ dry_run: true });
    expect(job).toMatchObject({ status: 'succeeded', dry_run: true, cursor: null });
    expect(job.counts).toEqual({
      plans: { ...zero, created: 3, skipped: 1 },
      subscribers: { ...zero, created: CUSTOMERS },
      subscriptions: { ...zero, created: importedCount, skipped: CUSTOMERS - importedCount },
      subscription_items: { ignored: 0 },
    });
    expect(job.skipped).toHaveLength(50);
    expect(job.skipped[0]).toMatchObject({ kind: 'plans', stripe_id: seeded.oneTimePrice });
    expect(job.skipped.map((skip: { reason: string }) => skip.reason)).toContain('ended at Stripe (canceled)');
    expect((await ok('GET', `/v1/projects/${projectId}/plans`)).data).toEqual([]);
    expect((await ok('GET', `/v1/projects/${projectId}/subscribers`)).data).toEqual([]);
    expect(stripeApi.requests.every((request) => request.method === 'GET')).toBe(true);
  });

  it('imports once with Stripe’s statuses and periods; a re-run creates nothing and picks up a change', async () => {
    const events = new TeamEventCursor(runtime.store, team.team.id);
    await events.next();
    const first = await runImport({});
    expect(first.counts).toEqual({
      plans: { ...zero, created: 3, skipped: 1 },
      subscribers: { ...zero, created: CUSTOMERS },
      subscriptions: { ...zero, created: importedCount, skipped: CUSTOMERS - importedCount },
      subscription_items: { ignored: 0 },
    });
    const plans = (await ok('GET', `/v1/projects/${projectId}/plans`)).data;
    expect(plans.map((plan: { provider_price_id: string }) => plan.provider_price_id).sort()).toEqual(
      [...seeded.prices].sort(),
    );
    expect(plans.every((plan: { sync_status: string }) => plan.sync_status === 'synced')).toBe(true);
    for (const [index, stripeId] of seeded.subscriptions.entries()) {
      const stripe = stripeApi.subscriptions.get(stripeId)!;
      const subscription = await linkedSubscription(stripeId);
      const expected = EXPECTED[index % 8];
      if (expected === null) {
        expect(subscription).toBeUndefined();
        continue;
      }
      const item = stripe.items.data[0];
      expect(subscription).toMatchObject({
        status: expected,
        source: 'provider',
        payment_provider: 'stripe',
        current_period_start: new Date(item.current_period_start * 1000).toISOString(),
        current_period_end: new Date(item.current_period_end * 1000).toISOString(),
        trial_ends_at: stripe.trial_end === null ? null : new Date(stripe.trial_end * 1000).toISOString(),
        previous_status: null,
      });
    }
    const emitted = await events.next();
    const types = new Set(emitted.map((event) => event.type));
    expect(types.has('subscription.created')).toBe(false);
    for (const type of ['subscription.activated', 'subscription.past_due', 'subscription.cancellation_scheduled'])
      expect(types).toContain(type);
    expect(
      emitted.filter((event) => event.type.startsWith('subscription.')).length,
      'one event per imported subscription',
    ).toBe(importedCount);

    const second = await runImport({});
    expect(second.counts).toEqual({
      plans: { ...zero, unchanged: 3, skipped: 1 },
      subscribers: { ...zero, unchanged: CUSTOMERS },
      subscriptions: { ...zero, unchanged: importedCount, skipped: CUSTOMERS - importedCount },
      subscription_items: { ignored: 0 },
    });
    expect((await events.next()).filter((event) => event.type.startsWith('subscription.'))).toEqual([]);

    stripeApi.subscriptions.get(seeded.subscriptions[0])!.cancel_at_period_end = true;
    Object.assign(stripeApi.customers.get(seeded.customers[1])!, { email: 'moved@example.com', name: 'Moved Fan' });
    clock.advance(60_000);
    const third = await runImport({});
    expect(third.counts.subscriptions).toMatchObject({ created: 0, updated: 1, unchanged: importedCount - 1 });
    expect(third.counts.subscribers).toEqual({ ...zero, updated: 1, unchanged: CUSTOMERS - 1 });
    expect(await linkedSubscription(seeded.subscriptions[0])).toMatchObject({ status: 'pending_cancellation' });
    // The customer's new e-mail and name followed Stripe's (the e-mail is stored; consent false hides it from reads).
    const moved = (await linkedSubscription(seeded.subscriptions[1])) as { subscriber_id: string };
    expect(await ok('GET', `/v1/subscribers/${moved.subscriber_id}`)).toMatchObject({ display_name: 'Moved Fan' });
    const stored = parseStoredSubscriber(await loadSubscriber(runtime.store, team.principal, moved.subscriber_id));
    expect(stored.email).toBe('moved@example.com');
    expect((await events.next()).map((event) => event.type)).toContain('subscription.cancellation_scheduled');

    // Nobody charged, nothing changed at Stripe: the import only ever read.
    expect(stripeApi.requests.filter((request) => request.method !== 'GET')).toEqual([]);
    // Three imports, each reading every page of customers.
    expect(stripeApi.requestsTo('GET', '/v1/customers').length).toBe(3 * (CUSTOMERS / 100));
  });

  it('a page delivered twice imports once, a page refused by Stripe’s rate limit runs again, a lost page message resumes', async () => {
    await ok('POST', `/v1/projects/${projectId}/imports`, { source: 'stripe' }, 202);
    // The prices page delivered twice at once: one plan per price all the same, and one next message.
    const first = runtime.importPages.shift()!;
    const outcomes = await Promise.all([processImportPage(runtime, first), processImportPage(runtime, { ...first })]);
    expect(outcomes.sort()).toEqual(['import_page', 'skipped']);
    expect((await ok('GET', `/v1/projects/${projectId}/plans`)).data).toHaveLength(3);
    expect(runtime.importPages).toHaveLength(1);
    // Then Stripe's rate limit answers 429 (the queue delivers the message again, the cursor has not moved); then the
    // first page of customers; the next page's message is lost.
    stripeApi.failNext(
      { status: 429, error: { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests.' } },
      { method: 'GET', pathPrefix: '/v1/customers' },
    );
    const limited = runtime.importPages.shift()!;
    await expect(processImportPage(runtime, limited)).rejects.toBeInstanceOf(ImportPageRetry);
    expect(runtime.importPages).toEqual([]);
    await processImportPage(runtime, limited);
    const lost = runtime.importPages.shift()!;
    const [stalled] = (await ok('GET', `/v1/projects/${projectId}/imports`)).data;
    expect(stalled).toMatchObject({ status: 'running', cursor: { kind: 'subscribers' } });
    expect(stalled.counts.subscribers.created).toBe(100);
    clock.advance(SWEEP_GRACE_MS + 1);
    expect(await restartStalledImports(runtime, clock.nowMs() - SWEEP_GRACE_MS)).toBe(1);
    expect(runtime.importPages).toEqual([lost]);
    // A duplicate of a message already done changes nothing twice.
    runtime.importPages.push({ ...lost });
    while (runtime.importPages.length) await processImportPage(runtime, runtime.importPages.shift()!);
    const done = await ok('GET', `/v1/projects/${projectId}/imports/${stalled.id}`);
    expect(done.status).toBe('succeeded');
    expect(done.counts.subscribers.created + done.counts.subscribers.unchanged).toBe(CUSTOMERS);
    expect(done.counts.subscriptions.created).toBe(importedCount);
  });

  it('refuses a project without Stripe and a mapping to a plan of another project', async () => {
    const other = (await ok('POST', '/v1/projects', { name: 'Other', platform_type: 'web' }, 201)).id as string;
    expect((await call('POST', `/v1/projects/${other}/imports`, { source: 'stripe' })).status).toBe(409);
    const reply = await call('POST', `/v1/projects/${projectId}/imports`, {
      source: 'stripe',
      plan_mapping: { [seeded.prices[0]]: crypto.randomUUID() },
    });
    expect(reply.status).toBe(422);
  });
});
