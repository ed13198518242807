import { describe, expect, it } from 'vitest';
import type { BillingRead } from '../../shared/domain/billing/account.js';
import {
  decideGracePeriodEnd,
  decideInvoicePaid,
  decideInvoicePaymentFailed,
  decideTierChange,
} from '../../shared/domain/billing/decisions.js';
import { GRACE_PERIOD_MS, type BillingInvoice, type BillingTier } from '../../shared/domain/billing/schema.js';

const teamId = '11111111-2222-4333-8444-555555555555';
const createdAt = '2026-01-15T10:00:00.000Z';
const nowMs = Date.parse('2026-03-20T12:00:00.000Z');
const team = (tier?: BillingTier) => ({ created_at: createdAt, ...(tier ? { billing_tier: tier } : {}) });
const invoice: BillingInvoice = {
  id: 'inv-1',
  team_id: teamId,
  number: 'INV-11111111-0001',
  tier: 'pro',
  status: 'open',
  amount_due: 2900,
  amount_paid: 0,
  currency: 'usd',
  period_start: createdAt,
  period_end: createdAt,
  due_at: createdAt,
  attempt_count: 0,
  last_payment_error: null,
  paid_at: null,
  created_at: createdAt,
  updated_at: createdAt,
};

describe('billing decisions (pure, DESIGN D20)', () => {
  it('starts a paid period with its first invoice when a free team moves to pro', () => {
    const change = decideTierChange(teamId, { team: team(), billing: {} }, 'pro', nowMs);
    expect(change.kind).toBe('changed');
    if (change.kind !== 'changed') return;
    expect(change.previous).toBe('free');
    expect(change.next).toEqual({ anchor_at: new Date(nowMs).toISOString(), invoice_sequence: 1 });
    expect(change.paidPeriod).toEqual({ startMs: nowMs, endMs: Date.parse('2026-04-20T12:00:00.000Z'), sequence: 1 });
    expect(change.account.tier).toBe('pro');
  });

  it('changes nothing for the same tier, and refuses a deleted team', () => {
    expect(decideTierChange(teamId, { team: team('pro'), billing: {} }, 'pro', nowMs).kind).toBe('unchanged');
    expect(() =>
      decideTierChange(teamId, { team: { ...team(), deleted_at: createdAt }, billing: {} }, 'pro', nowMs),
    ).toThrow(/deleted/);
  });

  it('starts the grace period on the first failed payment, and keeps a locked team locked', () => {
    const ok: BillingRead = { team: team('pro'), billing: {} };
    const failed = decideInvoicePaymentFailed(teamId, ok, invoice, null, nowMs);
    expect(failed.graceEndsAt).toBe(new Date(nowMs + GRACE_PERIOD_MS).toISOString());
    expect(failed.failed).toMatchObject({ attempt_count: 1, last_payment_error: 'The payment failed.' });
    expect(failed.next).toMatchObject({ status: 'grace_period', past_due_invoice_ids: ['inv-1'] });
    const locked = decideInvoicePaymentFailed(
      teamId,
      { team: team('pro'), billing: { status: 'locked', past_due_invoice_ids: ['inv-1'] } },
      invoice,
      'card_declined',
      nowMs,
    );
    expect(locked.graceEndsAt).toBeNull();
    expect(locked.next).toEqual({ past_due_invoice_ids: ['inv-1'] });
  });

  it('lifts a lockdown when the last unpaid invoice is paid, not while another is unpaid', () => {
    const last = decideInvoicePaid(
      teamId,
      { team: team('pro'), billing: { status: 'locked', past_due_invoice_ids: ['inv-1'] } },
      invoice,
      nowMs,
    );
    expect(last.ends).toBe('lockdown');
    expect(last.account.status).toBe('ok');
    const another = decideInvoicePaid(
      teamId,
      { team: team('pro'), billing: { status: 'grace_period', past_due_invoice_ids: ['inv-1', 'inv-2'] } },
      invoice,
      nowMs,
    );
    expect(another.ends).toBeNull();
    expect(another.paid.status).toBe('paid');
  });

  it('locks a team still in grace at the deadline, and drops the deadline of one that paid', () => {
    expect(
      decideGracePeriodEnd(teamId, team('pro'), { status: 'grace_period', past_due_invoice_ids: ['a', 'b'] }, nowMs),
    ).toMatchObject({ kind: 'lock', unpaid: 2, next: { status: 'locked' } });
    expect(decideGracePeriodEnd(teamId, team('pro'), { status: 'ok' }, nowMs)).toEqual({ kind: 'drop' });
  });
});
