import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { paymentProviderAdapters } from '../../providers/adapters.js';
import { checkoutSessionsModule } from './operations.js';

type Operations = typeof checkoutSessionsModule.operations;

/**
 * `POST /v1/plans/{id}/checkout-sessions` (D26): the provider's key derives from the request's `Idempotency-Key`. The
 * checkout is loaded on first use, a chunk of its own (D23 route budgets).
 */
export const createCheckoutSession: OperationHandler<Operations['createCheckoutSession']> = async (
  { id, ...body },
  { runtime, principal, idempotencyKey },
) =>
  (await import('./checkout.js')).startCheckout(
    runtime,
    principal,
    id,
    {
      customerEmail: body.customer_email,
      successUrl: body.success_url,
      cancelUrl: body.cancel_url,
      promotionCode: body.promotion_code,
      trial: body.trial,
      idempotencyKey,
    },
    { adapters: paymentProviderAdapters(runtime) },
  );

/** Every handler of the checkout-sessions module. */
export const checkoutSessionsHandlers = { createCheckoutSession } satisfies HandlersOf<typeof checkoutSessionsModule>;
