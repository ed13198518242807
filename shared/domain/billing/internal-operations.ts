import { defineInternalOperation } from '../../operations/definition.js';
import { Uuid } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';
import { BillingAccount, BillingInvoice } from './schema.js';

/** An invoice's payment result as the operator records it: the account and the invoice after the change. */
const InvoiceResult = z.object({ billing_account: BillingAccount, invoice: BillingInvoice });

/**
 * The operator's side of a team's own billing (DESIGN D20, D22, D35): payment results recorded by the operator CLI or
 * the operator's billing Stripe hook (surface `operator`), exempt from the billing lockdown (a payment lifts it).
 */
export const billingInternalOperations = {
  markBillingInvoicePaid: defineInternalOperation({
    id: 'markBillingInvoicePaid',
    summary:
      'Record that an open invoice of the team’s own tier was paid; the last unpaid one ends a grace period and lifts a lockdown.',
    tag: 'Billing',
    ability: 'billing:update',
    teamWide: true,
    body: z.strictObject({ invoice_id: Uuid }),
    output: InvoiceResult,
    events: ['billing.invoice_paid', 'billing.grace_period_ended', 'billing.lockdown_lifted'],
    write: true,
    lockdown: 'exempt',
  }),
  markBillingInvoicePaymentFailed: defineInternalOperation({
    id: 'markBillingInvoicePaymentFailed',
    summary:
      'Record a failed payment of an invoice of the team’s own tier; a team in good standing starts its 7-day grace period.',
    tag: 'Billing',
    ability: 'billing:update',
    teamWide: true,
    body: z.strictObject({
      invoice_id: Uuid,
      reason: z.optional(z.string().check(z.minLength(1), z.maxLength(500))),
    }),
    output: InvoiceResult,
    events: ['billing.payment_failed', 'billing.grace_period_started'],
    write: true,
    lockdown: 'exempt',
  }),
};
