/**
 * When the service speaks (DESIGN D32), pure: which lifecycle message each subscription event calls for, the
 * reminders of a subscription by status (trial ending, renewal, the payment-failed sequence bounded by the grace
 * period), the channels a message goes through, and how long a send put off by the bot's rate waits.
 */
import { describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../shared/events/outbox.js';
import { chooseChannels } from '../../shared/domain/messages/creation.js';
import { deferralWaitSeconds } from '../../shared/domain/messages/sending.js';
import {
  RENEWAL_NOTICE_DAYS,
  TRIAL_ENDING_NOTICE_DAYS,
  intentsOfEvent,
  remindersOf,
} from '../../shared/domain/messages/planning.js';
import type { Subscription } from '../../shared/domain/subscriptions/schema.js';
import { DAY_MS } from '../../shared/clock.js';
const T0 = Date.parse('2026-03-01T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

function subscription(fields: Partial<Subscription>): Subscription {
  return {
    id: '11111111-1111-4111-8111-111111111111',
    project_id: '22222222-2222-4222-8222-222222222222',
    subscriber_id: '33333333-3333-4333-8333-333333333333',
    plan_id: '44444444-4444-4444-8444-444444444444',
    status: 'active',
    previous_status: null,
    has_access: true,
    source: 'provider',
    payment_provider: 'stripe',
    price_version: 1,
    starts_at: iso(T0),
    ends_at: null,
    trial_ends_at: null,
    current_period_start: iso(T0),
    current_period_end: iso(T0 + 30 * DAY_MS),
    cancel_at_period_end: false,
    canceled_at: null,
    cancellation_reason: null,
    invite_links: [],
    grace_period_end: null,
    discount: null,
    status_changed_at: iso(T0),
    created_at: iso(T0),
    updated_at: iso(T0),
    ...fields,
  };
}

const event = (type: string, fields: Partial<Subscription>) =>
  ({ type, team_id: 't', data: { subscription: subscription(fields) } }) as unknown as StoredEvent;

describe('intentsOfEvent', () => {
  it('maps each subscription event to its message, and the rest to none', () => {
    const kinds = (type: string, fields: Partial<Subscription> = {}) =>
      intentsOfEvent(event(type, fields)).map((intent) => [intent.kind, intent.graceDay]);
    expect(kinds('subscription.created')).toEqual([['welcome', null]]);
    expect(kinds('subscription.created', { status: 'pending', has_access: false })).toEqual([]);
    expect(kinds('subscription.activated', { previous_status: 'pending' })).toEqual([['welcome', null]]);
    expect(kinds('subscription.activated', { previous_status: 'past_due' })).toEqual([]);
    expect(kinds('subscription.activated', { previous_status: 'trialing' })).toEqual([]);
    expect(kinds('subscription.past_due', { status: 'past_due', previous_status: 'active' })).toEqual([
      ['payment_failed', 0],
    ]);
    expect(kinds('subscription.unpaid', { status: 'unpaid', previous_status: 'past_due' })).toEqual([
      ['access_removed', null],
    ]);
    expect(kinds('subscription.canceled', { status: 'canceled', previous_status: 'unpaid' })).toEqual([]);
    expect(kinds('subscription.expired', { status: 'expired', previous_status: 'active' })).toEqual([
      ['access_removed', null],
    ]);
    expect(kinds('subscription.cancellation_scheduled', { previous_status: 'active' })).toEqual([
      ['cancellation_scheduled', null],
    ]);
    expect(kinds('subscription.paused', { previous_status: 'active' })).toEqual([['paused', null]]);
    expect(kinds('subscription.resumed', { previous_status: 'paused' })).toEqual([['resumed', null]]);
    expect(kinds('subscription.renewed')).toEqual([]);
    expect(intentsOfEvent({ type: 'plan.created', data: {} } as unknown as StoredEvent)).toEqual([]);
  });

  it('sends nothing for the event of an imported subscription (no previous status, DESIGN D34)', () => {
    for (const [type, status] of [
      ['subscription.activated', 'active'],
      ['subscription.past_due', 'past_due'],
      ['subscription.cancellation_scheduled', 'pending_cancellation'],
      ['subscription.paused', 'paused'],
      ['subscription.unpaid', 'unpaid'],
    ] as const)
      expect(intentsOfEvent(event(type, { status, previous_status: null }))).toEqual([]);
  });

  it('names a new occasion for each entry into a status, so a second episode is not deduplicated away', () => {
    const first = intentsOfEvent(
      event('subscription.past_due', { status: 'past_due', previous_status: 'active', status_changed_at: iso(T0) }),
    );
    const second = intentsOfEvent(
      event('subscription.past_due', {
        status: 'past_due',
        previous_status: 'active',
        status_changed_at: iso(T0 + 40 * DAY_MS),
      }),
    );
    expect(first[0].occasion).not.toBe(second[0].occasion);
  });
});

describe('remindersOf', () => {
  const due = (fields: Partial<Subscription>, interval = 'month') =>
    remindersOf(subscription(fields), { interval }).map((reminder) => [
      reminder.intent.kind,
      (reminder.dueAtMs - T0) / DAY_MS,
      (reminder.staleAtMs - T0) / DAY_MS,
    ]);

  it('reminds a trial 3 days before it ends and an annual renewal 7 days before', () => {
    expect(due({ status: 'trialing', trial_ends_at: iso(T0 + 14 * DAY_MS) })).toEqual([
      ['trial_ending', 14 - TRIAL_ENDING_NOTICE_DAYS, 14],
    ]);
    expect(due({ current_period_end: iso(T0 + 365 * DAY_MS) }, 'year')).toEqual([
      ['renewal_reminder', 365 - RENEWAL_NOTICE_DAYS, 365],
    ]);
    expect(due({}, 'month')).toEqual([]);
    expect(due({ ends_at: iso(T0 + 20 * DAY_MS) }, 'month')).toEqual([['renewal_reminder', 13, 20]]);
  });

  it('follows a failed payment on day 3 and the day before the grace period ends', () => {
    const pastDue = (graceDays: number) =>
      due({ status: 'past_due', status_changed_at: iso(T0), grace_period_end: iso(T0 + graceDays * DAY_MS) });
    expect(pastDue(7)).toEqual([
      ['payment_failed', 3, 6],
      ['grace_ending', 6, 7],
    ]);
    expect(pastDue(4)).toEqual([['grace_ending', 3, 4]]);
    expect(pastDue(1)).toEqual([]);
    expect(pastDue(0)).toEqual([]);
  });
});

describe('chooseChannels', () => {
  it('prefers the bot, falls back to e-mail, and sends both only when asked', () => {
    const reach = (email: string | null, bot: 'telegram' | 'discord' | null) => ({ email, bot, optedOut: false });
    expect(chooseChannels(reach('a@example.test', 'telegram'), 'preferred')).toEqual(['telegram']);
    expect(chooseChannels(reach('a@example.test', null), 'preferred')).toEqual(['email']);
    expect(chooseChannels(reach('a@example.test', 'discord'), 'both')).toEqual(['discord', 'email']);
    expect(chooseChannels(reach(null, null), 'both')).toEqual([]);
  });
});

describe('deferralWaitSeconds', () => {
  it('waits the limiter\u2019s time plus a random share of a window that doubles per deferral, up to 30 s', () => {
    expect(deferralWaitSeconds(1, 1, 0)).toBe(1);
    expect(deferralWaitSeconds(1, 1, 1)).toBe(3);
    expect(deferralWaitSeconds(1, 3, 0.5)).toBe(5);
    expect(deferralWaitSeconds(1, 5, 1)).toBe(31);
    expect(deferralWaitSeconds(1, 40, 1)).toBe(31);
  });
});
