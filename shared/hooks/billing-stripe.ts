import type Stripe from 'stripe';
import { operatorPrincipal } from '../auth/operator.js';
import { billingInternalHandlers } from '../domain/billing/internal-handlers.js';
import { billingInternalOperations } from '../domain/billing/internal-operations.js';
import { billingStripeWebhookSecretOf } from '../integrations.js';
import { ProblemError } from '../errors.js';
import { logger } from '../logger.js';
import { anyHandler } from '../operations/handler.js';
import type { Runtime } from '../runtime.js';
import type { RequestScope } from '../store/request-scope.js';
import { isUuid, type HookAnswer, type HookHandler } from './hook.js';
import { runHookOperation } from './hook-operation.js';
import { applyOnce, type HookReceiptRef } from './receipts.js';
import { BILLING_STRIPE_HOOK_ROUTE } from './routes.js';
import { STRIPE_SIGNATURE_REFUSED, verifiedStripeEvent } from './stripe-signature.js';

/**
 * The operator's billing hook, `POST /hooks/billing/stripe` (DESIGN D20, D22): the operator's Stripe account reports
 * the teams' invoice payments. `Stripe-Signature` (300 s) with `BILLING_STRIPE_WEBHOOK_SECRET` (AWS: the `_ARN`
 * secret); none or not `whsec_...` → 400, Secrets Manager failing → 500. `invoice.paid` / `invoice.payment_failed`
 * naming `team_id` and `invoice_id` in `metadata` run the operations `markBillingInvoicePaid` /
 * `markBillingInvoicePaymentFailed` as the operator (surface `operator`, as the CLI's), idempotent on the event id;
 * anything else or refused → 200 `ignored`. 500 when not stored (Stripe retries).
 */

/** The project id the receipts are filed under (operator billing belongs to no project). */
const NO_PROJECT = 'operator';

/** Why an invoice's payment failed, as far as the event tells (Stripe's error code; never card data), or null. */
function failureReason(invoice: Stripe.Invoice): string | null {
  return invoice.last_finalization_error?.code ?? null;
}

/**
 * Records `invoice`'s payment result for team `teamId` through the pipeline as the operator, its receipt in `within`:
 * null once recorded, or why not (NOT_FOUND: no such team or invoice; CONFLICT: the invoice's state does not allow it).
 * Throws when the change was not stored.
 */
async function recordPaymentResult(
  runtime: Runtime,
  event: Stripe.InvoicePaidEvent | Stripe.InvoicePaymentFailedEvent,
  target: { teamId: string; invoiceId: string },
  within: RequestScope,
): Promise<string | null> {
  const principal = await operatorPrincipal(runtime.store, target.teamId);
  if (!principal) return `NOT_FOUND: No team ${target.teamId}.`;
  const paid = event.type === 'invoice.paid';
  const reason = paid ? null : failureReason(event.data.object);
  try {
    await runHookOperation(runtime, {
      principal,
      operation: paid
        ? billingInternalOperations.markBillingInvoicePaid
        : billingInternalOperations.markBillingInvoicePaymentFailed,
      handler: paid
        ? anyHandler(billingInternalHandlers.markBillingInvoicePaid)
        : anyHandler(billingInternalHandlers.markBillingInvoicePaymentFailed),
      input: { invoice_id: target.invoiceId, ...(reason ? { reason } : {}) },
      requestId: `billing-stripe:${event.id}`,
      surface: 'operator',
      within,
    });
    return null;
  } catch (error) {
    if (error instanceof ProblemError && (error.code === 'NOT_FOUND' || error.code === 'CONFLICT'))
      return `${error.code}: ${error.detail}`;
    throw error;
  }
}

/**
 * Handles one request to `POST /hooks/billing/stripe` (see the module comment): `signature` the `Stripe-Signature`
 * header, `body` the raw body. Answers 200 (`{ received: true }`, plus `duplicate` or `ignored`), 400 (any refusal) or
 * 500 (not stored, or the signing secret could not be read). Never throws; never logs or returns the secret.
 */
async function handleBillingStripeEvent(
  runtime: Runtime,
  request: { signature: string | undefined; body: string },
): Promise<HookAnswer> {
  try {
    const event = await verifiedStripeEvent(
      request.body,
      request.signature,
      await billingStripeWebhookSecretOf(runtime),
      runtime.clock.nowMs(),
    );
    if (!event) return STRIPE_SIGNATURE_REFUSED;
    const ignore = (reason: string): HookAnswer => {
      logger.info('billing stripe event ignored', { event_id: event.id, event_type: event.type, reason });
      return { status: 200, body: { received: true, ignored: reason } };
    };
    if (event.type !== 'invoice.paid' && event.type !== 'invoice.payment_failed')
      return ignore(`${event.type} is not mapped`);
    const invoice = event.data.object;
    const teamId = invoice.metadata?.team_id;
    const invoiceId = invoice.metadata?.invoice_id;
    if (!isUuid(teamId) || !isUuid(invoiceId))
      return ignore('the invoice has no metadata.team_id and metadata.invoice_id');
    const receipt: HookReceiptRef = {
      teamId: teamId.toLowerCase(),
      source: BILLING_STRIPE_HOOK_ROUTE.source,
      projectId: NO_PROJECT,
      providerEventId: event.id,
    };
    let refused: string | null = null;
    const done = await applyOnce(
      runtime.store,
      receipt,
      () => runtime.clock.nowMs(),
      async (scope) => {
        refused = await recordPaymentResult(
          runtime,
          event,
          { teamId: receipt.teamId, invoiceId: invoiceId.toLowerCase() },
          scope,
        );
      },
    );
    if (done === 'duplicate') return { status: 200, body: { received: true, duplicate: true } };
    return refused ? ignore(refused) : { status: 200, body: { received: true } };
  } catch (error) {
    logger.error('billing stripe event not processed', { error: error instanceof Error ? error.name : 'unknown' });
    return { status: 500, body: { error: 'The event was not stored; send it again.' } };
  }
}

/** The billing hook's {@link HookHandler}: the signature from `Stripe-Signature`. */
export const billingStripeHook: HookHandler = (runtime, request) =>
  handleBillingStripeEvent(runtime, { signature: request.headers['stripe-signature'], body: request.body });
