import { manualPaymentProvider } from './manual.js';
import type { PaymentProviderAdapters } from './payment-provider.js';

/**
 * The payment-provider adapters the service runs with (DESIGN D22), by provider: only `manual` today
 * (the catalogue's `connectable` providers). Use cases take this map as a parameter so tests can pass
 * failing or flaky adapters.
 */
export const PAYMENT_PROVIDER_ADAPTERS: PaymentProviderAdapters = { manual: manualPaymentProvider };
