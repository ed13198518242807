import * as z from '../../schemas/zod.js';
import { Currency, listOf, NameText, Timestamp, Uuid } from '../../schemas/common.js';
import { COUPON_DURATIONS, PromotionCodeText } from './discount.js';

/**
 * Coupons and promotion codes (DESIGN D33), in Stripe Billing's terms: a coupon is the discount (`percent_off` or
 * `amount_off` + `currency`, for a `duration`), a promotion code is a customer-facing code string of one coupon with
 * its own limits. Amounts are integers in the currency's minor unit.
 */

/** Coupon and promotion code statuses: `archived` ones are no longer redeemable; discounts already given stay. */
const OFFER_STATUSES = ['active', 'archived'] as const;

/** Largest `amount_off`, in minor units (the largest plan price). */
const MAX_AMOUNT_OFF = 100_000_000;
/** Longest `repeating` duration, in months (Stripe's limit is higher; three years covers every anchor's offers). */
const MAX_DURATION_MONTHS = 36;
/** Most plans a coupon may be limited to. */
const MAX_APPLIES_TO_PLANS = 50;
/** Most promotion codes given with a new coupon. */
const MAX_CODES_PER_REQUEST = 20;

const RedemptionLimit = z
  .nullable(z.number().check(z.int(), z.gte(1), z.lte(1_000_000)))
  .check(z.describe('Most redemptions in all; null: no limit.'));

/** A customer-facing code of a coupon (Stripe's PromotionCode). */
export const PromotionCode = z
  .object({
    id: Uuid,
    coupon_id: Uuid,
    project_id: Uuid,
    code: z.string().check(z.describe('The code, upper case.')),
    first_time_transaction: z
      .boolean()
      .check(z.describe('Only buyers who never paid this project before may redeem it.')),
    max_redemptions: RedemptionLimit,
    times_redeemed: z.number().check(z.int(), z.nonnegative()),
    expires_at: z.nullable(Timestamp).check(z.describe('After this time the code is refused; null: never.')),
    status: z.enum(OFFER_STATUSES),
    provider_promotion_code_id: z
      .nullable(z.string())
      .check(z.describe('Stripe’s id of the code (`promo_...`) for a Stripe-connected project; else null.')),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'PromotionCode' });
/** A promotion code (see {@link PromotionCode}). */
export type PromotionCode = z.infer<typeof PromotionCode>;

/** A project's coupon (Stripe's Coupon): what is taken off, for how long, on which plans, how often. */
export const Coupon = z
  .object({
    id: Uuid.check(z.describe('Also the coupon’s id at Stripe for a Stripe-connected project.')),
    project_id: Uuid,
    name: z.string(),
    percent_off: z.nullable(z.number()).check(z.describe('Percent taken off (0.01–100), or null with amount_off.')),
    amount_off: z.nullable(z.number().check(z.int())).check(z.describe('Taken off, in the minor unit, or null.')),
    currency: z.nullable(Currency).check(z.describe('The currency of amount_off; null with percent_off.')),
    duration: z.enum(COUPON_DURATIONS),
    duration_in_months: z.nullable(z.number().check(z.int())).check(z.describe('With duration repeating.')),
    max_redemptions: RedemptionLimit,
    times_redeemed: z.number().check(z.int(), z.nonnegative()),
    redeem_by: z.nullable(Timestamp).check(z.describe('Last time it may be redeemed; null: no end.')),
    applies_to_plans: z.array(Uuid).check(z.describe('The plans it applies to; empty: every plan of the project.')),
    status: z.enum(OFFER_STATUSES),
    provider: z
      .nullable(z.enum(['stripe']))
      .check(
        z.describe('stripe: created at Stripe first, which bills the discount; null: applied to recorded payments.'),
      ),
    promotion_codes: z.array(PromotionCode),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'Coupon' });
/** A coupon (see {@link Coupon}). */
export type Coupon = z.infer<typeof Coupon>;

/** A page of coupons. */
export const CouponList = listOf(Coupon, 'CouponList');

/** `{project_id}` and `{coupon_id}` path parameters. */
export const CouponParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project id.')),
  coupon_id: Uuid.check(z.describe('The coupon id.')),
});

/** Body of adding a promotion code to a coupon. */
export const CreatePromotionCodeRequest = z
  .strictObject({
    code: PromotionCodeText,
    first_time_transaction: z._default(z.boolean(), false),
    max_redemptions: z._default(RedemptionLimit, null),
    expires_at: z._default(z.nullable(Timestamp), null),
  })
  .register(z.globalRegistry, { id: 'CreatePromotionCodeRequest' });
/** A validated promotion code request (see {@link CreatePromotionCodeRequest}). */
export type CreatePromotionCodeRequest = z.infer<typeof CreatePromotionCodeRequest>;

/**
 * Body of `POST /v1/projects/{project_id}/coupons`: exactly one of percent_off or amount_off (with currency);
 * `duration_in_months` with `repeating` only, each code once (checked by `couponTermsErrors`).
 */
export const CreateCouponRequest = z
  .strictObject({
    name: NameText(),
    percent_off: z.optional(z.number().check(z.gt(0), z.lte(100), z.multipleOf(0.01))),
    amount_off: z.optional(z.number().check(z.int(), z.gte(1), z.lte(MAX_AMOUNT_OFF))),
    currency: z.optional(Currency),
    duration: z.enum(COUPON_DURATIONS),
    duration_in_months: z.optional(z.number().check(z.int(), z.gte(1), z.lte(MAX_DURATION_MONTHS))),
    max_redemptions: z._default(RedemptionLimit, null),
    redeem_by: z._default(z.nullable(Timestamp), null),
    applies_to_plans: z._default(z.array(Uuid).check(z.maxLength(MAX_APPLIES_TO_PLANS)), []),
    promotion_codes: z._default(z.array(CreatePromotionCodeRequest).check(z.maxLength(MAX_CODES_PER_REQUEST)), []),
  })
  .register(z.globalRegistry, {
    id: 'CreateCouponRequest',
    // Exactly one kind of discount; the other cross-field rules are the use case's (`couponTermsErrors`).
    override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
      jsonSchema.oneOf = [{ required: ['percent_off'] }, { required: ['amount_off', 'currency'] }];
    },
    examples: [
      {
        name: 'Launch: half off the first month',
        percent_off: 50,
        duration: 'once',
        promotion_codes: [{ code: 'LAUNCH50' }],
      },
    ],
  });
/** A validated coupon request (see {@link CreateCouponRequest}). */
export type CreateCouponRequest = z.infer<typeof CreateCouponRequest>;
