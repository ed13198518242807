/**
 * Plan sync to the project's payment provider (DESIGN D16, D22) through the provider port: `manual` syncs at once; a
 * failing or flaky adapter is injected at the use case. Every event emitted is read from the outbox and checked against
 * its published JSON Schema. Against DynamoDB Local, with an injected clock.
 */
import { describe, expect, it } from 'vitest';
import { updatePlan } from '../../shared/domain/plans/changes.js';
import { syncPlan } from '../../shared/domain/plans/sync.js';
import type { PaymentProviderAdapter } from '../../shared/providers/payment-provider.js';
import { manualPaymentProvider } from '../../shared/providers/manual.js';
import { expectRestProblem } from '../support/guarantees.js';

import {
  call,
  connectManual,
  createGold,
  newEvents,
  runtime,
  setLiveSubscriptions,
  team,
  types,
  usePlansFixture,
} from '../support/fixtures/plans.js';

usePlansFixture();

describe('sync to the payment provider (D22)', () => {
  it('refuses to sync without a provider, then the manual provider syncs at once on creation, price change and demand', async () => {
    const unsynced = await createGold();
    expectRestProblem(await call('POST', `/v1/plans/${unsynced.id}/sync`), 'CONFLICT');
    await connectManual();
    await newEvents();

    const synced = await call('POST', `/v1/plans/${unsynced.id}/sync`);
    expect(synced.json).toMatchObject({
      sync_status: 'synced',
      payment_provider: 'manual',
      provider_product_id: `manual_prod_${unsynced.id}`,
      provider_price_id: `manual_price_${unsynced.id}_v1`,
      synced_at: expect.any(String),
      sync_error: null,
    });
    let events = await newEvents();
    expect(types(events)).toEqual(['plan.synced']);
    expect(events[0].data).toMatchObject({
      payment_provider: 'manual',
      provider_product_id: `manual_prod_${unsynced.id}`,
      plan: { sync_status: 'synced' },
    });

    const created = await createGold({ name: 'Silver' });
    expect(created).toMatchObject({ sync_status: 'synced', payment_provider: 'manual' });
    expect(types(await newEvents())).toEqual(['plan.created', 'plan.synced']);
    expect((await call('GET', `/v1/plans/${created.id}`)).json).toEqual(created);

    await setLiveSubscriptions(created.id, 1);
    const repriced = await call('POST', `/v1/plans/${created.id}`, { amount: 1_500 });
    expect(repriced.json).toMatchObject({
      price_version: 2,
      sync_status: 'synced',
      provider_price_id: `manual_price_${created.id}_v2`,
    });
    events = await newEvents();
    expect(types(events)).toEqual(['plan.updated', 'plan.synced']);
    expect(events[0].data.plan).toMatchObject({ sync_status: 'pending' });
    // Status changes alone do not re-sync.
    await call('POST', `/v1/plans/${created.id}/deactivate`);
    expect(types(await newEvents())).toEqual(['plan.deactivated']);
  });

  it('records a failed sync (plan.sync_failed, sync_error) and retries a flaky provider', async () => {
    const plan = await createGold();
    await connectManual();
    await newEvents();
    const failing: PaymentProviderAdapter = {
      ...manualPaymentProvider,
      syncPlan: async () => ({ ok: false, reason: 'The currency is not enabled on the account.', retryable: false }),
    };
    const failed = await syncPlan(runtime, team.principal, plan.id, { adapters: { manual: failing } });
    expect(failed).toMatchObject({
      sync_status: 'failed',
      sync_error: 'The currency is not enabled on the account.',
      payment_provider: 'manual',
      synced_at: null,
    });
    let events = await newEvents();
    expect(types(events)).toEqual(['plan.sync_failed']);
    expect(events[0].data).toMatchObject({
      payment_provider: 'manual',
      reason: 'The currency is not enabled on the account.',
      code: null,
    });
    expect((await call('GET', `/v1/plans/${plan.id}`)).json).toMatchObject({ sync_status: 'failed' });

    let calls = 0;
    const flaky: PaymentProviderAdapter = {
      ...manualPaymentProvider,
      syncPlan: async (input) => {
        calls++;
        if (calls === 1) throw new Error('socket hang up (sk_live_secret in an internal message)');
        return { ok: true, provider_product_id: `prod_${input.plan_id}`, provider_price_id: null };
      },
    };
    const recovered = await updatePlan(
      runtime,
      team.principal,
      plan.id,
      { name: 'Gold again' },
      { adapters: { manual: flaky }, retry: { retries: 1, minTimeoutMs: 0 } },
    );
    expect(calls).toBe(2);
    expect(recovered).toMatchObject({
      name: 'Gold again',
      sync_status: 'synced',
      provider_product_id: `prod_${plan.id}`,
      provider_price_id: null,
      sync_error: null,
    });
    events = await newEvents();
    expect(types(events)).toEqual(['plan.updated', 'plan.synced']);

    const down: PaymentProviderAdapter = {
      ...manualPaymentProvider,
      syncPlan: async () => Promise.reject(new Error('sk_live_secret leaked')),
    };
    const unreachable = await syncPlan(runtime, team.principal, plan.id, {
      adapters: { manual: down },
      retry: { retries: 2, minTimeoutMs: 0 },
    });
    expect(unreachable).toMatchObject({
      sync_status: 'failed',
      sync_error: 'The manual provider could not be reached.',
    });
    expect(JSON.stringify(await newEvents())).not.toContain('sk_live');
  });
});
