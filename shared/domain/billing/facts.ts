import { defineFacts } from '../define-facts.js';

/**
 * Creator billing abilities and keys (D20): tier and counters on the team item; the billing account beside it (read by
 * every creator write's lockdown ConditionCheck, written only by billing); invoices in `TEAM#<team>#BILLING_INVOICES`,
 * sorted by creation time then id.
 */
export const billingFacts = defineFacts({
  abilities: {
    category: 'billing',
    label: 'Billing',
    entries: [
      {
        value: 'billing:view',
        description: 'Read the team\u2019s own tier, usage and billing status.',
        roles: ['analyst', 'viewer'],
      },
      {
        value: 'billing:update',
        description: 'Change the team\u2019s tier and billing details.',
        roles: [],
        ownerOnly: true,
      },
      {
        value: 'billing-invoice:view-any',
        description: 'List the team\u2019s own invoices.',
        roles: ['analyst', 'viewer'],
      },
      {
        value: 'billing-invoice:view',
        description: 'Read one of the team\u2019s own invoices.',
        roles: ['analyst', 'viewer'],
      },
    ],
  },
  keys: {
    billingAccount: (teamId: string) => ({ pk: `TEAM#${teamId}`, sk: 'BILLING' }),
    billingInvoice: (teamId: string, invoiceId: string) => ({
      pk: `TEAM#${teamId}`,
      sk: `BILLING_INVOICE#${invoiceId}`,
    }),
    /** GSI partition of a team's invoices. */
    teamInvoicesIndex: (teamId: string) => `TEAM#${teamId}#BILLING_INVOICES`,
    /** GSI sort key of an invoice: its creation time (ISO 8601) then its id. */
    teamInvoicesIndexSortKey: (createdAtIso: string, invoiceId: string) => `${createdAtIso}#${invoiceId}`,
  },
  sortKeyPrefix: { billingInvoice: 'BILLING_INVOICE#' },
  entity: { billingAccount: 'billing_account', billingInvoice: 'billing_invoice' },
});
