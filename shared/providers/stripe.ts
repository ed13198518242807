import { createHash } from 'node:crypto';
import type Stripe from 'stripe';
import { openCredential, type CredentialKind } from '../credentials/repository.js';
import type { IntegrationSettings } from '../integrations.js';
import { retryWhile } from '../retry.js';
import type { Store } from '../store/store.js';
import type {
  BillingPortalSessionResult,
  CheckoutSessionResult,
  PaymentProviderAdapter,
  PlanForSync,
  PlanSyncResult,
  ProviderCatalogueIds,
  ProviderFailure,
  RefundRequest,
  RefundResult,
  SubscriptionChangeResult,
} from './payment-provider.js';
import { checkoutSessionParams, checkoutSessionResult } from './stripe-checkout.js';
import { stripeClient, type StripeErrors } from './stripe-client.js';
import { desiredPrice, samePrice, stripeProductId, stripeSubscriptionUpdate } from './stripe-params.js';
import { createStripeGiftCheckout } from './stripe-gift-checkout.js';

/**
 * Stripe outbound (D16, D22): key check, plan sync, refunds via the SDK. Keys (`stripe` credential) are opened per
 * call, never returned, logged or put in a failure. ONE attempt per call (`retryable`: unreachable, timeout, 5xx, 429);
 * repeats are safe (deterministic ids, idempotency keys).
 */

/**
 * The credential kind of a project's Stripe connection: secrets `secret_key` (`rk_...`/`sk_...`) and `webhook_secret`
 * (`whsec_...`).
 */
export const STRIPE_CREDENTIAL: CredentialKind = 'stripe';

/**
 * Replaces anything shaped like a Stripe key or webhook secret in `text` (Stripe's 401 message names the key, masked
 * but for its tail).
 */
function redactStripeSecrets(text: string): string {
  return text
    .replace(/\b(sk|rk|pk)_(test|live)_[A-Za-z0-9*]+/g, '[redacted key]')
    .replace(/\bwhsec_[A-Za-z0-9+/=]+/g, '[redacted secret]');
}

/**
 * The failure of a Stripe call (`action` says what was being done, e.g. "create the Price"): Stripe's
 * `code` and its message (keys redacted); retryable when Stripe could not be reached or timed out, for 5xx
 * and for 429. A refused key (401) or a key without a permission (403) names the fix instead. Errors that
 * are not the SDK's are thrown again (the caller treats them as unexpected). `errors`: the loaded SDK's
 * error classes (`client.errors`).
 */
export function stripeFailure(errors: StripeErrors, error: unknown, action: string): ProviderFailure {
  if (!(error instanceof errors.StripeError)) throw error;
  const code = error.code ?? null;
  if (error instanceof errors.StripeConnectionError)
    return { ok: false, reason: `Stripe could not be reached to ${action}.`, code, retryable: true };
  const status = error.statusCode ?? 0;
  const message = redactStripeSecrets(error.message);
  if (status === 429 || status >= 500 || error instanceof errors.StripeAPIError) {
    return {
      ok: false,
      reason: `Stripe failed to ${action} (HTTP ${status || 'error'}): ${message}`,
      code,
      retryable: true,
    };
  }
  if (error instanceof errors.StripeAuthenticationError || status === 401) {
    return {
      ok: false,
      reason: `Stripe does not accept the project\u2019s API key (${message}); connect Stripe again with a current restricted key.`,
      code,
      retryable: false,
    };
  }
  if (error instanceof errors.StripePermissionError || status === 403) {
    return {
      ok: false,
      reason: `The project\u2019s Stripe key may not ${action}: ${message} Give the restricted key the permissions docs/integrations.md lists (Products, Prices, Refunds, Subscriptions, Checkout Sessions and Customer portal: Write).`,
      code,
      retryable: false,
    };
  }
  return {
    ok: false,
    reason: `Stripe refused to ${action}: ${message}${code ? ` (${code})` : ''}`,
    code,
    retryable: false,
  };
}

/**
 * Checks a key before it is stored (`PUT /v1/projects/{id}/payment-provider`): ONE cheap read,
 * `GET /v1/products?limit=1` (`stripe.products.list`), which a restricted key with the permissions the
 * service needs anyway (Products: write) may make — unlike `GET /v1/account` or `GET /v1/balance`, which
 * need permissions the service never uses. Retried per `settings.retry` while Stripe is unreachable.
 * Returns `{ ok: true }` or the failure (`retryable`: Stripe could not be reached; else Stripe's refusal).
 */
export async function verifyStripeKey(
  settings: Pick<IntegrationSettings, 'stripeApiBaseUrl' | 'retry'>,
  secretKey: string,
): Promise<{ ok: true } | ProviderFailure> {
  const client = await stripeClient(settings, secretKey);
  return retryWhile(
    settings.retry,
    async (): Promise<{ ok: true } | ProviderFailure> => {
      try {
        await client.products.list({ limit: 1 });
        return { ok: true };
      } catch (error) {
        return stripeFailure(client.errors, error, 'list products with this key');
      }
    },
    (outcome) => !outcome.ok && outcome.retryable,
  );
}

/**
 * What {@link stripePaymentProvider} needs: the store (the project's credential) and the settings (read when a call is
 * made).
 */
export interface StripeAdapterDependencies {
  store: Store;
  settings: () => IntegrationSettings;
}

/** The Stripe client of a project (its stored key), or the non-retryable failure naming the fix when it has none. */
export function stripeClientOf(
  dependencies: StripeAdapterDependencies,
): (target: { team_id: string; project_id: string }) => Promise<Stripe | ProviderFailure> {
  return async (target) => {
    const settings = dependencies.settings();
    const credential = await openCredential(
      dependencies.store,
      settings.keyEncryptionKey,
      target.project_id,
      STRIPE_CREDENTIAL,
      target.team_id,
    );
    const secretKey = credential?.secrets.secret_key;
    if (!secretKey) {
      return {
        ok: false,
        reason: `No Stripe key is stored for project ${target.project_id}; connect Stripe with PUT /v1/projects/${target.project_id}/payment-provider.`,
        code: null,
        retryable: false,
      };
    }
    return stripeClient(settings, secretKey);
  };
}

/**
 * The Stripe `PaymentProviderAdapter` (D22): plan sync (Product upserted by {@link stripeProductId}; a Price is never
 * edited: a new one, amounts in minor units, replaces and deactivates it), refunds of the PaymentIntent, subscription
 * changes, checkout and billing portal sessions. No credential: non-retryable failure.
 */
export function stripePaymentProvider(dependencies: StripeAdapterDependencies): PaymentProviderAdapter {
  const clientOf = stripeClientOf(dependencies);

  const syncProduct = async (
    client: Stripe,
    plan: PlanForSync,
    existing: ProviderCatalogueIds | null,
  ): Promise<string> => {
    const fields = {
      name: plan.name,
      active: plan.active,
      metadata: { plan_id: plan.plan_id, project_id: plan.project_id, trial_days: String(plan.trial_days) },
    };
    const update = (id: string) => client.products.update(id, { ...fields, description: plan.description ?? '' });
    if (existing?.provider_product_id) {
      try {
        return (await update(existing.provider_product_id)).id;
      } catch (error) {
        if (!(error instanceof client.errors.StripeError && error.code === 'resource_missing')) throw error;
      }
    }
    const id = stripeProductId(plan.plan_id);
    try {
      return (
        await client.products.create({ id, ...fields, ...(plan.description ? { description: plan.description } : {}) })
      ).id;
    } catch (error) {
      if (error instanceof client.errors.StripeError && error.code === 'resource_already_exists')
        return (await update(id)).id;
      throw error;
    }
  };

  const syncPrice = async (
    client: Stripe,
    plan: PlanForSync,
    productId: string,
    existing: ProviderCatalogueIds | null,
  ): Promise<string> => {
    const wanted = desiredPrice(plan, productId);
    const previousId = existing?.provider_price_id ?? null;
    if (previousId) {
      let previous: Stripe.Price | null = null;
      try {
        previous = await client.prices.retrieve(previousId);
      } catch (error) {
        if (!(error instanceof client.errors.StripeError && error.code === 'resource_missing')) throw error;
      }
      if (previous && samePrice(previous, wanted)) {
        if (!previous.active) await client.prices.update(previous.id, { active: true });
        return previous.id;
      }
    }
    const idempotencyKey = `svc-price-${createHash('sha256').update(JSON.stringify(wanted)).digest('hex').slice(0, 32)}`;
    const created = await client.prices.create(wanted, { idempotencyKey });
    if (previousId && previousId !== created.id) {
      try {
        await client.prices.update(previousId, { active: false });
      } catch (error) {
        if (!(error instanceof client.errors.StripeError && error.code === 'resource_missing')) throw error;
      }
    }
    return created.id;
  };

  return {
    provider: 'stripe',
    async syncPlan(plan, existing): Promise<PlanSyncResult> {
      const client = await clientOf(plan);
      if ('ok' in client) return client;
      let action = 'sync the Product';
      try {
        const productId = await syncProduct(client, plan, existing);
        action = 'sync the Price';
        const priceId = await syncPrice(client, plan, productId, existing);
        return { ok: true, provider_product_id: productId, provider_price_id: priceId };
      } catch (error) {
        return stripeFailure(client.errors, error, action);
      }
    },
    async refund(request: RefundRequest): Promise<RefundResult> {
      if (!request.provider_payment_id?.startsWith('pi_')) {
        return {
          ok: false,
          reason: `Payment ${request.payment_id} has no Stripe PaymentIntent id (provider_payment_id pi_...), so Stripe cannot refund it.`,
          code: null,
          retryable: false,
        };
      }
      const client = await clientOf(request);
      if ('ok' in client) return client;
      try {
        const refund = await client.refunds.create(
          {
            payment_intent: request.provider_payment_id,
            amount: request.amount,
            metadata: {
              payment_id: request.payment_id,
              ...(request.reason ? { reason: request.reason.slice(0, 500) } : {}),
            },
          },
          { idempotencyKey: request.idempotency_key },
        );
        return { ok: true, provider_refund_id: refund.id };
      } catch (error) {
        return stripeFailure(client.errors, error, 'refund the payment');
      }
    },
    async changeSubscription(request): Promise<SubscriptionChangeResult> {
      const client = await clientOf(request);
      if ('ok' in client) return client;
      const action = request.change.kind === 'cancel' ? 'cancel the subscription' : 'update the subscription';
      try {
        const options = { idempotencyKey: request.idempotency_key };
        if (request.change.kind === 'cancel') {
          await client.subscriptions.cancel(request.provider_subscription_id, {}, options);
          return { ok: true };
        }
        // A price change replaces the subscription's one item: its id comes from Stripe (one read).
        const itemId =
          request.change.kind === 'change_price'
            ? ((await client.subscriptions.retrieve(request.provider_subscription_id)).items.data[0]?.id ?? null)
            : null;
        await client.subscriptions.update(
          request.provider_subscription_id,
          stripeSubscriptionUpdate(request.change, request.subscription_id, itemId)!,
          options,
        );
        return { ok: true };
      } catch (error) {
        return stripeFailure(client.errors, error, action);
      }
    },
    async createCheckoutSession(request): Promise<CheckoutSessionResult> {
      const client = await clientOf(request);
      if ('ok' in client) return client;
      try {
        const params = checkoutSessionParams(request);
        return checkoutSessionResult(
          await client.checkout.sessions.create(params, { idempotencyKey: request.idempotency_key }),
        );
      } catch (error) {
        return stripeFailure(client.errors, error, 'create a Checkout Session');
      }
    },
    async createGiftCheckoutSession(request) {
      const client = await clientOf(request);
      return 'ok' in client
        ? client
        : createStripeGiftCheckout(client, request, (error, action) => stripeFailure(client.errors, error, action));
    },
    async createBillingPortalSession(request): Promise<BillingPortalSessionResult> {
      const client = await clientOf(request);
      if ('ok' in client) return client;
      try {
        const session = await client.billingPortal.sessions.create({
          customer: request.provider_customer_id,
          return_url: request.return_url,
        });
        return { ok: true, url: session.url };
      } catch (error) {
        return stripeFailure(client.errors, error, 'create a Billing Portal session');
      }
    },

    async openInvoiceUrl(request) {
      const client = await clientOf(request);
      if ('ok' in client) return client;
      try {
        const invoices = await client.invoices.list({
          subscription: request.provider_subscription_id,
          status: 'open',
          limit: 1,
        });
        return { ok: true, url: invoices.data[0]?.hosted_invoice_url ?? null };
      } catch (error) {
        return stripeFailure(client.errors, error, 'read the open invoice');
      }
    },
  };
}
