/**
 * The fake Stripe API's discounts (used by `stripe-api.ts`): Coupons create (with a given `id`) and delete, Promotion
 * Codes create and update (`active`), and what its hosted checkout charges when a session carries `discounts`: the
 * coupon's amount off, as Stripe computes it (a percentage rounded to the nearest minor unit), with the completed
 * session's `discounts` and `total_details.amount_discount` and the first invoice's `total_discount_amounts`.
 */

type Answer = { status: number; body: unknown };

/** Stripe's booleans arrive as form text. */
const bool = (value: unknown) => value === true || value === 'true';

/** A fake Stripe's coupons and promotion codes, and the discount a session's payment gets. */
export interface FakeStripeDiscounts {
  coupons: Map<string, Record<string, any>>;
  promotionCodes: Map<string, Record<string, any>>;
  /** Answers a coupon or promotion code request, or null for any other path. */
  route: (method: string, path: string, params: Record<string, any>) => Answer | null;
  /**
   * What paying `session` for `amount` (minor units) takes off: the amount off, the session's `discounts` as Stripe
   * reports them, and the coupon (null without a discount). Counts the redemption.
   */
  redeem: (
    session: Record<string, any>,
    amount: number,
  ) => { amountOff: number; discounts: Record<string, any>[]; coupon: Record<string, any> | null };
  /** The buyer typed `text` in the hosted page's code field: applied when the session allows codes and it is active. */
  applyTypedCode: (session: Record<string, any>, text: string) => void;
}

const invalid = (message: string, code?: string): Answer => ({
  status: 400,
  body: { error: { type: 'invalid_request_error', message, ...(code ? { code } : {}) } },
});

/** The discounts of one fake Stripe API (`nextId` makes its ids, `created` its unix seconds). */
export function fakeStripeDiscounts(nextId: (prefix: string) => string, created: () => number): FakeStripeDiscounts {
  const coupons = new Map<string, Record<string, any>>();
  const promotionCodes = new Map<string, Record<string, any>>();
  const number = (value: unknown) => (value === undefined ? null : Number(value));

  const route = (method: string, path: string, params: Record<string, any>): Answer | null => {
    if (method === 'POST' && path === '/v1/coupons') {
      const id = String(params.id ?? nextId('coupon'));
      if (coupons.has(id)) return invalid(`Coupon already exists.`, 'resource_already_exists');
      const coupon = {
        id,
        object: 'coupon',
        name: params.name ?? null,
        percent_off: number(params.percent_off),
        amount_off: number(params.amount_off),
        currency: params.currency ?? null,
        duration: params.duration,
        duration_in_months: number(params.duration_in_months),
        max_redemptions: number(params.max_redemptions),
        redeem_by: number(params.redeem_by),
        applies_to: params.applies_to ?? null,
        metadata: params.metadata ?? {},
        times_redeemed: 0,
        valid: true,
        created: created(),
      };
      coupons.set(id, coupon);
      return { status: 200, body: coupon };
    }
    let match = /^\/v1\/coupons\/([^/]+)$/.exec(path);
    if (method === 'DELETE' && match) {
      if (!coupons.delete(match[1]))
        return {
          status: 404,
          body: {
            error: {
              type: 'invalid_request_error',
              code: 'resource_missing',
              message: `No such coupon: '${match[1]}'`,
            },
          },
        };
      return { status: 200, body: { id: match[1], object: 'coupon', deleted: true } };
    }
    if (method === 'POST' && path === '/v1/promotion_codes') {
      const coupon = coupons.get(String(params.promotion?.coupon ?? ''));
      if (!coupon) return invalid(`No such coupon: '${params.promotion?.coupon}'`, 'resource_missing');
      const code = String(params.code ?? nextId('CODE')).toUpperCase();
      if ([...promotionCodes.values()].some((entry) => entry.active && entry.code === code))
        return invalid(`An active promotion code with \`code: ${code}\` already exists.`, 'duplicate_value');
      const promotion = {
        id: nextId('promo'),
        object: 'promotion_code',
        code,
        active: true,
        promotion: { type: 'coupon', coupon: coupon.id },
        max_redemptions: number(params.max_redemptions),
        expires_at: number(params.expires_at),
        restrictions: { first_time_transaction: params.restrictions?.first_time_transaction === 'true' },
        metadata: params.metadata ?? {},
        times_redeemed: 0,
        created: created(),
      };
      promotionCodes.set(promotion.id, promotion);
      return { status: 200, body: promotion };
    }
    match = /^\/v1\/promotion_codes\/([^/]+)$/.exec(path);
    if (method === 'POST' && match) {
      const promotion = promotionCodes.get(match[1]);
      if (!promotion) return invalid(`No such promotion code: '${match[1]}'`, 'resource_missing');
      if (params.active !== undefined) promotion.active = params.active === 'true';
      return { status: 200, body: promotion };
    }
    return null;
  };

  const applyTypedCode = (session: Record<string, any>, text: string) => {
    const typed = [...promotionCodes.values()].find((entry) => entry.active && entry.code === text.toUpperCase());
    if (typed && bool(session.allow_promotion_codes)) session.discounts = [{ promotion_code: typed.id }];
  };

  const redeem = (session: Record<string, any>, amount: number) => {
    const promotionId = session.discounts?.[0]?.promotion_code;
    const promotion = promotionId ? promotionCodes.get(String(promotionId)) : undefined;
    const coupon = promotion ? coupons.get(promotion.promotion.coupon) : undefined;
    if (!promotion || !coupon) return { amountOff: 0, discounts: [], coupon: null };
    promotion.times_redeemed++;
    coupon.times_redeemed++;
    const amountOff =
      coupon.percent_off !== null
        ? Math.round((amount * coupon.percent_off) / 100)
        : Math.min(amount, Number(coupon.amount_off ?? 0));
    return { amountOff, discounts: [{ coupon: coupon.id, promotion_code: promotion.id }], coupon };
  };

  return { coupons, promotionCodes, route, redeem, applyTypedCode };
}
