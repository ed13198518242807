import { createHash } from 'node:crypto';
import type Stripe from 'stripe';
import { CreatePlanRequest } from '../plans/schema.js';
import { CreateSubscriberRequest } from '../subscribers/schema.js';
import type { ImportedState } from '../subscriptions/imported.js';

/**
 * The pure part of a Stripe import (DESIGN D34): what plan a Stripe Price makes, what subscriber a Customer makes, and
 * the D15 state of a Stripe Subscription (status and periods as Stripe has them) — or why the object is skipped.
 */

/** An object the import leaves out, and why. */
export interface Skip {
  skip: string;
}

/** Stripe's unix SECONDS as epoch milliseconds (null stays null). */
const msOf = (seconds: number | null | undefined): number | null =>
  seconds === null || seconds === undefined ? null : seconds * 1000;

/** The Product of a Price (expanded or an id). */
function productOf(price: Stripe.Price): { id: string; name: string | null } {
  const product = price.product;
  if (typeof product === 'string') return { id: product, name: null };
  return { id: product.id, name: 'name' in product ? product.name : null };
}

/**
 * The plan a recurring Stripe Price makes: named after its Product (and nickname), its amount, currency, interval and
 * trial; skipped: one-time, tiered or metered prices and intervals D15 has no plan for (daily). Also its Product id.
 */
export function planOfPrice(price: Stripe.Price): { request: CreatePlanRequest; productId: string } | Skip {
  if (!price.recurring) return { skip: 'one-time price: a plan made from it would have no access length' };
  if (price.unit_amount === null)
    return { skip: `price with billing scheme ${price.billing_scheme} has no unit amount` };
  if (price.recurring.usage_type === 'metered') return { skip: 'metered price: no fixed amount per period' };
  if (price.recurring.interval === 'day') return { skip: 'daily interval: plans bill weekly, monthly or yearly' };
  const product = productOf(price);
  const name = [product.name, price.nickname].filter(Boolean).join(' \u2013 ') || price.id;
  const parsed = CreatePlanRequest.safeParse({
    name: name.slice(0, 100),
    amount: price.unit_amount,
    currency: price.currency.toUpperCase(),
    interval: price.recurring.interval,
    interval_count: price.recurring.interval_count,
    trial_days: price.recurring.trial_period_days ?? 0,
  });
  if (!parsed.success)
    return { skip: `the price makes no valid plan: ${parsed.error.issues.map((issue) => issue.message).join('; ')}` };
  return { request: parsed.data, productId: product.id };
}

/**
 * The id of the plan a project's import makes of Stripe price `priceId`: the same on every try (UUID-shaped, from a
 * SHA-256), so two workers of one page cannot both create it — the second one's conditional put fails.
 */
export function importedPlanId(projectId: string, priceId: string): string {
  const hex = createHash('sha256').update(`stripe-import:${projectId}:${priceId}`).digest('hex');
  const variant = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** The subscriber a Customer makes: e-mail and name when valid (else left out), the Stripe customer id. */
export function subscriberOfCustomer(customer: Stripe.Customer): CreateSubscriberRequest {
  const wanted = {
    email: customer.email ?? undefined,
    display_name: customer.name ?? undefined,
    provider_customer_id: customer.id,
  };
  for (const candidate of [wanted, { ...wanted, email: undefined }, { provider_customer_id: customer.id }]) {
    const parsed = CreateSubscriberRequest.safeParse(candidate);
    if (parsed.success) return parsed.data;
  }
  return { consent: false };
}

/** Whether a Stripe Price is archived at Stripe (`active: false`): its plan is made closed, and only when used. */
export function isInactivePrice(price: Pick<Stripe.Price, 'active'>): boolean {
  return price.active === false;
}

/** Why a price has no plan: the reason it makes none, or none made (a refusal or a failed creation). */
function noPlanReason(price: Stripe.Price): string {
  const made = planOfPrice(price);
  return `price ${price.id} has no plan${'skip' in made ? `: ${made.skip}` : ''}`;
}

/** The one item of a Stripe Subscription whose price has a plan, and the items left out with the reason. */
export interface PlanItem {
  item: Stripe.SubscriptionItem;
  ignored: { item: Stripe.SubscriptionItem; reason: string }[];
}

/**
 * The item of a Stripe Subscription that joins a plan: exactly one item's price must have one (`hasPlan`); the other
 * items (metered or one-time add-ons, prices without a plan) are ignored, each with the reason its price makes no plan.
 * Skipped with `multiple_plans` when several items have a plan, `no_plan` when none has.
 */
export function planItemOf(
  subscription: Stripe.Subscription,
  hasPlan: (price: Stripe.Price) => boolean,
): PlanItem | Skip {
  const items = subscription.items.data;
  const planItems = items.filter((item) => hasPlan(item.price));
  if (planItems.length > 1)
    return {
      skip: `multiple_plans: the prices ${planItems.map((item) => item.price.id).join(', ')} each have a plan, and a subscription joins one plan`,
    };
  const [item] = planItems;
  if (!item) return { skip: `no_plan: ${items.map((other) => noPlanReason(other.price)).join('; ') || 'no items'}` };
  const ignored = items
    .filter((other) => other !== item)
    .map((other) => ({ item: other, reason: noPlanReason(other.price) }));
  return { item, ignored };
}

/**
 * The D15 state of a Stripe Subscription, as Stripe has it: trialing, active, past_due, unpaid; cancelling at period
 * end (or at `cancel_at`) → pending_cancellation; paused (status, or `pause_collection`) → paused. Periods from the
 * plan item (`planItem`, see {@link planItemOf}; Stripe's current API) or the subscription (older ones). Skipped: ended
 * (canceled, incomplete_expired) and never started (incomplete: the first payment never succeeded) subscriptions, and,
 * without `planItem`, those of several items.
 */
export function stateOfSubscription(
  subscription: Stripe.Subscription,
  planItem?: Stripe.SubscriptionItem,
): ImportedState | Skip {
  const status = subscription.status;
  if (status === 'canceled' || status === 'incomplete_expired') return { skip: `ended at Stripe (${status})` };
  if (status === 'incomplete') return { skip: 'incomplete at Stripe: its first payment never succeeded' };
  if (!planItem && subscription.items.data.length !== 1)
    return { skip: `${subscription.items.data.length} items: only single-price subscriptions are imported` };
  const item = (planItem ?? subscription.items.data[0]) as Stripe.SubscriptionItem & Record<string, unknown>;
  const legacy = subscription as unknown as Record<string, number | null | undefined>;
  const periodStartMs = msOf(item.current_period_start ?? legacy.current_period_start);
  const periodEndMs = msOf(item.current_period_end ?? legacy.current_period_end);
  const cancelling = subscription.cancel_at_period_end || subscription.cancel_at !== null;
  const paused = status === 'paused' || subscription.pause_collection !== null;
  const imported =
    status === 'unpaid'
      ? 'unpaid'
      : paused
        ? 'paused'
        : status === 'past_due'
          ? 'past_due'
          : cancelling
            ? 'pending_cancellation'
            : status === 'trialing'
              ? 'trialing'
              : 'active';
  return {
    status: imported,
    startMs: msOf(subscription.start_date) ?? msOf(subscription.created)!,
    periodStartMs,
    periodEndMs,
    trialEndMs: msOf(subscription.trial_end),
    cancelAtPeriodEnd: cancelling,
  };
}
