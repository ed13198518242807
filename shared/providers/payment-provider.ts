import type { PaymentProvider } from '../catalogues/payment-providers.js';

/**
 * `PaymentProviderAdapter` port (§2, D16, D22): plan sync, refunds, provider-first subscription changes, checkout and
 * portal sessions. Called OUTSIDE transactions (callers record outcomes afterwards), ONE attempt per call (callers
 * retry `retryable` failures). Adapters open credentials themselves, so no secret crosses the port, and never return
 * credentials.
 */

/** What a provider needs to know of a plan to list it in its catalogue. Amounts in minor units. */
export interface PlanForSync {
  team_id: string;
  project_id: string;
  plan_id: string;
  name: string;
  description: string | null;
  /** Price in the currency's minor unit (e.g. cents). */
  amount: number;
  /** ISO 4217, upper case. */
  currency: string;
  interval: 'week' | 'month' | 'year' | 'one_time';
  interval_count: number;
  /** Days of access of a one-off pass; null for recurring plans. */
  access_days: number | null;
  /** Free trial in days. */
  trial_days: number;
  /** The plan's current price version (a new version is a new provider price). */
  price_version: number;
  /** false: the provider should stop selling it. */
  active: boolean;
}

/** The provider ids of an earlier sync of the same plan to the same provider (update rather than create). */
export interface ProviderCatalogueIds {
  provider_product_id: string | null;
  provider_price_id: string | null;
}

/**
 * Why a provider call failed: `reason` is safe to show (never a credential), `code` is the provider's own
 * error code when it gave one (Stripe's `code`, e.g. `resource_missing`; null otherwise), `retryable`
 * says whether the same call may succeed later (network failure, 5xx, 429) — the caller retries those
 * per its policy, and records the others at once.
 */
export interface ProviderFailure {
  ok: false;
  reason: string;
  code?: string | null;
  retryable: boolean;
}

/** The outcome of a sync: the provider's ids, or why it failed ({@link ProviderFailure}). */
export type PlanSyncResult =
  { ok: true; provider_product_id: string; provider_price_id: string | null } | ProviderFailure;

/** A refund to make at the provider. Amounts in the currency's minor unit. */
export interface RefundRequest {
  team_id: string;
  project_id: string;
  payment_id: string;
  /** The provider's id of the payment (Stripe: the PaymentIntent id, `pi_...`). */
  provider_payment_id: string | null;
  /** Minor units to refund (at most what is left to refund). */
  amount: number;
  /** ISO 4217, upper case. */
  currency: string;
  /** The creator's reason, or null (kept as metadata, not Stripe's `reason` enum). */
  reason: string | null;
  /**
   * The same key for the same refund (a retry after a timeout must not refund twice): the provider's idempotency key.
   */
  idempotency_key: string;
}

/** The outcome of a refund: the provider's refund id (null for a provider without one, `manual`), or why it failed. */
export type RefundResult = { ok: true; provider_refund_id: string | null } | ProviderFailure;

/**
 * A provider-billed subscription change asked of the provider BEFORE our transaction commits it (D27): `cancel`,
 * `cancel_at_period_end`/`keep`, `pause`/`resume_collection`, `change_price` (prorated per `proration_behavior`).
 */
export type ProviderSubscriptionChange =
  | { kind: 'cancel' }
  | { kind: 'cancel_at_period_end' }
  | { kind: 'keep' }
  | { kind: 'pause' }
  | { kind: 'resume_collection' }
  | {
      kind: 'change_price';
      provider_price_id: string;
      proration_behavior: 'create_prorations' | 'none' | 'always_invoice';
    };

/** A subscription change to make at the provider (see {@link ProviderSubscriptionChange}). */
export interface SubscriptionChangeRequest {
  team_id: string;
  project_id: string;
  /** Our subscription id (sent as metadata, so the provider's echo can be traced to it). */
  subscription_id: string;
  /** The provider's id of the subscription (Stripe: `sub_...`). */
  provider_subscription_id: string;
  change: ProviderSubscriptionChange;
  /** The same key for the same change of the same state: a retry after a lost answer changes nothing twice. */
  idempotency_key: string;
}

/** The outcome of a subscription change at the provider. */
export type SubscriptionChangeResult = { ok: true } | ProviderFailure;

/**
 * A hosted checkout to create for one plan (DESIGN D26): Stripe Checkout with the synced price. URLs are
 * absolute; `success_url` may hold Stripe's `{CHECKOUT_SESSION_ID}` placeholder.
 */
export interface CheckoutSessionRequest {
  team_id: string;
  project_id: string;
  plan_id: string;
  /** The plan's price at the provider (Stripe `price_...`). */
  provider_price_id: string;
  /** `subscription` for recurring plans, `payment` for one-off and fixed-term plans. */
  mode: 'subscription' | 'payment';
  /** Free trial in days (subscription mode only; 0: none). */
  trial_days: number;
  /**
   * Whether the trial's checkout asks for a card (D33). false (with `trial_days` > 0): Stripe's
   * `payment_method_collection: if_required`, and a trial that ends without a payment method cancels the subscription.
   */
  trial_payment_method_required: boolean;
  customer_email: string | null;
  /** Our reference of the buyer (Stripe `client_reference_id`), or null. */
  client_reference_id: string | null;
  success_url: string;
  cancel_url: string;
  /** A promotion code of ours to apply (upper case; DESIGN D33), or null. */
  promotion_code: string | null;
  /** Its id at the provider (Stripe `promo_...`), or null. */
  provider_promotion_code_id: string | null;
  /** Whether the buyer may type a promotion code on the provider's page (when none is given here). */
  allow_promotion_codes: boolean;
  idempotency_key: string;
}

/**
 * The outcome of a checkout creation: the provider's session id, the URL to send the buyer to and when it expires (ISO
 * 8601).
 */
export type CheckoutSessionResult = { ok: true; id: string; url: string; expires_at: string } | ProviderFailure;

/**
 * A hosted one-off payment for a gift (DESIGN D33): one term of a plan, priced inline (`price_data` on the plan's
 * provider product: a recurring plan's synced price is recurring, and a gift is paid once). URLs absolute.
 */
export interface GiftCheckoutSessionRequest {
  team_id: string;
  project_id: string;
  plan_id: string;
  gift_id: string;
  /** The plan's product at the provider (Stripe `prod_...`). */
  provider_product_id: string;
  /** What the gift costs, in the currency's minor unit. */
  amount: number;
  /** ISO 4217, upper case. */
  currency: string;
  /** The line item's name, e.g. `Gift: Monthly (1 month)`. */
  description: string;
  buyer_email: string;
  success_url: string;
  cancel_url: string;
  idempotency_key: string;
}

/** A hosted page where a subscriber manages their payment method (Stripe Billing Portal), for one provider customer. */
interface BillingPortalSessionRequest {
  team_id: string;
  project_id: string;
  /** The provider's customer id (Stripe `cus_...`). */
  provider_customer_id: string;
  /** Where the provider sends the subscriber back (absolute URL). */
  return_url: string;
}

/** The outcome of a billing portal creation: the URL to send the subscriber to. */
export type BillingPortalSessionResult = { ok: true; url: string } | ProviderFailure;

/** One payment provider's adapter. */
export interface PaymentProviderAdapter {
  readonly provider: PaymentProvider;
  /**
   * Creates or updates the plan in the provider's catalogue (`existing`: ids of the last sync to this
   * provider, or null). Returns the outcome; may also throw for an unexpected failure, which the caller
   * records as a retryable failure without its message (it may carry provider internals).
   */
  syncPlan(plan: PlanForSync, existing: ProviderCatalogueIds | null): Promise<PlanSyncResult>;
  /**
   * Refunds `request.amount` of a payment at the provider (DESIGN D16: Stripe's Refunds API; `manual`
   * refunds outside the service, so it only answers ok). Returns the outcome; a thrown error is an
   * unexpected failure the caller treats as retryable, without its message.
   */
  refund(request: RefundRequest): Promise<RefundResult>;
  /**
   * Makes a subscription change at the provider before our transaction records it (see {@link
   * ProviderSubscriptionChange}).
   */
  changeSubscription(request: SubscriptionChangeRequest): Promise<SubscriptionChangeResult>;
  /** Creates a hosted checkout for a plan (DESIGN D26); a provider without one answers a non-retryable failure. */
  createCheckoutSession(request: CheckoutSessionRequest): Promise<CheckoutSessionResult>;
  /**
   * Creates a hosted one-off payment of a gift (DESIGN D33); a provider without one answers a non-retryable failure.
   */
  createGiftCheckoutSession(request: GiftCheckoutSessionRequest): Promise<CheckoutSessionResult>;
  /**
   * Creates a hosted payment-method page for a customer (DESIGN D27); a provider without one answers a non-retryable
   * failure.
   */
  createBillingPortalSession(request: BillingPortalSessionRequest): Promise<BillingPortalSessionResult>;
  /**
   * The hosted page where the subscriber pays a subscription's open invoice (DESIGN D32's recovery link: Stripe's
   * `hosted_invoice_url`); `url` null when the provider has none or nothing is open.
   */
  openInvoiceUrl(request: OpenInvoiceRequest): Promise<{ ok: true; url: string | null } | ProviderFailure>;
  /** Its discount catalogue, when it bills discounts itself (see {@link ProviderDiscounts}). */
  readonly discounts?: ProviderDiscounts;
}

/** A coupon to create at the provider before it is stored (DESIGN D33); amounts in minor units. */
interface ProviderCouponRequest {
  team_id: string;
  project_id: string;
  /** Our coupon id, also its id at the provider (a retry finds the coupon it created). */
  coupon_id: string;
  name: string;
  percent_off: number | null;
  amount_off: number | null;
  currency: string | null;
  duration: 'once' | 'repeating' | 'forever';
  duration_in_months: number | null;
  max_redemptions: number | null;
  /** ISO 8601, or null. */
  redeem_by: string | null;
  /** The plans it applies to (empty: every plan). */
  plan_ids: string[];
}

/** A promotion code of a coupon to create at the provider. */
interface ProviderPromotionCodeRequest {
  team_id: string;
  project_id: string;
  coupon_id: string;
  code: string;
  first_time_transaction: boolean;
  max_redemptions: number | null;
  /** ISO 8601, or null. */
  expires_at: string | null;
  /** The same key for the same code: a retry creates it once. */
  idempotency_key: string;
}

/** A coupon or promotion code to stop at the provider (`promotion_code_ids`: the provider's ids of its codes). */
interface ProviderArchiveRequest {
  team_id: string;
  project_id: string;
  /** The coupon to delete at the provider (discounts already applied stay), or null to archive codes only. */
  coupon_id: string | null;
  provider_promotion_code_ids: string[];
}

/**
 * The discount catalogue of a provider that bills discounts itself (Stripe's Coupons and PromotionCodes, DESIGN D33);
 * absent for `manual`, whose discounts are applied to recorded payments.
 */
export interface ProviderDiscounts {
  createCoupon(request: ProviderCouponRequest): Promise<{ ok: true } | ProviderFailure>;
  createPromotionCode(
    request: ProviderPromotionCodeRequest,
  ): Promise<{ ok: true; provider_promotion_code_id: string } | ProviderFailure>;
  archive(request: ProviderArchiveRequest): Promise<{ ok: true } | ProviderFailure>;
}

/** Which subscription's open invoice to find at the provider. */
interface OpenInvoiceRequest {
  team_id: string;
  project_id: string;
  /** The provider's id of the subscription (Stripe: `sub_...`). */
  provider_subscription_id: string;
}

/** The adapters by provider; a connected provider without an adapter fails its syncs (recorded, visible). */
export type PaymentProviderAdapters = Partial<Record<PaymentProvider, PaymentProviderAdapter>>;
