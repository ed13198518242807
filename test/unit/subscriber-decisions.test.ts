import { describe, expect, it } from 'vitest';
import { decideSubscriberUpdate } from '../../shared/domain/subscribers/decisions.js';
import type { Subscriber } from '../../shared/domain/subscribers/schema.js';

const at = '2026-01-01T00:00:00.000Z';
const subscriber: Subscriber = {
  id: 'subscriber-1',
  project_id: 'project-1',
  display_name: 'Ada',
  platform_user_id: '42',
  consent: true,
  provider_customer_id: null,
  member_id: 'member-1',
  status: 'active',
  banned_at: null,
  created_at: at,
  updated_at: at,
};
const contact = { email: 'ada@example.com', phone: null };

describe('decideSubscriberUpdate (pure, DESIGN D17)', () => {
  it('decides nothing for a request that repeats the stored values', () => {
    expect(decideSubscriberUpdate(subscriber, contact, { display_name: 'Ada', email: 'ada@example.com' })).toBeNull();
  });

  it('changes contact data without moving the platform user, and clears a field with null', () => {
    const change = decideSubscriberUpdate(subscriber, contact, { email: null, phone: '+15550100' });
    expect(change).toEqual({
      next: subscriber,
      nextContact: { email: null, phone: '+15550100' },
      platformChanged: false,
    });
  });

  it('reports a moved platform user id', () => {
    const change = decideSubscriberUpdate(subscriber, contact, { platform_user_id: '43' });
    expect(change?.platformChanged).toBe(true);
    expect(change?.next.platform_user_id).toBe('43');
  });
});
