import type { Runtime } from '../../runtime.js';
import { paymentProviderAdapters } from '../../providers/adapters.js';
import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import { PROVIDER_SUBSCRIPTION_ATTRIBUTE } from '../subscriptions/provider-change.js';

/**
 * The recovery link of a failed payment (DESIGN D32): the provider's hosted page of the subscription's open invoice
 * (Stripe's `hosted_invoice_url`), or null when there is none (a manual subscription, no open invoice, the provider
 * did not answer): the caller falls back to the portal.
 */
export async function paymentRecoveryUrl(
  runtime: Runtime,
  teamId: string,
  subscriptionItem: Record<string, unknown>,
): Promise<string | null> {
  const provider = subscriptionItem.payment_provider as PaymentProvider | null | undefined;
  const providerSubscriptionId = subscriptionItem[PROVIDER_SUBSCRIPTION_ATTRIBUTE];
  if (!provider || typeof providerSubscriptionId !== 'string') return null;
  const adapter = paymentProviderAdapters(runtime)[provider];
  if (!adapter) return null;
  const answer = await adapter.openInvoiceUrl({
    team_id: teamId,
    project_id: subscriptionItem.project_id as string,
    provider_subscription_id: providerSubscriptionId,
  });
  return answer.ok ? answer.url : null;
}
