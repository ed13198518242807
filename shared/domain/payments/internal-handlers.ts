import type Stripe from 'stripe';
import { ProblemError } from '../../errors.js';
import type { InternalHandlersOf, OperationHandler } from '../../operations/handler.js';
import type { paymentsModule } from './operations.js';
import { StripeEventNotReady } from './stripe-event-context.js';
import { applyStripeEvent as apply } from './stripe-events.js';

type Operations = NonNullable<typeof paymentsModule.internal>;

/**
 * Applies a verified Stripe event of the project (D16, D22) as the hook's principal; errors as `applyStripeEvent`, but
 * an event that came before the one it depends on is CONFLICT (409: the provider sends it again later).
 */
const applyStripeEvent: OperationHandler<Operations['applyStripeEvent']> = async (input, { runtime, principal }) => {
  try {
    return await apply(runtime, principal, input.project_id, input.event as unknown as Stripe.Event);
  } catch (error) {
    if (error instanceof StripeEventNotReady) throw new ProblemError('CONFLICT', error.message);
    throw error;
  }
};

/** Every handler of the payments module's internal operations. */
export const paymentsInternalHandlers = { applyStripeEvent } satisfies InternalHandlersOf<typeof paymentsModule>;
