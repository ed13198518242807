import { isoTime } from '../../clock.js';
import { scheduleDeadline } from '../../deadlines/deadline.js';
import { ProblemError } from '../../errors.js';
import { billingStore } from '../../store/billing.js';
import type { Store } from '../../store/store.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { retryLostRaces } from '../roles/policy.js';
import { GRACE_DEADLINE } from './account.js';
import { TIER_ATTRIBUTE } from './record.js';
import { decideInvoicePaid, decideInvoicePaymentFailed, decideTierChange } from './decisions.js';
import { getBillingInvoice, readBilling } from './reads.js';
import type { BillingAccount, BillingInvoice, BillingTier } from './schema.js';
import { graceDeadline, issueInvoice, periodDeadline, writeBilling, writeInvoice } from './transactions.js';

/**
 * Use cases changing the creator's billing account (D20), each one unit of work retried on a lost race. Only paid tiers
 * get invoices: free → paid starts a period at once; each period start invoices the tier of that moment (no proration).
 * Payment results come from the CLI or the billing Stripe hook.
 */

/**
 * Moves the team to `tier` (D20) with `billing.tier_changed`; free → paid starts a monthly period with its invoice;
 * existing objects beyond limits stay. Same tier: no change, no event. Errors: NOT_FOUND (no team), CONFLICT (team
 * deleted; the account kept changing).
 */
export async function changeTier(
  runtime: UnitOfWorkRuntime,
  teamId: string,
  tier: BillingTier,
): Promise<BillingAccount> {
  return retryLostRaces(async () => {
    const read = await readBilling(runtime.store, teamId);
    const nowMs = runtime.clock.nowMs();
    const change = decideTierChange(teamId, read, tier, nowMs);
    if (change.kind === 'unchanged') return change.account;
    const { account, next, paidPeriod } = change;
    return unitOfWork(runtime, teamId, (tx) => {
      billingStore.setTier(
        tx,
        teamId,
        TIER_ATTRIBUTE,
        tier,
        () => new ProblemError('CONFLICT', `Team ${teamId} was deleted.`),
      );
      writeBilling(tx, teamId, read.billing, next);
      tx.emit({
        type: 'billing.tier_changed',
        projectId: null,
        data: { billing_account: account, previous_tier: change.previous },
      });
      if (paidPeriod) {
        issueInvoice(tx, teamId, {
          tier,
          startMs: paidPeriod.startMs,
          endMs: paidPeriod.endMs,
          nowIso: isoTime(nowMs),
          sequence: paidPeriod.sequence,
          account,
        });
        scheduleDeadline(tx, periodDeadline(teamId, paidPeriod.endMs));
      }
      return account;
    });
  });
}

/** Reads an invoice for a payment result. Errors: NOT_FOUND; CONFLICT when it is paid already. */
async function openInvoice(store: Store, teamId: string, invoiceId: string, action: string): Promise<BillingInvoice> {
  const invoice = await getBillingInvoice(store, teamId, invoiceId);
  if (invoice.status !== 'open')
    throw new ProblemError(
      'CONFLICT',
      `Invoice ${invoice.number} is ${invoice.status}; only an open invoice can be ${action}.`,
    );
  return invoice;
}

/**
 * Records that an invoice was paid (operator CLI `billing invoice-paid`, or the operator's Stripe account through `POST
 * /hooks/billing/stripe`, D20, D22): the invoice becomes `paid` (`billing.invoice_paid`). When it was the team's last
 * unpaid invoice, a grace period ends as `recovered` (`billing.grace_period_ended`, its deadline removed) and a
 * lockdown is lifted (`billing.lockdown_lifted`). One transaction. Returns the account and the invoice. Errors:
 * NOT_FOUND (team or invoice), CONFLICT (the invoice is not open; a concurrent change).
 */
export async function markInvoicePaid(
  runtime: UnitOfWorkRuntime,
  teamId: string,
  invoiceId: string,
): Promise<{ billing_account: BillingAccount; invoice: BillingInvoice }> {
  return retryLostRaces(async () => {
    const [read, invoice] = await Promise.all([
      readBilling(runtime.store, teamId),
      openInvoice(runtime.store, teamId, invoiceId, 'paid'),
    ]);
    const { paid, next, account, ends } = decideInvoicePaid(teamId, read, invoice, runtime.clock.nowMs());
    return unitOfWork(runtime, teamId, (tx) => {
      writeInvoice(tx, teamId, invoice, paid);
      writeBilling(tx, teamId, read.billing, next);
      tx.emit({ type: 'billing.invoice_paid', projectId: null, data: { billing_account: account, invoice: paid } });
      if (ends === 'grace_period') {
        billingStore.deleteDeadline(tx, teamId, GRACE_DEADLINE, teamId);
        tx.emit({
          type: 'billing.grace_period_ended',
          projectId: null,
          data: { billing_account: account, outcome: 'recovered' },
        });
      }
      if (ends === 'lockdown')
        tx.emit({ type: 'billing.lockdown_lifted', projectId: null, data: { billing_account: account } });
      return { billing_account: account, invoice: paid };
    });
  });
}

/**
 * Records a failed payment (CLI or billing hook; D20, D22): `billing.payment_failed`; a team in good standing starts a
 * 7-day grace period (`billing.grace_period_started`), one in grace keeps its end. `reason`: the provider's text, never
 * card data. Errors: NOT_FOUND (team or invoice), CONFLICT (invoice paid; concurrent change).
 */
export async function markInvoicePaymentFailed(
  runtime: UnitOfWorkRuntime,
  teamId: string,
  invoiceId: string,
  reason: string | null,
): Promise<{ billing_account: BillingAccount; invoice: BillingInvoice }> {
  return retryLostRaces(async () => {
    const [read, invoice] = await Promise.all([
      readBilling(runtime.store, teamId),
      openInvoice(runtime.store, teamId, invoiceId, 'failed'),
    ]);
    const { failed, next, account, graceEndsAt } = decideInvoicePaymentFailed(
      teamId,
      read,
      invoice,
      reason,
      runtime.clock.nowMs(),
    );
    return unitOfWork(runtime, teamId, (tx) => {
      writeInvoice(tx, teamId, invoice, failed);
      writeBilling(tx, teamId, read.billing, next);
      tx.emit({
        type: 'billing.payment_failed',
        projectId: null,
        data: { billing_account: account, invoice: failed, attempt_count: failed.attempt_count, next_attempt_at: null },
      });
      if (graceEndsAt) {
        scheduleDeadline(tx, graceDeadline(teamId, graceEndsAt));
        tx.emit({
          type: 'billing.grace_period_started',
          projectId: null,
          data: { billing_account: account, grace_period_ends_at: graceEndsAt },
        });
      }
      return { billing_account: account, invoice: failed };
    });
  });
}
