import type Stripe from 'stripe';
import type { PlanForSync, ProviderSubscriptionChange } from './payment-provider.js';

/**
 * The parameters the Stripe adapter sends for plans and subscription changes (DESIGN D22, D27), pure: product and price
 * ids, the Price a plan's version needs, and a subscription change's update. The calls are the adapter's (stripe.ts).
 */

/** The Stripe Product id of a plan (deterministic, so a repeated first sync finds the product it created). */
export function stripeProductId(planId: string): string {
  return `svc_plan_${planId}`;
}

/**
 * The `lookup_key` of a plan's Price for one price version (moved to the newest Price of that version with
 * `transfer_lookup_key`).
 */
function stripePriceLookupKey(planId: string, priceVersion: number): string {
  return `svc_plan_${planId}_v${priceVersion}`;
}

/** The Price a plan's current version needs: what makes two Prices the same price. */
export function desiredPrice(plan: PlanForSync, productId: string): Stripe.PriceCreateParams {
  return {
    product: productId,
    currency: plan.currency.toLowerCase(),
    unit_amount: plan.amount,
    ...(plan.interval === 'one_time'
      ? {}
      : { recurring: { interval: plan.interval, interval_count: plan.interval_count } }),
    lookup_key: stripePriceLookupKey(plan.plan_id, plan.price_version),
    transfer_lookup_key: true,
    metadata: { plan_id: plan.plan_id, project_id: plan.project_id, price_version: String(plan.price_version) },
  };
}

/**
 * True when the stored Price `price` already is the price `wanted` describes (Prices are immutable: any difference is a
 * new Price).
 */
export function samePrice(price: Stripe.Price, wanted: Stripe.PriceCreateParams): boolean {
  const product = typeof price.product === 'string' ? price.product : price.product.id;
  const recurring = wanted.recurring ?? null;
  return (
    product === wanted.product &&
    price.currency === wanted.currency &&
    price.unit_amount === wanted.unit_amount &&
    price.metadata?.price_version === wanted.metadata?.price_version &&
    (recurring === null
      ? price.recurring === null
      : price.recurring?.interval === recurring.interval &&
        price.recurring?.interval_count === (recurring.interval_count ?? 1))
  );
}

/**
 * The `subscriptions.update` parameters of a change (DESIGN D27), or null for `cancel` (`subscriptions.cancel`).
 * Pausing voids the invoices of the pause (`pause_collection.behavior: void`): a paused member neither pays
 * nor owes. The change's kind goes into `metadata.last_change` so the echo can be recognised in Stripe's logs.
 */
export function stripeSubscriptionUpdate(
  change: ProviderSubscriptionChange,
  subscriptionId: string,
  currentItemId: string | null,
): Stripe.SubscriptionUpdateParams | null {
  const metadata = { subscription_id: subscriptionId, last_change: change.kind };
  switch (change.kind) {
    case 'cancel':
      return null;
    case 'cancel_at_period_end':
      return { cancel_at_period_end: true, metadata };
    case 'keep':
      return { cancel_at_period_end: false, metadata };
    case 'pause':
      return { pause_collection: { behavior: 'void' }, metadata };
    case 'resume_collection':
      return { pause_collection: '', metadata };
    case 'change_price':
      return {
        items: [
          currentItemId ? { id: currentItemId, price: change.provider_price_id } : { price: change.provider_price_id },
        ],
        proration_behavior: change.proration_behavior,
        metadata,
      };
  }
}
