import { integrationsOf, type IntegrationSettings } from '../integrations.js';
import type { Store } from '../store/store.js';
import { manualPaymentProvider } from './manual.js';
import type { PaymentProviderAdapters } from './payment-provider.js';
import { stripeClientOf, stripePaymentProvider } from './stripe.js';
import { stripeDiscounts } from './stripe-discounts.js';

/**
 * What the service's payment-provider adapters need of a runtime: the store (credentials) and its integration settings
 * (if it carries any).
 */
export interface PaymentProviderRuntime {
  store: Store;
  integrations?: IntegrationSettings;
}

/**
 * The payment-provider adapters the service runs with (DESIGN D22), by provider: the catalogue's
 * `connectable` ones, `manual` and `stripe` (the official SDK, with the runtime's store and integration
 * settings, read when a call is made). Use cases take an adapter map as an option so tests can pass
 * failing or flaky adapters; without one they use these.
 */
export function paymentProviderAdapters(runtime: PaymentProviderRuntime): PaymentProviderAdapters {
  const stripe = { store: runtime.store, settings: () => integrationsOf(runtime) };
  return {
    manual: manualPaymentProvider,
    stripe: { ...stripePaymentProvider(stripe), discounts: stripeDiscounts(stripeClientOf(stripe)) },
  };
}
