import type { PaymentProviderAdapter } from './payment-provider.js';

/**
 * The `manual` payment provider (DESIGN D16): payments are recorded by the creator, so there is no
 * external catalogue; a plan "syncs" at once, with ids derived from the plan (the product id from the
 * plan id, the price id from the plan id and its price version), so re-syncing the same version gives
 * the same ids. A refund is made by the creator outside the service: it is only recorded (no refund id).
 * No credentials, no network.
 */
export const manualPaymentProvider: PaymentProviderAdapter = {
  provider: 'manual',
  async syncPlan(plan) {
    return {
      ok: true,
      provider_product_id: `manual_prod_${plan.plan_id}`,
      provider_price_id: `manual_price_${plan.plan_id}_v${plan.price_version}`,
    };
  },
  async refund() {
    return { ok: true, provider_refund_id: null };
  },
  async changeSubscription() {
    return { ok: true };
  },
  async createCheckoutSession() {
    return {
      ok: false,
      reason:
        'The manual provider has no hosted checkout: record payments yourself (POST /v1/projects/{project_id}/payments).',
      code: null,
      retryable: false,
    };
  },
  async createGiftCheckoutSession() {
    return {
      ok: false,
      reason: 'The manual provider has no hosted checkout: gifts are sold through Stripe Checkout only.',
      code: null,
      retryable: false,
    };
  },
  async createBillingPortalSession() {
    return {
      ok: false,
      reason: 'The manual provider has no billing portal: the creator collects payments outside the service.',
      code: null,
      retryable: false,
    };
  },

  async openInvoiceUrl() {
    return { ok: true, url: null } as const;
  },
};
