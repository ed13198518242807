import * as z from '../../schemas/zod.js';
import { Currency, Timestamp, Uuid } from '../../schemas/common.js';

/**
 * The shapes of offers other objects carry (DESIGN D33), in a module of their own so that the subscription's and the
 * payment's schemas (and every bundle that holds them) do not load the coupon requests: a coupon's duration, the code
 * text a buyer types, and the discount a subscription carries.
 */

/** How long a discount lasts (Stripe's `duration`): the first period only, `duration_in_months`, or for good. */
export const COUPON_DURATIONS = ['once', 'repeating', 'forever'] as const;

/** A promotion code as typed by a buyer: 3 to 40 letters, digits or `-` (Stripe's alphabet), case-insensitive. */
export const PromotionCodeText = z
  .string()
  .check(
    z.trim(),
    z.minLength(3),
    z.maxLength(40),
    z.regex(/^[A-Za-z0-9-]+$/, 'letters, digits and - only'),
    z.toUpperCase(),
    z.describe('The code buyers type, e.g. LAUNCH50: 3–40 letters, digits or -, case-insensitive.'),
  );

/**
 * A discount a subscription or payment carries (Stripe's Discount): the coupon's terms when it was redeemed, from
 * `start` until `end` (null: for good). A `once` discount ends with the first billing period.
 */
export const Discount = z
  .object({
    coupon_id: Uuid,
    promotion_code: z.nullable(z.string()).check(z.describe('The code redeemed, or null.')),
    percent_off: z.nullable(z.number()),
    amount_off: z.nullable(z.number().check(z.int())),
    currency: z.nullable(Currency),
    duration: z.enum(COUPON_DURATIONS),
    start: Timestamp,
    end: z.nullable(Timestamp).check(z.describe('When the discount stops applying; null: never.')),
  })
  .register(z.globalRegistry, { id: 'Discount' });
/** A discount (see {@link Discount}). */
export type Discount = z.infer<typeof Discount>;
