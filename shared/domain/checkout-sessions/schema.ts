import { PromotionCodeText } from '../coupons/discount.js';
import * as z from '../../schemas/zod.js';
import { Timestamp, Uuid } from '../../schemas/common.js';
import { Email } from '../subscribers/schema.js';

/**
 * The shapes of hosted checkout sessions (DESIGN D26): the request a creator's own "Buy" button sends and the answer.
 */

/** An absolute http(s) URL the provider sends the buyer to (at most 2048 characters). */
export const RedirectUrl = z.url({ protocol: /^https?$/, hostname: z.regexes.hostname }).check(z.maxLength(2048));

/** `POST /v1/plans/{id}/checkout-sessions`: every field optional (the URLs default to the service's join pages). */
export const CreateCheckoutSessionRequest = z.strictObject({
  customer_email: z.optional(Email.check(z.describe('Pre-fills the buyer\u2019s e-mail on the checkout page.'))),
  success_url: z.optional(
    RedirectUrl.check(
      z.describe(
        'Where the buyer lands after paying (may hold `{CHECKOUT_SESSION_ID}`); default the project\u2019s welcome page `/join/{project_id}/welcome`.',
      ),
    ),
  ),
  cancel_url: z.optional(
    RedirectUrl.check(
      z.describe('Where the buyer lands after giving up; default the project\u2019s join page `/join/{project_id}`.'),
    ),
  ),
  promotion_code: z.optional(
    PromotionCodeText.check(
      z.describe(
        'A promotion code of the project to apply (Stripe bills the discount); an unknown, expired, used-up or other plan’s code is VALIDATION_FAILED naming why.',
      ),
    ),
  ),
  trial: z.optional(
    z
      .boolean()
      .check(
        z.describe(
          'Whether the checkout starts the plan\u2019s free trial (default true, when the plan has one). One trial per e-mail per project: with a `customer_email` that already had its trial, a trial checkout is CONFLICT; false sells the plan without its trial.',
        ),
      ),
  ),
});
/** The body of a checkout-session creation (see {@link CreateCheckoutSessionRequest}). */
export type CreateCheckoutSessionRequest = z.infer<typeof CreateCheckoutSessionRequest>;

/**
 * A hosted checkout for one plan: send the buyer to `url` before `expires_at`. Nothing is stored; the subscription
 * comes with the provider's completion event.
 */
export const CheckoutSession = z
  .object({
    id: z.string().check(z.describe('The provider\u2019s checkout session id (Stripe `cs_...`).')),
    url: z.string().check(z.describe('The hosted checkout page to send the buyer to.')),
    expires_at: Timestamp.check(z.describe('When the checkout page stops accepting payment.')),
    plan_id: Uuid,
    project_id: Uuid,
  })
  .register(z.globalRegistry, { id: 'CheckoutSession' });
/** A checkout session (see {@link CheckoutSession}). */
export type CheckoutSession = z.infer<typeof CheckoutSession>;
