import { ProblemError } from '../../errors.js';
import { couponStore } from '../../store/coupons.js';
import type { Store } from '../../store/store.js';
import type { Transaction } from '../../store/unit-of-work.js';
import type { Plan } from '../plans/schema.js';
import { discountOf, redemptionRefusal } from './decisions.js';
import { findPromotionCode, readCoupon } from './repository.js';
import type { Discount } from './discount.js';
import type { Coupon, PromotionCode } from './schema.js';

/**
 * Redeeming offers (DESIGN D33): a code checked before a checkout or a recorded payment, counted in the transaction
 * that applies it (limits hold under concurrency: a conditional counter), and a Stripe-applied discount recognised from
 * the ids Stripe reports (our coupon id is Stripe's).
 */

/** A code that may be redeemed on a plan now: its coupon and code. */
export interface RedeemableCode {
  coupon: Coupon;
  code: PromotionCode;
}

/**
 * The coupon and code `text` names in a project when it may be redeemed on `plan` at `nowMs` (epoch MILLISECONDS);
 * `firstTransaction` says whether the buyer never paid the project (asked only of a first-time-only code; unknown:
 * yes). Errors: VALIDATION_FAILED at `field` (default `promotion_code`) with a message a buyer understands.
 */
export async function redeemableCode(
  store: Store,
  teamId: string,
  projectId: string,
  text: string,
  plan: Pick<Plan, 'id' | 'currency' | 'amount'>,
  nowMs: number,
  options: { field?: string; firstTransaction?: () => Promise<boolean> } = {},
): Promise<RedeemableCode> {
  const field = options.field ?? 'promotion_code';
  const found = await findPromotionCode(store, teamId, projectId, text);
  // Whether the buyer paid before is read only for a code that asks (a first-time-only code).
  const first =
    found?.code.first_time_transaction && options.firstTransaction ? await options.firstTransaction() : true;
  const reason = found
    ? redemptionRefusal(found.coupon, found.code, plan, nowMs, first)
    : `There is no code ${text.trim().toUpperCase()}.`;
  if (reason) throw new ProblemError('VALIDATION_FAILED', reason, { errors: [{ path: field, message: reason }] });
  return found!;
}

/**
 * Adds to `tx` one redemption of `code` of `coupon`: `strict` when we decide it (refused with CONFLICT when the limit
 * was reached meanwhile), not strict when the provider applied it already (counted regardless).
 */
export function countRedemption(
  tx: Transaction,
  teamId: string,
  redeemed: { coupon: Pick<Coupon, 'id' | 'project_id'>; code: string | null },
  nowIso: string,
  strict: boolean,
): void {
  couponStore.redeem(
    tx,
    teamId,
    redeemed.coupon.project_id,
    { couponId: redeemed.coupon.id, code: redeemed.code, nowIso, strict },
    () =>
      new ProblemError(
        'CONFLICT',
        `The code ${redeemed.code ?? redeemed.coupon.id} was used up or archived meanwhile; nothing was recorded.`,
      ),
  );
}

/**
 * The discount Stripe applied to a checkout (`couponId`: Stripe's coupon id, ours; `promotionCodeId`: Stripe's
 * `promo_...`; `codeText`: the code we passed), from `startIso`; null when it is not one of the project's coupons.
 */
export async function providerDiscount(
  store: Store,
  teamId: string,
  projectId: string,
  applied: { couponId: string | null; promotionCodeId: string | null; codeText: string | null },
  startIso: string,
): Promise<{ discount: Discount; coupon: Coupon; code: string | null } | null> {
  if (applied.codeText) {
    const found = await findPromotionCode(store, teamId, projectId, applied.codeText);
    if (found)
      return {
        discount: discountOf(found.coupon, found.code, startIso, null),
        coupon: found.coupon,
        code: found.code.code,
      };
  }
  if (applied.promotionCodeId) {
    const codes = await couponStore.listCodes(store, teamId, projectId);
    const match = codes.find((code) => code.provider_promotion_code_id === applied.promotionCodeId);
    if (match)
      return providerDiscount(
        store,
        teamId,
        projectId,
        { ...applied, codeText: match.code as string, promotionCodeId: null },
        startIso,
      );
  }
  if (!applied.couponId) return null;
  const coupon = await readCoupon(store, teamId, projectId, applied.couponId);
  if (!coupon) return null;
  return { discount: discountOf(coupon, null, startIso, null), coupon, code: null };
}
