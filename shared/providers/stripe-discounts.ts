import type Stripe from 'stripe';
import type { ProviderDiscounts, ProviderFailure } from './payment-provider.js';
import { stripeFailure } from './stripe.js';
import { stripeProductId } from './stripe-params.js';

/**
 * Stripe's discount catalogue (DESIGN D33): a coupon is created with our coupon id as its Stripe id and limited to the
 * plans' Products; promotion codes are created under it; archiving deletes the coupon (Stripe keeps the discounts it
 * already applied) and deactivates the codes. Stripe bills every discount: we never compute a Stripe-billed amount.
 */

/** Epoch SECONDS of an ISO 8601 time (Stripe's timestamps). */
const stripeTime = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** The Stripe discount methods over `clientOf` (the project's client, or why there is none). */
export function stripeDiscounts(
  clientOf: (target: { team_id: string; project_id: string }) => Promise<Stripe | ProviderFailure>,
): ProviderDiscounts {
  return {
    async createCoupon(request) {
      const client = await clientOf(request);
      if ('ok' in client) return client;
      try {
        await client.coupons.create(
          {
            id: request.coupon_id,
            name: request.name,
            ...(request.percent_off !== null
              ? { percent_off: request.percent_off }
              : { amount_off: request.amount_off ?? 0, currency: (request.currency ?? '').toLowerCase() }),
            duration: request.duration,
            ...(request.duration_in_months !== null ? { duration_in_months: request.duration_in_months } : {}),
            ...(request.max_redemptions !== null ? { max_redemptions: request.max_redemptions } : {}),
            ...(request.redeem_by ? { redeem_by: stripeTime(request.redeem_by) } : {}),
            ...(request.plan_ids.length > 0 ? { applies_to: { products: request.plan_ids.map(stripeProductId) } } : {}),
            metadata: { project_id: request.project_id, coupon_id: request.coupon_id },
          },
          { idempotencyKey: `coupon-${request.coupon_id}` },
        );
        return { ok: true };
      } catch (error) {
        // A retry after a lost answer: the coupon with our id is already there.
        if (error instanceof client.errors.StripeError && error.code === 'resource_already_exists') return { ok: true };
        return stripeFailure(client.errors, error, 'create the coupon');
      }
    },

    async createPromotionCode(request) {
      const client = await clientOf(request);
      if ('ok' in client) return client;
      try {
        const created = await client.promotionCodes.create(
          {
            promotion: { type: 'coupon', coupon: request.coupon_id },
            code: request.code,
            ...(request.max_redemptions !== null ? { max_redemptions: request.max_redemptions } : {}),
            ...(request.expires_at ? { expires_at: stripeTime(request.expires_at) } : {}),
            ...(request.first_time_transaction ? { restrictions: { first_time_transaction: true } } : {}),
            metadata: { project_id: request.project_id, coupon_id: request.coupon_id },
          },
          { idempotencyKey: request.idempotency_key },
        );
        return { ok: true, provider_promotion_code_id: created.id };
      } catch (error) {
        return stripeFailure(client.errors, error, 'create the promotion code');
      }
    },

    async archive(request) {
      const client = await clientOf(request);
      if ('ok' in client) return client;
      try {
        for (const id of request.provider_promotion_code_ids) await client.promotionCodes.update(id, { active: false });
        if (request.coupon_id) await client.coupons.del(request.coupon_id);
        return { ok: true };
      } catch (error) {
        // Deleted before (a retry): nothing left to stop.
        if (error instanceof client.errors.StripeError && error.code === 'resource_missing') return { ok: true };
        return stripeFailure(client.errors, error, 'archive the coupon');
      }
    },
  };
}
