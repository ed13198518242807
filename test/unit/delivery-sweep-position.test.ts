import { describe, expect, it } from 'vitest';
import { MAX_SWEEP_SPACING_MS } from '../../shared/domain/webhook-deliveries/policy.js';
import { sweptDueMs } from '../../shared/domain/webhook-deliveries/worker-index.js';

describe('sweptDueMs (where the sweeper moves an overdue delivery)', () => {
  it('moves a row not re-queued since its lease one spacing ahead', () => {
    expect(sweptDueMs(0, 1_000, 50_000)).toBe(51_000);
  });

  it('doubles the spacing with each re-queue by the sweeper', () => {
    expect(sweptDueMs(3, 1_000, 50_000)).toBe(58_000);
  });

  it('never moves a row further than the cap', () => {
    expect(sweptDueMs(60, 1_000, 50_000)).toBe(50_000 + MAX_SWEEP_SPACING_MS);
  });
});
