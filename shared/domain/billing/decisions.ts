import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { accountOf, anchorOf, periodContaining, tierOf, type BillingRead } from './account.js';
import { TIER_ATTRIBUTE, type StoredBilling, type StoredBillingTeam } from './record.js';
import {
  DEFAULT_TIER,
  GRACE_PERIOD_MS,
  TIER_PRICES,
  type BillingAccount,
  type BillingInvoice,
  type BillingTier,
} from './schema.js';

/**
 * The decisions of the creator's own billing (DESIGN D20), pure: from what was read (the team item, the
 * billing account, an invoice) and the time (epoch MILLISECONDS) to what changes — the billing account's
 * changed attributes (`next`), the account after them and what to emit. No Store: the caller loads,
 * decides and commits in one unit of work, again on a lost race.
 */

/**
 * Moving to `tier`: `unchanged` for the same tier (no event); else `changed` with the previous tier and,
 * from `free` to a paid tier, the new monthly period starting now with its invoice's sequence number.
 * Errors: CONFLICT when the team was deleted.
 */
export type TierChange =
  | { kind: 'unchanged'; account: BillingAccount }
  | {
      kind: 'changed';
      previous: BillingTier;
      next: StoredBilling;
      account: BillingAccount;
      paidPeriod: { startMs: number; endMs: number; sequence: number } | null;
    };

/** Decides the move of the team to `tier` at `nowMs` (see {@link TierChange}). Errors: CONFLICT (team deleted). */
export function decideTierChange(teamId: string, read: BillingRead, tier: BillingTier, nowMs: number): TierChange {
  const previous = tierOf(read.team);
  if (read.team.deleted_at) throw new ProblemError('CONFLICT', `Team ${teamId} was deleted.`);
  if (previous === tier) return { kind: 'unchanged', account: accountOf(teamId, read, nowMs) };
  const startsPaidPeriod = TIER_PRICES[previous] === 0 && TIER_PRICES[tier] > 0;
  const next: StoredBilling = startsPaidPeriod ? { anchor_at: isoTime(nowMs) } : {};
  if (startsPaidPeriod) next.invoice_sequence = (read.billing.invoice_sequence ?? 0) + 1;
  const after: BillingRead = { team: { ...read.team, [TIER_ATTRIBUTE]: tier }, billing: { ...read.billing, ...next } };
  const account = accountOf(teamId, after, nowMs);
  const paidPeriod = startsPaidPeriod ? { ...periodContaining(nowMs, nowMs), sequence: next.invoice_sequence! } : null;
  return { kind: 'changed', previous, next, account, paidPeriod };
}

/**
 * An open invoice paid: the invoice `paid` in full, off the unpaid list; when it was the last unpaid one,
 * the status back to `ok`, and `ends` names what that ends (`grace_period`: recovered; `lockdown`: lifted).
 */
export interface InvoicePaid {
  paid: BillingInvoice;
  next: StoredBilling;
  account: BillingAccount;
  ends: 'grace_period' | 'lockdown' | null;
}

/** Decides `invoice` paid in full at `nowMs` (see {@link InvoicePaid}). */
export function decideInvoicePaid(
  teamId: string,
  read: BillingRead,
  invoice: BillingInvoice,
  nowMs: number,
): InvoicePaid {
  const nowIso = isoTime(nowMs);
  const paid: BillingInvoice = {
    ...invoice,
    status: 'paid',
    amount_paid: invoice.amount_due,
    paid_at: nowIso,
    updated_at: nowIso,
  };
  const pastDue = (read.billing.past_due_invoice_ids ?? []).filter((id) => id !== invoice.id);
  const status = read.billing.status ?? 'ok';
  const settled = pastDue.length === 0 && status !== 'ok';
  const next: StoredBilling = {
    past_due_invoice_ids: pastDue,
    ...(settled ? { status: 'ok', grace_period_ends_at: null, locked_at: null } : {}),
  };
  const account = accountOf(teamId, { team: read.team, billing: { ...read.billing, ...next } }, nowMs);
  const ends = !settled ? null : status === 'grace_period' ? 'grace_period' : status === 'locked' ? 'lockdown' : null;
  return { paid, next, account, ends };
}

/**
 * A failed payment of an open invoice: its `attempt_count` + 1 and the provider's `reason`, on the unpaid
 * list; a team in good standing enters the grace period ending {@link GRACE_PERIOD_MS} from now
 * (`graceEndsAt`, ISO), a team in grace or locked keeps its status (`graceEndsAt` null).
 */
export interface InvoicePaymentFailed {
  failed: BillingInvoice;
  next: StoredBilling;
  account: BillingAccount;
  graceEndsAt: string | null;
}

/**
 * Decides a failed payment of `invoice` at `nowMs` for `reason` (null: "The payment failed.";
 * {@link InvoicePaymentFailed}).
 */
export function decideInvoicePaymentFailed(
  teamId: string,
  read: BillingRead,
  invoice: BillingInvoice,
  reason: string | null,
  nowMs: number,
): InvoicePaymentFailed {
  const failed: BillingInvoice = {
    ...invoice,
    attempt_count: invoice.attempt_count + 1,
    last_payment_error: reason ?? 'The payment failed.',
    updated_at: isoTime(nowMs),
  };
  const pastDue = [...new Set([...(read.billing.past_due_invoice_ids ?? []), invoice.id])];
  const startsGrace = (read.billing.status ?? 'ok') === 'ok';
  const graceEnd = isoTime(nowMs + GRACE_PERIOD_MS);
  const next: StoredBilling = {
    past_due_invoice_ids: pastDue,
    ...(startsGrace ? { status: 'grace_period', grace_period_ends_at: graceEnd } : {}),
  };
  const account = accountOf(teamId, { team: read.team, billing: { ...read.billing, ...next } }, nowMs);
  return { failed, next, account, graceEndsAt: startsGrace ? graceEnd : null };
}

/**
 * The `billing.period` deadline due at `dueAt` (ISO): `drop` it for a team that is gone, deleted or on a
 * free tier; else `invoice` the period starting at `dueAt` at the team's tier, with the invoice's
 * sequence number, and move the deadline to the period's end.
 */
export type BillingPeriodStep =
  | { kind: 'drop' }
  | {
      kind: 'invoice';
      tier: BillingTier;
      period: { startMs: number; endMs: number };
      next: StoredBilling & { invoice_sequence: number };
      account: BillingAccount;
    };

/** Decides the `billing.period` deadline due at `dueAt` (ISO), `team` undefined if gone ({@link BillingPeriodStep}). */
export function decideBillingPeriod(
  teamId: string,
  team: StoredBillingTeam | undefined,
  billing: StoredBilling,
  dueAt: string,
  nowMs: number,
): BillingPeriodStep {
  const tier = team ? tierOf(team) : DEFAULT_TIER;
  if (!team || team.deleted_at || TIER_PRICES[tier] === 0) return { kind: 'drop' };
  const period = periodContaining(anchorOf({ team, billing }), Date.parse(dueAt));
  const next = { invoice_sequence: (billing.invoice_sequence ?? 0) + 1 };
  const account = accountOf(teamId, { team, billing: { ...billing, ...next } }, nowMs);
  return { kind: 'invoice', tier, period, next, account };
}

/**
 * The `billing.grace_period` deadline: `drop` it when the team is gone or no longer in grace (it paid);
 * else `lock` the team now, naming how many invoices are unpaid.
 */
export type GracePeriodEnd =
  { kind: 'drop' } | { kind: 'lock'; next: StoredBilling; account: BillingAccount; unpaid: number };

/** Decides the `billing.grace_period` deadline at `nowMs`, `team` undefined if gone ({@link GracePeriodEnd}). */
export function decideGracePeriodEnd(
  teamId: string,
  team: StoredBillingTeam | undefined,
  billing: StoredBilling,
  nowMs: number,
): GracePeriodEnd {
  if (!team || billing.status !== 'grace_period') return { kind: 'drop' };
  const next: StoredBilling = { status: 'locked', grace_period_ends_at: null, locked_at: isoTime(nowMs) };
  const account = accountOf(teamId, { team, billing: { ...billing, ...next } }, nowMs);
  return { kind: 'lock', next, account, unpaid: billing.past_due_invoice_ids?.length ?? 0 };
}
