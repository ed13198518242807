import * as z from '../../schemas/zod.js';
import { defineEvent } from '../define-facts.js';
import { BILLING_TIERS, BillingAccount, BillingInvoice, USAGE_METRICS } from './schema.js';

const timestamp = () => z.iso.datetime().check(z.describe('ISO 8601 UTC timestamp.'));
const billingData = z.object({ billing_account: BillingAccount });
const billingInvoiceData = z.object({ billing_account: BillingAccount, invoice: BillingInvoice });

/** The creator's own billing: webhook events (`billing.*`, DESIGN D20). */
export const billingEvents = [
  defineEvent(
    'billing.invoice_created',
    'billing-invoice:view',
    false,
    billingInvoiceData,
    'An invoice for the team\u2019s own tier was issued.',
  ),
  defineEvent(
    'billing.invoice_paid',
    'billing-invoice:view',
    false,
    billingInvoiceData,
    'An invoice for the team\u2019s own tier was paid.',
  ),
  defineEvent(
    'billing.payment_failed',
    'billing:view',
    false,
    z.object({
      billing_account: BillingAccount,
      invoice: BillingInvoice,
      attempt_count: z
        .number()
        .check(z.int(), z.positive(), z.describe('Failed payment attempts of this invoice so far.')),
      next_attempt_at: z
        .nullable(timestamp())
        .check(z.describe('When payment is tried again automatically; null when the operator records attempts.')),
    }),
    'Paying the team\u2019s own invoice failed.',
  ),
  defineEvent(
    'billing.tier_changed',
    'billing:view',
    false,
    z.object({ billing_account: BillingAccount, previous_tier: z.enum(BILLING_TIERS) }),
    'The team\u2019s own tier changed.',
  ),
  defineEvent(
    'billing.grace_period_started',
    'billing:view',
    false,
    z.object({ billing_account: BillingAccount, grace_period_ends_at: timestamp() }),
    'An unpaid invoice started a grace period; the team keeps full access until it ends.',
  ),
  defineEvent(
    'billing.grace_period_ended',
    'billing:view',
    false,
    z.object({ billing_account: BillingAccount, outcome: z.enum(['recovered', 'locked']) }),
    'The grace period ended, by payment or by lockdown.',
  ),
  defineEvent(
    'billing.lockdown_started',
    'billing:view',
    false,
    z.object({ billing_account: BillingAccount, reason: z.string() }),
    'The team was locked down for non-payment; writes are blocked until the balance is paid.',
  ),
  defineEvent('billing.lockdown_lifted', 'billing:view', false, billingData, 'The team\u2019s lockdown was lifted.'),
  defineEvent(
    'billing.usage_limit_reached',
    'billing:view',
    false,
    z.object({
      billing_account: BillingAccount,
      metric: z.enum(USAGE_METRICS),
      usage: z.number().check(z.int(), z.nonnegative(), z.describe('The count when the limit refused a create.')),
      limit: z.number().check(z.int(), z.nonnegative()),
    }),
    'The team reached a usage limit of its tier.',
  ),
] as const;
