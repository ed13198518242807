import type { InternalHandlersOf, OperationHandler } from '../../operations/handler.js';
import { markInvoicePaid, markInvoicePaymentFailed } from './changes.js';
import { billingModule } from './operations.js';

type Operations = NonNullable<typeof billingModule.internal>;

/** The invoice paid (D20); errors as `markInvoicePaid`. */
const markBillingInvoicePaid: OperationHandler<Operations['markBillingInvoicePaid']> = async (
  input,
  { runtime, principal },
) => markInvoicePaid(runtime, principal.teamId, input.invoice_id);

/** A failed payment of the invoice (D20); errors as `markInvoicePaymentFailed`. */
const markBillingInvoicePaymentFailed: OperationHandler<Operations['markBillingInvoicePaymentFailed']> = async (
  input,
  { runtime, principal },
) => markInvoicePaymentFailed(runtime, principal.teamId, input.invoice_id, input.reason ?? null);

/** Every handler of the billing module's internal operations. */
export const billingInternalHandlers = {
  markBillingInvoicePaid,
  markBillingInvoicePaymentFailed,
} satisfies InternalHandlersOf<typeof billingModule>;
