/**
 * What the fake Stripe Checkout charges for a session's first line item (used by `stripe-api.ts`): a synced Price
 * (`price`, looked up among the fake's prices) or an inline `price_data` (a gift's one-off price, DESIGN D33).
 */
export function firstLineItemCharge(
  session: Record<string, any>,
  prices: Map<string, Record<string, any>>,
): { priceId: string; amount: number; currency: string } {
  const item = session.line_items?.[0] ?? {};
  const priceId = String(item.price ?? '');
  const price = item.price_data ?? prices.get(priceId);
  return { priceId, amount: Number(price?.unit_amount ?? 0), currency: String(price?.currency ?? 'eur') };
}
