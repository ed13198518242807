/**
 * Import from Stripe, prices and items (DESIGN D34): an inactive price becomes a plan, created inactive, only when a
 * subscription to import uses it (else it is skipped, `price_inactive`), and a re-run maps it to that plan; a
 * subscription with one plan item and metered add-ons joins that plan (the add-ons listed as ignored), one with two
 * plan items, or of two archived prices, is skipped (`multiple_plans`).
 */
import { describe, expect, it } from 'vitest';
import {
  ok,
  projectId,
  seeded,
  stripeApi,
  useStripeAccountFixture,
  runImport,
  linkedSubscription,
} from '../support/fixtures/stripe-account.js';

const CUSTOMERS = 16;
/** Imported of the 16 seeded subscriptions: 6 of every 8 states (canceled and incomplete are skipped). */
const SEEDED_IMPORTED = 12;

useStripeAccountFixture({ customers: CUSTOMERS });

/** Adds a price at the fake like the seeded monthly one (`fields` override), and answers it. */
function addPrice(id: string, fields: Record<string, unknown> = {}) {
  const price = { ...stripeApi.prices.get(seeded.prices[0])!, id, ...fields };
  stripeApi.prices.set(id, price);
  return price;
}

/** Adds a customer with an active subscription `id` of one item per price, like the seeded ones. */
function addSubscription(id: string, prices: Record<string, unknown>[], status = 'active') {
  const template = stripeApi.subscriptions.get(seeded.subscriptions[0])!;
  const customer = { ...stripeApi.customers.get(seeded.customers[0])!, id: `cus_${id}`, email: `${id}@example.com` };
  stripeApi.customers.set(customer.id, customer);
  const [first] = template.items.data;
  const items = prices.map((price, index) => ({ ...first, id: `si_${id}_${index}`, price }));
  stripeApi.subscriptions.set(id, {
    ...template,
    id,
    customer: customer.id,
    status,
    items: { ...template.items, data: items },
  });
}

const zero = { created: 0, updated: 0, mapped: 0, unchanged: 0, skipped: 0 };

describe('importing inactive Stripe prices', () => {
  it('makes an inactive plan of an archived price a subscription uses, skips an unused one, and maps it on a re-run', async () => {
    const used = addPrice('price_retired', { active: false, unit_amount: 700 });
    addPrice('price_unused', { active: false, unit_amount: 800 });
    addSubscription('sub_retired', [used]);
    addSubscription('sub_ended', [stripeApi.prices.get('price_unused')!], 'canceled');

    const dry = await runImport({ dry_run: true });
    expect(dry.counts.plans).toEqual({ ...zero, created: 4, skipped: 2 });
    expect(dry.skipped).toContainEqual({
      kind: 'plans',
      stripe_id: 'price_unused',
      reason: expect.stringMatching(/^price_inactive: /),
    });
    expect(dry.counts.subscriptions).toMatchObject({ created: SEEDED_IMPORTED + 1 });
    expect((await ok('GET', `/v1/projects/${projectId}/plans`)).data).toEqual([]);

    const first = await runImport();
    expect(first.counts.plans).toEqual({ ...zero, created: 4, skipped: 2 });
    const plans = (await ok('GET', `/v1/projects/${projectId}/plans`)).data as Record<string, unknown>[];
    expect(plans.find((plan) => plan.provider_price_id === 'price_unused')).toBeUndefined();
    const retired = plans.find((plan) => plan.provider_price_id === 'price_retired');
    expect(retired).toMatchObject({ status: 'inactive', sync_status: 'synced', amount: 700 });
    expect(plans.filter((plan) => plan.status === 'active')).toHaveLength(3);
    expect(await linkedSubscription('sub_retired')).toMatchObject({ status: 'active', plan_id: retired!.id });

    const second = await runImport();
    expect(second.counts.plans).toEqual({ ...zero, unchanged: 4, skipped: 2 });
    expect(second.counts.subscriptions).toMatchObject({ created: 0, unchanged: SEEDED_IMPORTED + 1 });
    expect((await ok('GET', `/v1/projects/${projectId}/plans`)).data).toHaveLength(4);
    expect(stripeApi.requests.filter((request) => request.method !== 'GET')).toEqual([]);
  });

  it('makes no plan of an archived price whose only subscription has an active plan item: that item’s plan it joins', async () => {
    const archived = addPrice('price_archived', { active: false, unit_amount: 900 });
    const monthly = stripeApi.prices.get(seeded.prices[0])!;
    addSubscription('sub_archived_and_monthly', [archived, monthly]);

    for (const dryRun of [true, false]) {
      const job = await runImport({ dry_run: dryRun });
      expect(job.counts.plans).toEqual({ ...zero, created: 3, skipped: 2 });
      expect(job.skipped).toContainEqual({
        kind: 'plans',
        stripe_id: 'price_archived',
        reason: expect.stringMatching(/^price_inactive: /),
      });
      expect(job.counts.subscriptions).toMatchObject({ created: SEEDED_IMPORTED + 1 });
      expect(job.counts.subscription_items).toEqual({ ignored: 1 });
      expect(job.skipped).toContainEqual({
        kind: 'subscriptions',
        stripe_id: 'si_sub_archived_and_monthly_0',
        reason: expect.stringMatching(/^item of sub_archived_and_monthly ignored: price price_archived has no plan/),
      });
    }
    const plans = (await ok('GET', `/v1/projects/${projectId}/plans`)).data as Record<string, unknown>[];
    expect(plans.find((plan) => plan.provider_price_id === 'price_archived')).toBeUndefined();
    const monthlyPlan = plans.find((plan) => plan.provider_price_id === monthly.id)!;
    expect(await linkedSubscription('sub_archived_and_monthly')).toMatchObject({ plan_id: monthlyPlan.id });
  });

  it('makes no plan of two archived prices that one subscription uses together: it is skipped as multiple_plans', async () => {
    const first = addPrice('price_archived_a', { active: false, unit_amount: 500 });
    const second = addPrice('price_archived_b', { active: false, unit_amount: 600 });
    addSubscription('sub_two_archived', [first, second]);

    for (const dryRun of [true, false]) {
      const job = await runImport({ dry_run: dryRun });
      expect(job.counts.plans).toEqual({ ...zero, created: 3, skipped: 3 });
      for (const price of [first, second])
        expect(job.skipped).toContainEqual({
          kind: 'plans',
          stripe_id: price.id,
          reason: expect.stringMatching(/^price_inactive: /),
        });
      expect(job.skipped).toContainEqual({
        kind: 'subscriptions',
        stripe_id: 'sub_two_archived',
        reason: expect.stringMatching(/^multiple_plans: the prices price_archived_a, price_archived_b /),
      });
      expect(job.counts.subscriptions).toMatchObject({ created: SEEDED_IMPORTED });
    }
    const plans = (await ok('GET', `/v1/projects/${projectId}/plans`)).data as Record<string, unknown>[];
    expect(plans.map((plan) => plan.provider_price_id)).not.toContain(first.id);
    expect(plans.map((plan) => plan.provider_price_id)).not.toContain(second.id);
    expect(await linkedSubscription('sub_two_archived')).toBeUndefined();
  });
});

describe('importing Stripe subscriptions of several items', () => {
  it('joins the one plan item’s plan and lists the metered add-on as ignored; skips two plan items', async () => {
    const metered = addPrice('price_metered', {
      unit_amount: 2,
      recurring: { interval: 'month', interval_count: 1, usage_type: 'metered', trial_period_days: null },
    });
    const [monthly, yearly] = seeded.prices.map((id) => stripeApi.prices.get(id)!);
    addSubscription('sub_addon', [metered, monthly]);
    addSubscription('sub_two_plans', [monthly, yearly]);

    const dry = await runImport({ dry_run: true });
    expect(dry.counts.subscriptions).toEqual({
      ...zero,
      created: SEEDED_IMPORTED + 1,
      skipped: CUSTOMERS - SEEDED_IMPORTED + 1,
    });
    expect(dry.counts.subscription_items).toEqual({ ignored: 1 });
    expect(dry.skipped).toContainEqual({
      kind: 'subscriptions',
      stripe_id: 'si_sub_addon_0',
      reason: expect.stringMatching(/^item of sub_addon ignored: price price_metered has no plan: metered/),
    });
    expect(dry.skipped).toContainEqual({
      kind: 'subscriptions',
      stripe_id: 'sub_two_plans',
      reason: expect.stringMatching(/^multiple_plans: /),
    });

    const real = await runImport();
    expect(real.counts.subscriptions).toEqual(dry.counts.subscriptions);
    expect(real.counts.subscription_items).toEqual({ ignored: 1 });
    const plans = (await ok('GET', `/v1/projects/${projectId}/plans`)).data as Record<string, unknown>[];
    const monthlyPlan = plans.find((plan) => plan.provider_price_id === monthly.id)!;
    expect(await linkedSubscription('sub_addon')).toMatchObject({ status: 'active', plan_id: monthlyPlan.id });
    expect(await linkedSubscription('sub_two_plans')).toBeUndefined();
    expect((await runImport()).counts.subscriptions).toMatchObject({ created: 0, unchanged: SEEDED_IMPORTED + 1 });
  });
});
