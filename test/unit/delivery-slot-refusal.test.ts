import { describe, expect, it } from 'vitest';
import { slotRefusal } from '../../shared/domain/webhook-endpoints/delivery-slots.js';
import type { StoredWebhookEndpoint } from '../../shared/domain/webhook-endpoints/record.js';

const nowMs = 1_000_000;
const endpoint = (fields: Partial<StoredWebhookEndpoint>) =>
  ({
    id: 'endpoint-1',
    team_id: 'team-1',
    is_active: true,
    revision: 3,
    in_flight: {},
    ...fields,
  }) as StoredWebhookEndpoint;

describe('slotRefusal (why an endpoint refused a concurrency slot, DESIGN D24)', () => {
  it('is stopped for a deleted or disabled endpoint', () => {
    expect(slotRefusal(undefined, endpoint({}), nowMs)).toBe('stopped');
    expect(slotRefusal(endpoint({ is_active: false }), endpoint({}), nowMs)).toBe('stopped');
  });

  it('is stale when the copy used has another revision', () => {
    expect(slotRefusal(endpoint({ revision: 4 }), endpoint({ revision: 3 }), nowMs)).toBe('stale');
  });

  it('reclaims a full cap holding an expired lease, and is full otherwise', () => {
    expect(slotRefusal(endpoint({ in_flight: { a: nowMs - 1, b: nowMs + 5_000 } }), endpoint({}), nowMs)).toBe(
      'reclaim',
    );
    expect(slotRefusal(endpoint({ in_flight: { a: nowMs + 1, b: nowMs + 5_000 } }), endpoint({}), nowMs)).toBe('full');
  });
});
