import { defineModule, defineOperation } from '../../operations/definition.js';
import { IdParams } from '../../schemas/common.js';
import { billingInternalOperations } from './internal-operations.js';
import {
  BillingAccount,
  BillingInvoice,
  BillingInvoiceList,
  BillingOverview,
  ChangeTierRequest,
  ListBillingInvoicesQuery,
} from './schema.js';

/**
 * The creator's own billing operations (DESIGN D20): REST only — none of the interface's tools covers
 * billing. Team-wide, and exempt from the billing lockdown (a locked team must still see and settle its
 * bill).
 */
export const billingModule = defineModule({
  folder: 'billing',
  operations: {
    getBilling: defineOperation({
      id: 'getBilling',
      summary: 'The team’s own tier, its limits and usage, the billing status and the current period.',
      tag: 'Billing',
      ability: 'billing:view',
      teamWide: true,
      output: BillingOverview,
      events: [],
      rest: { method: 'GET', path: '/v1/billing', successStatus: 200 },
      lockdown: 'exempt',
    }),
    listBillingInvoices: defineOperation({
      id: 'listBillingInvoices',
      summary: 'List the invoices of the team’s own tier, newest first, optionally by status.',
      tag: 'Billing',
      ability: 'billing-invoice:view-any',
      teamWide: true,
      query: ListBillingInvoicesQuery,
      output: BillingInvoiceList,
      events: [],
      rest: { method: 'GET', path: '/v1/billing/invoices', successStatus: 200 },
      lockdown: 'exempt',
    }),
    getBillingInvoice: defineOperation({
      id: 'getBillingInvoice',
      summary: 'Read one invoice of the team’s own tier.',
      tag: 'Billing',
      ability: 'billing-invoice:view',
      teamWide: true,
      params: IdParams,
      output: BillingInvoice,
      events: [],
      rest: { method: 'GET', path: '/v1/billing/invoices/{id}', successStatus: 200 },
      lockdown: 'exempt',
    }),
    changeBillingTier: defineOperation({
      id: 'changeBillingTier',
      summary:
        'Move the team to another tier (emits billing.tier_changed; from free to a paid tier also billing.invoice_created, as a new monthly period starts). Allowed while the team is locked.',
      tag: 'Billing',
      ability: 'billing:update',
      teamWide: true,
      body: ChangeTierRequest,
      output: BillingAccount,
      events: ['billing.tier_changed', 'billing.invoice_created'],
      rest: { method: 'POST', path: '/v1/billing/tier', successStatus: 200 },
      lockdown: 'exempt',
    }),
  },
  internal: billingInternalOperations,
});
