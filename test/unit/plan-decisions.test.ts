import { describe, expect, it } from 'vitest';
import { decidePlanStatus, decidePlanUpdate, resolveTerms } from '../../shared/domain/plans/decisions.js';
import type { Plan } from '../../shared/domain/plans/schema.js';
import type { Project } from '../../shared/domain/projects/schema.js';

const at = '2026-01-01T00:00:00.000Z';
const later = '2026-02-01T00:00:00.000Z';
const noLive = { expression: 'no live', values: { ':zero_live': 0 } };
const plan: Plan = {
  id: 'plan-1',
  project_id: 'project-1',
  name: 'Monthly',
  description: null,
  amount: 500,
  currency: 'USD',
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
      amount: 500,
      currency: 'USD',
      interval: 'month',
      interval_count: 1,
      access_days: null,
      effective_from: at,
    },
  ],
  sync_status: 'not_synced',
  payment_provider: null,
  provider_product_id: null,
  provider_price_id: null,
  synced_at: null,
  sync_error: null,
  created_at: at,
  updated_at: at,
};
const project = (status: 'active' | 'archived') =>
  ({ id: 'project-1', status, payment_provider: null }) as unknown as Project;

describe('plan decisions (pure, DESIGN D16)', () => {
  it('adds a price version when live subscriptions hold the current price, and edits it in place without them', () => {
    const versioned = decidePlanUpdate(plan, project('active'), 2, { amount: 700 }, later, noLive);
    expect(versioned?.next.price_version).toBe(2);
    expect(versioned?.next.price_history.map((entry) => [entry.version, entry.amount])).toEqual([
      [1, 500],
      [2, 700],
    ]);
    expect(versioned?.condition).toBeUndefined();
    expect(versioned?.events).toEqual(['plan.updated']);
    const inPlace = decidePlanUpdate(plan, project('active'), 0, { amount: 700 }, later, noLive);
    expect(inPlace?.next.price_version).toBe(1);
    expect(inPlace?.next.price_history).toEqual([
      expect.objectContaining({ version: 1, amount: 700, effective_from: later }),
    ]);
    expect(inPlace?.condition).toBe(noLive);
  });

  it('changes the grace period without a price version or a provider sync, even with live subscriptions', () => {
    const synced = { ...plan, sync_status: 'synced' as const };
    const change = decidePlanUpdate(synced, project('active'), 2, { grace_days: 0 }, later, noLive);
    expect(change?.next).toMatchObject({ grace_days: 0, price_version: 1, sync_status: 'synced' });
    expect(change?.next.price_history).toEqual(plan.price_history);
    expect(change?.condition).toBeUndefined();
    expect(change?.events).toEqual(['plan.updated']);
    expect(change?.sync).toBe(false);
    expect(decidePlanUpdate(plan, project('active'), 2, { grace_days: plan.grace_days }, later, noLive)).toBeNull();
  });

  it('decides nothing for a request that changes nothing', () => {
    expect(decidePlanUpdate(plan, project('active'), 0, { name: 'Monthly' }, later, noLive)).toBeNull();
  });

  it('refuses to activate a plan of an archived project, or one already in that status', () => {
    expect(() => decidePlanStatus({ ...plan, status: 'inactive' }, project('archived'), 'active')).toThrow(/archived/);
    expect(() => decidePlanStatus(plan, project('active'), 'active')).toThrow(/already active/);
    expect(decidePlanStatus(plan, project('active'), 'inactive').events).toEqual(['plan.deactivated']);
  });

  it('requires access_days of a one_time plan', () => {
    expect(() => resolveTerms({ interval: 'one_time' })).toThrow(/access_days/);
    expect(resolveTerms({ interval: 'one_time', access_days: 30 })).toMatchObject({
      interval: 'one_time',
      interval_count: 1,
      access_days: 30,
      trial_days: 0,
    });
  });
});
