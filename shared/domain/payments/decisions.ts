import { discountedAmount } from '../coupons/decisions.js';
import type { SubscriptionStatus } from '../../catalogues/subscription-statuses.js';
import { ProblemError, type FieldError } from '../../errors.js';
import { priceOf } from '../metrics/decisions.js';
import type { Plan } from '../plans/schema.js';
import type { Subscription } from '../subscriptions/schema.js';
import { ruleFor, type SubscriptionTrigger } from '../subscriptions/state-machine.js';
import type { Payment, PaymentDiscount, PaymentMismatch, RefundPaymentRequest } from './schema.js';

/**
 * The decisions of payments (DESIGN D15, D16), pure: from the payment and subscription read to the change; no store, no
 * provider.
 */

/** The statuses of a subscription that waits for its first payment (a `subscription_create` payment is for these). */
export const AWAITING_FIRST_PAYMENT: readonly SubscriptionStatus[] = ['pending', 'incomplete'];

/** VALIDATION_FAILED with `detail` and the offending fields (`errors`). */
export const invalid = (detail: string, errors: FieldError[]) =>
  new ProblemError('VALIDATION_FAILED', detail, { errors });

/**
 * The D15 trigger (`payment_succeeded` / `payment_failed`) a payment fires on its subscription where the table has a
 * row, else null (DESIGN D15, D16; pure). `subscription_create` counts only while pending/incomplete (a failed first
 * payment has no row: the 23-hour expiry still runs), a renewal only after; manual and pending payments → null.
 */
export function paymentTrigger(
  payment: Pick<Payment, 'status' | 'billing_reason'>,
  subscription: Pick<Subscription, 'status'>,
): SubscriptionTrigger | null {
  if (payment.billing_reason === 'manual') return null;
  if (payment.status !== 'succeeded' && payment.status !== 'failed') return null;
  const awaitingFirst = AWAITING_FIRST_PAYMENT.includes(subscription.status);
  if ((payment.billing_reason === 'subscription_create') !== awaitingFirst) return null;
  const trigger: SubscriptionTrigger = payment.status === 'succeeded' ? 'payment_succeeded' : 'payment_failed';
  return ruleFor(subscription.status, trigger) ? trigger : null;
}

/**
 * The amount a refund request refunds from `payment` (minor units): `input.amount`, or all that is left.
 * Errors: CONFLICT (the payment is not succeeded, naming its status); VALIDATION_FAILED (more than is left).
 */
export function refundAmount(payment: Payment, paymentId: string, input: RefundPaymentRequest): number {
  if (payment.status !== 'succeeded') {
    const why =
      payment.status === 'refunded' ? 'it is already refunded in full' : 'only a succeeded payment can be refunded';
    throw new ProblemError('CONFLICT', `Payment ${paymentId} is ${payment.status}: ${why}.`);
  }
  const left = payment.amount - payment.amount_refunded;
  const amount = input.amount ?? left;
  if (amount > left) {
    throw invalid(`Payment ${paymentId} has ${left} ${payment.currency} (minor units) left to refund.`, [
      { path: 'amount', message: `must be at most ${left}, what is left to refund` },
    ]);
  }
  return amount;
}

/** What a change of a payment decides: the payment after it and the subscription trigger it drives (or null). */
export interface PaymentDecision {
  next: Payment;
  decision: { trigger: SubscriptionTrigger } | null;
}

/**
 * The decision of settling `payment` (DESIGN D16), pure: pending → `status` (updated at `nowIso`) and the
 * D15 trigger its outcome fires on `subscription` ({@link paymentTrigger}). Errors: CONFLICT naming the
 * payment's status when it is not pending (only a pending payment can be settled).
 */
export function decideSettlement(
  payment: Payment,
  subscription: Pick<Subscription, 'status'>,
  status: 'succeeded' | 'failed',
  nowIso: string,
): PaymentDecision {
  if (payment.status !== 'pending') {
    throw new ProblemError(
      'CONFLICT',
      `Payment ${payment.id} is ${payment.status}: only a pending payment can be settled (to succeeded or failed).`,
    );
  }
  const next: Payment = { ...payment, status, updated_at: nowIso };
  const trigger = paymentTrigger(next, subscription);
  return { next, decision: trigger ? { trigger } : null };
}

/**
 * How a provider-reported payment differs from its plan's price, or null when it matches (DESIGN D16; pure). The
 * prices it may match: the subscription's price version (`price_history`), and for a renewal also the plan's current
 * price (a renewal moves the subscription to it, while the provider may still bill the price it subscribed at). A
 * currency none of them has → `currency`. With `checkAmount` (the provider says this is a first or a period's
 * invoice), less than the lowest of them in that currency → `amount_below_price`; MORE is never flagged (tax added
 * by the provider), and without `checkAmount` (a proration, a one-off invoice) any amount matches.
 */
export function priceMismatch(
  paid: Pick<Payment, 'amount' | 'currency' | 'billing_reason'>,
  subscription: Pick<Subscription, 'price_version'> & Partial<Pick<Subscription, 'discount'>>,
  plan: Pick<Plan, 'amount' | 'currency' | 'interval' | 'interval_count' | 'price_history'>,
  checkAmount: boolean,
): PaymentMismatch | null {
  const discount = subscription.discount;
  const subscribed = priceOf(plan, subscription.price_version);
  const prices = paid.billing_reason === 'renewal' ? [plan, subscribed] : [subscribed];
  // The price named when nothing matches: a renewal's is the plan's current price, a first payment's its version's.
  const named = prices[0];
  const sameCurrency = prices.filter((price) => price.currency === paid.currency);
  if (sameCurrency.length === 0)
    return { expected_amount: named.amount, expected_currency: named.currency, reason: 'currency' };
  // While the subscription carries a discount (D33), its discounted price is what it owes.
  const owed = (price: { amount: number; currency: string }) =>
    discount ? discountedAmount(price.amount, price.currency, discount) : price.amount;
  const least = Math.min(...sameCurrency.map(owed));
  if (checkAmount && paid.amount < least)
    return { expected_amount: least, expected_currency: paid.currency, reason: 'amount_below_price' };
  return null;
}

/**
 * The decision of accepting a flagged payment (`POST /v1/payments/{id}/accept`, DESIGN D16), pure: the mismatch
 * cleared (updated at `nowIso`) and the D15 trigger the payment would have fired on `subscription` had it matched
 * ({@link paymentTrigger}; none when the subscription has moved on). Errors: CONFLICT naming the payment's state when
 * it is not a flagged succeeded payment.
 */
export function decideAcceptance(
  payment: Payment,
  subscription: Pick<Subscription, 'status'>,
  nowIso: string,
): PaymentDecision {
  if (payment.mismatch === null) {
    throw new ProblemError(
      'CONFLICT',
      `Payment ${payment.id} is ${payment.status} and not flagged (its currency and amount match its plan): only a flagged payment can be accepted.`,
    );
  }
  if (payment.status !== 'succeeded') {
    throw new ProblemError(
      'CONFLICT',
      `Payment ${payment.id} is ${payment.status}: only a flagged succeeded payment can be accepted.`,
    );
  }
  const next: Payment = { ...payment, mismatch: null, updated_at: nowIso };
  const trigger = paymentTrigger(next, subscription);
  return { next, decision: trigger ? { trigger } : null };
}

/** What a provider's discount of `amount` (minor units) was, under the subscription's coupon; null when none. */
export function paymentDiscountOf(discount: Subscription['discount'], amount: number): PaymentDiscount | null {
  return discount && amount > 0
    ? { coupon_id: discount.coupon_id, promotion_code: discount.promotion_code, amount }
    : null;
}
