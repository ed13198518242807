import type { FieldError } from '../../errors.js';
import type { Plan } from '../plans/schema.js';
import type { Discount } from './discount.js';
import type { Coupon, CreateCouponRequest, PromotionCode } from './schema.js';

/**
 * The pure decisions of offers (DESIGN D33): whether a code may be redeemed on a plan now, what it takes off a price
 * (minor units), and the discount a subscription carries and for how long.
 */

/** A coupon's terms: what it takes off and for how long. */
export type CouponTerms = Pick<Coupon, 'percent_off' | 'amount_off' | 'currency' | 'duration'>;

/**
 * `amount` (minor units of `currency`) after `terms`: a percentage rounded to the nearest minor unit (as Stripe
 * rounds), an amount off never below 0; an amount off in another currency takes nothing off.
 */
export function discountedAmount(amount: number, currency: string, terms: CouponTerms): number {
  if (terms.percent_off !== null) return amount - Math.round((amount * terms.percent_off) / 100);
  if (terms.amount_off !== null && terms.currency === currency) return Math.max(0, amount - terms.amount_off);
  return amount;
}

/**
 * How a coupon is written for people: "50% off the first payment", "€5.00 off for 3 months", "10% off every payment"
 * (also a repeating discount whose months are not given: its end is shown beside it).
 */
export function couponSummary(
  terms: CouponTerms & Pick<Coupon, 'duration_in_months'>,
  format: (amount: number, currency: string) => string,
): string {
  const off =
    terms.percent_off !== null
      ? `${terms.percent_off}% off`
      : `${format(terms.amount_off ?? 0, terms.currency ?? 'USD')} off`;
  if (terms.duration === 'once') return `${off} the first payment`;
  const months = terms.duration_in_months;
  if (terms.duration === 'forever' || months === null) return `${off} every payment`;
  return `${off} for ${months} ${months === 1 ? 'month' : 'months'}`;
}

/** Whether the redeemed limit `max` (null: none) leaves room for one more after `times` redemptions. */
const hasRoom = (times: number, max: number | null) => max === null || times < max;

/**
 * Why `code` of `coupon` cannot be redeemed on `plan` at `nowMs` (epoch MILLISECONDS), in words a buyer understands,
 * or null when it can. `firstTransaction`: whether the buyer never paid this project (unknown: true).
 */
export function redemptionRefusal(
  coupon: Coupon,
  code: PromotionCode,
  plan: Pick<Plan, 'id' | 'currency' | 'amount'>,
  nowMs: number,
  firstTransaction = true,
): string | null {
  const name = code.code;
  if (coupon.status !== 'active' || code.status !== 'active') return `The code ${name} is no longer valid.`;
  if (code.expires_at && Date.parse(code.expires_at) <= nowMs) return `The code ${name} has expired.`;
  if (coupon.redeem_by && Date.parse(coupon.redeem_by) <= nowMs) return `The code ${name} has expired.`;
  if (!hasRoom(code.times_redeemed, code.max_redemptions) || !hasRoom(coupon.times_redeemed, coupon.max_redemptions))
    return `The code ${name} has been used up.`;
  if (coupon.applies_to_plans.length > 0 && !coupon.applies_to_plans.includes(plan.id))
    return `The code ${name} does not apply to this plan.`;
  if (coupon.amount_off !== null && coupon.currency !== plan.currency)
    return `The code ${name} does not apply to prices in ${plan.currency}.`;
  if (code.first_time_transaction && !firstTransaction) return `The code ${name} is for first-time buyers only.`;
  return null;
}

/**
 * The discount a subscription carries from `startIso` when `code` of `coupon` is redeemed: `end` null for `forever`,
 * the first period's end for `once` (`firstPeriodEndIso`; null until the period is known: {@link discountAfter} sets
 * it), `duration_in_months` calendar months later for `repeating`.
 */
export function discountOf(
  coupon: Coupon,
  code: Pick<PromotionCode, 'code'> | null,
  startIso: string,
  firstPeriodEndIso: string | null,
): Discount {
  let end: string | null = null;
  if (coupon.duration === 'once') end = firstPeriodEndIso;
  if (coupon.duration === 'repeating') {
    const date = new Date(startIso);
    date.setUTCMonth(date.getUTCMonth() + (coupon.duration_in_months ?? 1));
    end = date.toISOString();
  }
  return {
    coupon_id: coupon.id,
    promotion_code: code?.code ?? null,
    percent_off: coupon.percent_off,
    amount_off: coupon.amount_off,
    currency: coupon.currency,
    duration: coupon.duration,
    start: startIso,
    end,
  };
}

/**
 * Whether `discount` still applies at `atIso` (a billing period starting then is discounted): it has no end or ends
 * after that time.
 */
export function discountApplies(discount: Discount | null | undefined, atIso: string): discount is Discount {
  return !!discount && (discount.end === null || Date.parse(discount.end) > Date.parse(atIso));
}

/**
 * A subscription's discount after a change that set its period (`periodStart`/`periodEnd`, ISO 8601 or null): a `once`
 * discount still without an end ends with the first period; a discount whose end is at or before the period's start is
 * over (null). Otherwise unchanged.
 */
export function discountAfter(
  discount: Discount | null,
  periodStart: string | null,
  periodEnd: string | null,
): Discount | null {
  if (!discount) return null;
  const dated =
    discount.duration === 'once' && discount.end === null && periodEnd ? { ...discount, end: periodEnd } : discount;
  if (dated.end !== null && periodStart !== null && Date.parse(dated.end) <= Date.parse(periodStart)) return null;
  return dated;
}

/**
 * The cross-field rules of a new coupon: exactly one of `percent_off` or `amount_off`, `currency` with `amount_off`
 * only, `duration_in_months` with `repeating` only, each code once (case-insensitive). Empty when it is consistent.
 */
export function couponTermsErrors(request: CreateCouponRequest): FieldError[] {
  const errors: FieldError[] = [];
  if ((request.percent_off === undefined) === (request.amount_off === undefined))
    errors.push({ path: 'percent_off', message: 'give exactly one of percent_off or amount_off' });
  if ((request.amount_off === undefined) !== (request.currency === undefined))
    errors.push({ path: 'currency', message: 'goes with amount_off, and only with it' });
  if ((request.duration === 'repeating') !== (request.duration_in_months !== undefined))
    errors.push({ path: 'duration_in_months', message: 'goes with duration repeating, and only with it' });
  const codes = request.promotion_codes.map((code) => code.code);
  if (new Set(codes).size !== codes.length)
    errors.push({ path: 'promotion_codes', message: 'each code may be given once' });
  return errors;
}
