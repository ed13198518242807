/**
 * Stripe, outbound half (DESIGN D16, D22) with the real `stripe` SDK pointed at a loopback fake
 * of the Stripe API (test/support/stripe-api.ts): connecting a project (the key checked with one Stripe
 * call, both secrets stored sealed in the project's transaction, never in an answer, event, stored item in
 * clear, activity entry or log line; a refused key, a malformed one, an outage with its retry; disconnect
 * deleting the credential), plan sync (Product and Price created; a rename updates the Product and keeps the
 * Price; a new price version creates a new Price and deactivates the old; Stripe's refusal recorded with its
 * code; 5xx retried; an outage recorded then retried), and refunds through the Refunds API (one
 * `payment.refunded`, the Stripe refund id stored; an outage leaves the payment unchanged and a retry
 * works; Stripe's refusal is a CONFLICT). Against DynamoDB Local; every event is checked against its
 * published schema.
 */

import { describe, expect, it } from 'vitest';
import { stripeProductId } from '../../shared/providers/stripe-params.js';
import { keys } from '../../shared/store/keys.js';
import {
  captureOutput,
  connect,
  everythingStored,
  newEvents,
  ok,
  projectId,
  requestsOfThisKey,
  runtime,
  secretKey,
  settings,
  stripe,
  team,
  types,
  webhookSecret,
  useStripeConnectFixture,
} from '../support/fixtures/stripe-connect.js';

useStripeConnectFixture();

describe('plan sync', () => {
  const createGold = () =>
    ok(
      'POST',
      `/v1/projects/${projectId}/plans`,
      {
        name: 'Gold',
        description: 'All the books',
        amount: 900,
        currency: 'EUR',
        interval: 'month',
        interval_count: 1,
      },
      201,
    );
  const setLiveSubscriptions = (planId: string, count: number) =>
    runtime.store.update({
      Key: keys.plan(team.team.id, planId),
      UpdateExpression: 'SET live_subscription_count = :count',
      ExpressionAttributeValues: { ':count': count },
    });

  it('creates the Product and a Price, updates the Product on a rename, and makes a new Price (deactivating the old) for a new price version', async () => {
    expect((await connect()).status).toBe(200);
    await newEvents();
    const plan = await createGold();
    expect(plan).toMatchObject({
      sync_status: 'synced',
      payment_provider: 'stripe',
      provider_product_id: stripeProductId(plan.id),
      provider_price_id: expect.stringMatching(/^price_/),
      sync_error: null,
    });
    expect(stripe.products.get(plan.provider_product_id)).toMatchObject({
      name: 'Gold',
      description: 'All the books',
      active: true,
      metadata: { plan_id: plan.id, project_id: projectId },
    });
    const firstPrice = stripe.prices.get(plan.provider_price_id)!;
    expect(firstPrice).toMatchObject({
      product: plan.provider_product_id,
      currency: 'eur',
      unit_amount: 900,
      recurring: { interval: 'month', interval_count: 1 },
      active: true,
      lookup_key: `svc_plan_${plan.id}_v1`,
      metadata: { plan_id: plan.id, price_version: '1' },
    });
    let events = await newEvents();
    expect(types(events)).toEqual(['plan.created', 'plan.synced']);
    expect(events[1].data).toMatchObject({
      payment_provider: 'stripe',
      provider_product_id: plan.provider_product_id,
      provider_price_id: plan.provider_price_id,
    });

    // A rename: the Product changes, the Price stays.
    const renamed = await ok('POST', `/v1/plans/${plan.id}`, { name: 'Gold readers' });
    expect(renamed).toMatchObject({ sync_status: 'synced', provider_price_id: plan.provider_price_id });
    expect(stripe.products.get(plan.provider_product_id)!.name).toBe('Gold readers');
    expect(types(await newEvents())).toEqual(['plan.updated', 'plan.synced']);

    // A new price version (live subscriptions keep the old one): a new Price, the old one deactivated, never edited.
    await setLiveSubscriptions(plan.id, 1);
    const repriced = await ok('POST', `/v1/plans/${plan.id}`, { amount: 1_500 });
    expect(repriced).toMatchObject({ price_version: 2, sync_status: 'synced' });
    expect(repriced.provider_price_id).not.toBe(plan.provider_price_id);
    expect(stripe.prices.get(repriced.provider_price_id)).toMatchObject({
      unit_amount: 1_500,
      currency: 'eur',
      active: true,
      lookup_key: `svc_plan_${plan.id}_v2`,
      metadata: { price_version: '2' },
    });
    expect(stripe.prices.get(plan.provider_price_id)).toMatchObject({ unit_amount: 900, active: false });
    const priceWrites = requestsOfThisKey().filter(
      (request) => request.method === 'POST' && request.path.startsWith('/v1/prices/'),
    );
    expect(priceWrites.map((request) => request.params)).toEqual([{ active: 'false' }]);
    events = await newEvents();
    expect(types(events)).toEqual(['plan.updated', 'plan.synced']);
    expect(events[1].data).toMatchObject({ provider_price_id: repriced.provider_price_id });
  });

  it('records Stripe\u2019s refusal with its code, retries 5xx, records an outage, and syncs again on demand', async () => {
    expect((await connect()).status).toBe(200);
    const plan = await createGold();
    await newEvents();

    // A refusal (4xx) is not retried: recorded at once with Stripe's code and message.
    stripe.failNext(
      {
        status: 400,
        error: { type: 'invalid_request_error', code: 'parameter_invalid_integer', message: 'Invalid integer: 1e99' },
      },
      { method: 'POST', pathPrefix: '/v1/prices' },
    );
    const calls = requestsOfThisKey().length;
    const output = captureOutput();
    let failed;
    try {
      failed = await ok('POST', `/v1/plans/${plan.id}`, { amount: 1_200 });
    } finally {
      output.stop();
    }
    expect(failed).toMatchObject({
      sync_status: 'failed',
      sync_error: expect.stringContaining('Invalid integer: 1e99'),
    });
    expect(failed.sync_error).toContain('parameter_invalid_integer');
    let events = await newEvents();
    expect(types(events)).toEqual(['plan.updated', 'plan.sync_failed']);
    expect(events[1].data).toMatchObject({
      payment_provider: 'stripe',
      code: 'parameter_invalid_integer',
      reason: expect.stringContaining('Invalid integer'),
    });
    expect(
      requestsOfThisKey()
        .slice(calls)
        .filter((request) => request.method === 'POST' && request.path === '/v1/prices'),
    ).toHaveLength(1);
    expect(JSON.stringify(events) + output.text() + (await everythingStored())).not.toContain(secretKey);

    // 5xx twice, then Stripe answers: retried within the sync (three attempts).
    stripe.failNext(
      { status: 503, error: { type: 'api_error', message: 'Service unavailable.' } },
      { times: 2, pathPrefix: '/v1/products/' },
    );
    const synced = await ok('POST', `/v1/plans/${plan.id}/sync`);
    expect(synced).toMatchObject({ sync_status: 'synced', sync_error: null });
    expect(stripe.prices.get(synced.provider_price_id)).toMatchObject({ unit_amount: 1_200, active: true });
    expect(types(await newEvents())).toEqual(['plan.synced']);

    // Unreachable on every attempt: recorded (no code), nothing lost; a later sync succeeds.
    stripe.failNext({ refuse: true }, { times: 100 });
    const down = await ok('POST', `/v1/plans/${plan.id}`, { name: 'Gold II' });
    stripe.clearFailures();
    expect(down).toMatchObject({
      name: 'Gold II',
      sync_status: 'failed',
      sync_error: expect.stringContaining('Stripe could not be reached'),
    });
    events = await newEvents();
    expect(types(events)).toEqual(['plan.updated', 'plan.sync_failed']);
    expect(events[1].data).toMatchObject({ code: null });
    const again = await ok('POST', `/v1/plans/${plan.id}/sync`);
    expect(again).toMatchObject({
      name: 'Gold II',
      sync_status: 'synced',
      provider_product_id: plan.provider_product_id,
    });
    expect(stripe.products.get(plan.provider_product_id)!.name).toBe('Gold II');
  });
  it('logs an unexpected failure by its class only: a credential that no longer opens (another key-encryption key) is recorded, no secret logged', async () => {
    expect((await connect()).status).toBe(200);
    const plan = await createGold();
    await newEvents();
    // A new key-encryption key: the stored credential no longer opens
    runtime.integrations = { ...settings(), retry: { retries: 0, minTimeoutMs: 0 } };
    const output = captureOutput();
    let failed;
    try {
      failed = await ok('POST', `/v1/plans/${plan.id}/sync`);
    } finally {
      output.stop();
    }
    expect(failed).toMatchObject({ sync_status: 'failed', sync_error: 'The stripe provider could not be reached.' });
    expect(types(await newEvents())).toEqual(['plan.sync_failed']);
    expect(output.text()).toContain('payment provider sync threw');
    expect(output.text()).toContain('CredentialDecryptionError');
    for (const secret of [secretKey, secretKey.slice(-12), webhookSecret]) expect(output.text()).not.toContain(secret);
  });
});
