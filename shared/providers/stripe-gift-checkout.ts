import type Stripe from 'stripe';
import type { CheckoutSessionResult, GiftCheckoutSessionRequest, ProviderFailure } from './payment-provider.js';

/**
 * A gift's Stripe Checkout Session (DESIGN D33): mode `payment`, one line item priced inline (`price_data` on the
 * plan's product, the plan's amount and currency), `metadata` (also on the PaymentIntent) naming the project, plan and
 * gift, the buyer's e-mail pre-filled. Returns the session or `failure(error, action)` of Stripe's error (the adapter's
 * mapping); one attempt.
 */
export async function createStripeGiftCheckout(
  client: Stripe,
  request: GiftCheckoutSessionRequest,
  failure: (error: unknown, action: string) => ProviderFailure,
): Promise<CheckoutSessionResult> {
  const metadata = { project_id: request.project_id, plan_id: request.plan_id, gift_id: request.gift_id };
  try {
    const session = await client.checkout.sessions.create(
      {
        mode: 'payment',
        line_items: [
          {
            quantity: 1,
            price_data: {
              product: request.provider_product_id,
              unit_amount: request.amount,
              currency: request.currency.toLowerCase(),
            },
          },
        ],
        metadata,
        payment_intent_data: { metadata, description: request.description },
        customer_email: request.buyer_email,
        success_url: request.success_url,
        cancel_url: request.cancel_url,
      },
      { idempotencyKey: request.idempotency_key },
    );
    if (!session.url)
      return {
        ok: false,
        reason: `Stripe created Checkout Session ${session.id} without a URL.`,
        code: null,
        retryable: false,
      };
    return {
      ok: true,
      id: session.id,
      url: session.url,
      expires_at: new Date(session.expires_at * 1000).toISOString(),
    };
  } catch (error) {
    return failure(error, 'create a gift\u2019s Checkout Session');
  }
}
