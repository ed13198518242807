import type Stripe from 'stripe';
import { stripeWebhooks } from '../providers/stripe-client.js';
import type { HookAnswer } from './hook.js';

/** How old a `Stripe-Signature` timestamp may be, in seconds (300-second tolerance; Stripe's own default). */
const STRIPE_SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * The one answer of a Stripe hook to every refusal (bad, missing or stale signature; unknown or unconnected project; no
 * secret).
 */
export const STRIPE_SIGNATURE_REFUSED: HookAnswer = {
  status: 400,
  body: { error: 'The Stripe-Signature header is missing or does not verify for this endpoint.' },
};

/**
 * Verified with when there is no secret to verify with (an unknown project, a project without Stripe, no
 * operator secret), so every refusal costs the same HMAC as a wrong signature. Not a secret of anyone.
 */
const NO_SECRET = 'whsec_no_secret_configured_for_this_request';

/**
 * Verifies `Stripe-Signature` over `rawBody` with the SDK (tolerance {@link STRIPE_SIGNATURE_TOLERANCE_SECONDS} at
 * `nowMs`, epoch ms; DESIGN D22) and returns the event, or null (never throws) for any failure; an undefined `secret`
 * is verified against a placeholder for constant work. The secret never appears in what it returns or logs.
 */
export async function verifiedStripeEvent(
  rawBody: string,
  signature: string | undefined,
  secret: string | undefined,
  nowMs: number,
): Promise<Stripe.Event | null> {
  const webhooks = await stripeWebhooks();
  try {
    const event = webhooks.constructEvent(
      rawBody,
      signature ?? '',
      secret ?? NO_SECRET,
      STRIPE_SIGNATURE_TOLERANCE_SECONDS,
      undefined,
      nowMs,
    );
    return secret === undefined ? null : event;
  } catch {
    return null;
  }
}
