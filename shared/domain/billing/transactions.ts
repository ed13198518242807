import { isoTime } from '../../clock.js';
import type { Deadline } from '../../deadlines/deadline.js';
import { newUuid } from '../../ids.js';
import { billingStore } from '../../store/billing.js';
import type { Transaction } from '../../store/unit-of-work.js';
import { ConcurrentChange } from '../roles/policy.js';
import { GRACE_DEADLINE, PERIOD_DEADLINE } from './account.js';
import type { StoredBilling } from './record.js';
import { BILLING_CURRENCY, TIER_PRICES, type BillingAccount, type BillingInvoice, type BillingTier } from './schema.js';

/**
 * The transaction items of billing (DESIGN D14, D20): the account's guarded change, a new invoice, an invoice's payment
 * result, the deadlines.
 */

/**
 * Writes the billing account's changed attributes in `tx`, on condition that nobody changed it since
 * `read` (its `revision`); a lost race is a {@link ConcurrentChange}, which `retryLostRaces`
 * (roles/policy.ts) runs again. Usage-limit markers are written apart (they never bump the revision).
 */
export function writeBilling(tx: Transaction, teamId: string, read: StoredBilling, next: StoredBilling): void {
  billingStore.writeAccount(
    tx,
    teamId,
    read.revision,
    next,
    () => new ConcurrentChange('The team\u2019s billing account changed meanwhile; retry.'),
  );
}

/**
 * Puts a new open invoice of `tier` for the period `[startMs, endMs)` (epoch MILLISECONDS) numbered `sequence` in `tx`
 * and emits `billing.invoice_created`; returns the invoice.
 */
export function issueInvoice(
  tx: Transaction,
  teamId: string,
  input: {
    tier: BillingTier;
    startMs: number;
    endMs: number;
    nowIso: string;
    sequence: number;
    account: BillingAccount;
  },
): BillingInvoice {
  const id = newUuid();
  const invoice: BillingInvoice = {
    id,
    team_id: teamId,
    number: `INV-${teamId.slice(0, 8).toUpperCase()}-${String(input.sequence).padStart(4, '0')}`,
    tier: input.tier,
    status: 'open',
    amount_due: TIER_PRICES[input.tier],
    amount_paid: 0,
    currency: BILLING_CURRENCY,
    period_start: isoTime(input.startMs),
    period_end: isoTime(input.endMs),
    due_at: isoTime(input.startMs),
    attempt_count: 0,
    last_payment_error: null,
    paid_at: null,
    created_at: input.nowIso,
    updated_at: input.nowIso,
  };
  billingStore.createInvoice(tx, teamId, invoice);
  tx.emit({ type: 'billing.invoice_created', projectId: null, data: { billing_account: input.account, invoice } });
  return invoice;
}

/** The `billing.period` deadline of a team, due at `dueMs` (epoch MILLISECONDS): when its next period is invoiced. */
export function periodDeadline(teamId: string, dueMs: number): Deadline {
  return { teamId, kind: PERIOD_DEADLINE, subjectId: teamId, projectId: null, dueAt: isoTime(dueMs) };
}

/** The `billing.grace_period` deadline of a team, due at `dueAt` (ISO): the end of its grace period. */
export function graceDeadline(teamId: string, dueAt: string): Deadline {
  return { teamId, kind: GRACE_DEADLINE, subjectId: teamId, projectId: null, dueAt };
}

/** The invoice update of a payment result, conditional on the invoice still being open with `attempt_count` as read. */
export function writeInvoice(tx: Transaction, teamId: string, read: BillingInvoice, next: BillingInvoice): void {
  billingStore.writeInvoicePayment(
    tx,
    teamId,
    read,
    next,
    () => new ConcurrentChange(`Invoice ${read.number} changed meanwhile; retry.`),
  );
}
