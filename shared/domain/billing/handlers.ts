import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { billingModule } from './operations.js';
import { changeTier } from './changes.js';
import { getBillingInvoice as readInvoice, getBillingOverview, listBillingInvoices as listInvoices } from './reads.js';

type Operations = typeof billingModule.operations;

/** `GET /v1/billing`: tier, limits, usage (the team item's counters), status and current period (one BatchGetItem). */
export const getBilling: OperationHandler<Operations['getBilling']> = async (_input, { runtime, principal }) =>
  getBillingOverview(runtime, principal.teamId);

/** `GET /v1/billing/invoices`: the team's invoices, newest first. */
export const listBillingInvoices: OperationHandler<Operations['listBillingInvoices']> = async (
  input,
  { runtime, principal },
) => listInvoices(runtime.store, principal.teamId, input);

/** `GET /v1/billing/invoices/{id}`: one invoice of the team (NOT_FOUND for another team's). */
export const getBillingInvoice: OperationHandler<Operations['getBillingInvoice']> = async (
  input,
  { runtime, principal },
) => readInvoice(runtime.store, principal.teamId, input.id);

/**
 * `POST /v1/billing/tier`: moves the team to another tier (`billing.tier_changed`; a first paid period invoices at
 * once).
 */
export const changeBillingTier: OperationHandler<Operations['changeBillingTier']> = async (
  input,
  { runtime, principal },
) => changeTier(runtime, principal.teamId, input.tier);

/** Every handler of the billing module. */
export const billingHandlers = {
  getBilling,
  listBillingInvoices,
  getBillingInvoice,
  changeBillingTier,
} satisfies HandlersOf<typeof billingModule>;
