import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { BillingInvoice } from './schema.js';

/**
 * An invoice item as stored (in the team's partition, DESIGN D20): the public fields, the payment
 * outcome's fields (`due_at`, `attempt_count`, `last_payment_error`, `paid_at`) absent until set.
 */
const StoredInvoice = z.partial(BillingInvoice, { due_at: true, attempt_count: true, last_payment_error: true, paid_at: true });

/** Parses an invoice item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredInvoice = recordParser(entity.billingInvoice, StoredInvoice);
