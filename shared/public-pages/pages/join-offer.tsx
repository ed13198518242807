/** @jsx h */
/** @jsxFrag Fragment */
import { couponSummary, discountedAmount, redemptionRefusal } from '../../domain/coupons/decisions.js';
import { findPromotionCode } from '../../domain/coupons/repository.js';
import type { Coupon, PromotionCode } from '../../domain/coupons/schema.js';
import type { Plan } from '../../domain/plans/schema.js';
import type { Project } from '../../domain/projects/schema.js';
import { formatPrice } from '../../schemas/common.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { JOIN_PATH, type PublicRequest } from '../http.js';

/**
 * A promotion code on the join page (DESIGN D33): `?code=` (or the "Apply" form, a GET) names it; each Stripe plan it
 * applies to shows the discounted price and carries the code into its checkout; a code that cannot apply says why and
 * the plans keep their price. A code the project does not have as a promotion code is left to the access-code form.
 */

/** The promotion code a join page shows: the coupon and code, or the reason it cannot be used. */
export interface JoinOffer {
  coupon: Coupon;
  code: PromotionCode;
  /** Why it cannot be used on a plan at the page's time, or null when it can. */
  refusal: (plan: Plan) => string | null;
}

/** The promotion code named by the page's `code` query, or null when there is none (or it is an access code). */
export async function joinOffer(request: PublicRequest, project: Project, teamId: string): Promise<JoinOffer | null> {
  const text = (request.query.get('code') ?? '').trim();
  if (!/^[A-Za-z0-9-]{3,40}$/.test(text)) return null;
  const found = await findPromotionCode(request.runtime.store, teamId, project.id, text);
  if (!found) return null;
  const nowMs = request.runtime.clock.nowMs();
  return { ...found, refusal: (plan) => redemptionRefusal(found.coupon, found.code, plan, nowMs) };
}

const PERIODS: Record<Plan['interval'], string> = { week: 'week', month: 'month', year: 'year', one_time: 'payment' };

/** A discounted price for people: "€4.50 the first month, then €9.00 per month", "€6.75 per month". */
function discountedPriceLabel(plan: Plan, coupon: Coupon, fullPrice: string): string {
  const price = formatPrice(discountedAmount(plan.amount, plan.currency, coupon), plan.currency);
  const period =
    plan.interval_count === 1 ? PERIODS[plan.interval] : `${plan.interval_count} ${PERIODS[plan.interval]}s`;
  if (plan.interval === 'one_time') return `${price} once`;
  if (coupon.duration === 'forever') return `${price} per ${period}`;
  if (coupon.duration === 'once') return `${price} the first ${period}, then ${fullPrice}`;
  const months = coupon.duration_in_months ?? 1;
  return `${price} per ${period} for ${months} ${months === 1 ? 'month' : 'months'}, then ${fullPrice}`;
}

/**
 * What the code does, or why it cannot be used, above the plans; for a `code` that is no discount code, that it may be
 * an access code; nothing without a code.
 */
export function OfferNotice(props: { offer: JoinOffer | null; code: string; plans: Plan[] }): Html {
  if (!props.offer) {
    const text = props.code.trim().toUpperCase();
    return text ? (
      <p class="hint" role="status">
        There is no discount code {text}; if it is an access code, redeem it below.
      </p>
    ) : (
      <></>
    );
  }
  const { coupon, code, refusal } = props.offer;
  const usable = props.plans.filter((plan) => refusal(plan) === null);
  const reason = props.plans.map(refusal).find((text) => text !== null);
  return (
    <p class={usable.length > 0 ? 'notice' : 'problem'} role="status">
      {usable.length > 0
        ? `Code ${code.code} applied: ${couponSummary(coupon, formatPrice)}.`
        : `${reason ?? `The code ${code.code} cannot be used here.`} Prices below are without a discount.`}
    </p>
  );
}

/** The "Apply a discount code" form: a GET that reloads the join page with `?code=`. */
export function DiscountCodeForm(props: { project: Project; code: string }): Html {
  return (
    <form method="get" action={`${JOIN_PATH}/${props.project.id}`}>
      <label for="discount-code">Discount code</label>
      <input type="text" id="discount-code" name="code" value={props.code} maxlength="40" autocomplete="off" />
      <button type="submit">Apply</button>
    </form>
  );
}

/** Whether the page's code applies to `plan` (a plan card then shows {@link OfferPrice} and sends the code). */
export const offerApplies = (offer: JoinOffer | null, plan: Plan): offer is JoinOffer =>
  offer !== null && offer.refusal(plan) === null;

/** A plan card's price with the code applied, the full price struck through. */
export function OfferPrice(props: { offer: JoinOffer; plan: Plan; fullPrice: string }): Html {
  return (
    <p>
      <s>{props.fullPrice}</s> <strong>{discountedPriceLabel(props.plan, props.offer.coupon, props.fullPrice)}</strong>
    </p>
  );
}
