import type { PaymentProvider } from '../catalogues/payment-providers.js';

/**
 * The `PaymentProviderAdapter` port (DESIGN §2, D16, D22): what the domain asks of a payment provider.
 * Today only plan sync (the provider's catalogue of products and prices); verifying inbound events and
 * refunds join it with the Stripe adapter. Adapters are called OUTSIDE any DynamoDB transaction: the
 * caller records the outcome (and its `plan.synced` / `plan.sync_failed` event) afterwards, in one unit
 * of work. Adapters never put credentials in what they return (results end up in payloads and reads).
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
 * The outcome of a sync: the provider's ids, or why it failed. `retryable` failures (timeouts,
 * throttling) are tried again by the caller; others (a rejected plan) are recorded at once.
 */
export type PlanSyncResult =
  | { ok: true; provider_product_id: string; provider_price_id: string | null }
  | { ok: false; reason: string; retryable: boolean };

/** One payment provider's adapter. */
export interface PaymentProviderAdapter {
  readonly provider: PaymentProvider;
  /**
   * Creates or updates the plan in the provider's catalogue (`existing`: ids of the last sync to this
   * provider, or null). Returns the outcome; may also throw for an unexpected failure, which the caller
   * records as a retryable failure without its message (it may carry provider internals).
   */
  syncPlan(plan: PlanForSync, existing: ProviderCatalogueIds | null): Promise<PlanSyncResult>;
}

/** The adapters by provider; a connected provider without an adapter fails its syncs (recorded, visible). */
export type PaymentProviderAdapters = Partial<Record<PaymentProvider, PaymentProviderAdapter>>;
