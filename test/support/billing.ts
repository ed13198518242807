/**
 * Billing helpers shared by the billing, error-catalogue and isolation tests (DESIGN D20): a team locked
 * for non-payment the way production gets there — a paid tier with its first invoice, a failed payment
 * (the 7-day grace period), then the grace period's deadline applied at its due time.
 */
import { manualClock } from '../../shared/clock.js';
import { changeTier, markInvoicePaymentFailed } from '../../shared/domain/billing/changes.js';
import { applyGracePeriodDeadline } from '../../shared/domain/billing/deadlines.js';
import { listBillingInvoices } from '../../shared/domain/billing/reads.js';
import type { BillingInvoice } from '../../shared/domain/billing/schema.js';
import type { Runtime } from '../../shared/runtime.js';

/**
 * Locks team `teamId`: moves it to `pro` (which issues its first invoice), fails that invoice's payment,
 * and applies its `billing.grace_period` deadline with a clock at the grace period's end (the runtime's
 * own clock is not moved). Resolves with the unpaid invoice.
 */
export async function lockTeam(runtime: Runtime, teamId: string): Promise<BillingInvoice> {
  await changeTier(runtime, teamId, 'pro');
  const [invoice] = (await listBillingInvoices(runtime.store, teamId, { limit: 1 })).data;
  const { billing_account: account } = await markInvoicePaymentFailed(runtime, teamId, invoice.id, 'card_declined');
  const dueAt = account.grace_period_ends_at!;
  await applyGracePeriodDeadline(
    { ...runtime, clock: manualClock(Date.parse(dueAt)) },
    { teamId, kind: 'billing.grace_period', subjectId: teamId, projectId: null, dueAt },
  );
  return invoice;
}
