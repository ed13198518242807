import type Stripe from 'stripe';
import type { CheckoutSessionRequest, CheckoutSessionResult } from './payment-provider.js';

/**
 * The Stripe Checkout Session of a plan's checkout (DESIGN D26, D33), pure: the parameters sent and the answer read.
 * The call itself (key, idempotency key, failures) is the Stripe adapter's (stripe.ts).
 */

/**
 * The session's metadata key that says how many trial days the checkout started ("0": none): the completed session's
 * event does not carry its subscription's trial, and `trial: false` sells a trial plan without one.
 */
export const CHECKOUT_TRIAL_DAYS_METADATA = 'trial_days';

/**
 * The parameters of `checkout.sessions.create` for `request`: the synced price, our metadata (project, plan, trial
 * days) on the session and its subscription or PaymentIntent, the trial (`subscription_data.trial_period_days`) and,
 * for a trial without a card (D33), `payment_method_collection: if_required` with the trial ending in cancellation when
 * no payment method was added (`trial_settings.end_behavior.missing_payment_method: cancel`); a promotion code as the
 * session's discount (Stripe bills it) and its code in the metadata, else Stripe's code field when the plan allows it.
 */
export function checkoutSessionParams(request: CheckoutSessionRequest): Stripe.Checkout.SessionCreateParams {
  const metadata = {
    project_id: request.project_id,
    plan_id: request.plan_id,
    ...(request.promotion_code ? { promotion_code: request.promotion_code } : {}),
  };
  const trial = request.mode === 'subscription' && request.trial_days > 0;
  const cardless = trial && !request.trial_payment_method_required;
  return {
    mode: request.mode,
    line_items: [{ price: request.provider_price_id, quantity: 1 }],
    metadata: { ...metadata, [CHECKOUT_TRIAL_DAYS_METADATA]: String(trial ? request.trial_days : 0) },
    ...(request.mode === 'subscription'
      ? {
          subscription_data: {
            metadata,
            ...(trial ? { trial_period_days: request.trial_days } : {}),
            ...(cardless ? { trial_settings: { end_behavior: { missing_payment_method: 'cancel' as const } } } : {}),
          },
        }
      : { payment_intent_data: { metadata } }),
    ...(cardless ? { payment_method_collection: 'if_required' as const } : {}),
    ...(request.provider_promotion_code_id
      ? { discounts: [{ promotion_code: request.provider_promotion_code_id }] }
      : request.allow_promotion_codes
        ? { allow_promotion_codes: true }
        : {}),
    ...(request.customer_email ? { customer_email: request.customer_email } : {}),
    ...(request.client_reference_id ? { client_reference_id: request.client_reference_id } : {}),
    success_url: request.success_url,
    cancel_url: request.cancel_url,
  };
}

/** The outcome of a created session: its id, URL and expiry, or a failure when Stripe gave it no URL. */
export function checkoutSessionResult(session: Stripe.Checkout.Session): CheckoutSessionResult {
  if (!session.url)
    return {
      ok: false,
      reason: `Stripe created Checkout Session ${session.id} without a URL.`,
      code: null,
      retryable: false,
    };
  return { ok: true, id: session.id, url: session.url, expires_at: new Date(session.expires_at * 1000).toISOString() };
}
