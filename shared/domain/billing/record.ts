import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Timestamp } from '../../schemas/common.js';
import { BillingAccount, BillingInvoice } from './schema.js';

/**
 * An invoice item as stored (in the team's partition, DESIGN D20): the public fields, the payment
 * outcome's fields (`due_at`, `attempt_count`, `last_payment_error`, `paid_at`) absent until set.
 */
const StoredInvoice = z.partial(BillingInvoice, { due_at: true, attempt_count: true, last_payment_error: true, paid_at: true });

/** Parses an invoice item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredInvoice = recordParser(entity.billingInvoice, StoredInvoice);

/**
 * The billing account item as stored (`keys.billingAccount`, DESIGN D20): every attribute absent until
 * first written (a team that never touched billing has no item; its `revision` is read by `writeBilling`).
 * `invoice_sequence` numbers the team's invoices; `past_due_invoice_ids` are its unpaid ones.
 */
const StoredBillingAccount = z.object({
  status: z.optional(BillingAccount.shape.status),
  anchor_at: z.optional(Timestamp),
  grace_period_ends_at: z.optional(BillingAccount.shape.grace_period_ends_at),
  locked_at: z.optional(BillingAccount.shape.locked_at),
  past_due_invoice_ids: z.optional(z.array(BillingInvoice.shape.id)),
  invoice_sequence: z.optional(z.number().check(z.int(), z.nonnegative())),
  revision: z.optional(z.number().check(z.int(), z.nonnegative())),
});
/** The billing account as stored, and the attributes a billing change writes (see {@link StoredBillingAccount}). */
export type StoredBilling = z.output<typeof StoredBillingAccount>;

/** Parses a billing account item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredBillingAccount = recordParser(entity.billingAccount, StoredBillingAccount);
