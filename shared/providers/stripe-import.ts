import type Stripe from 'stripe';
import type { ProviderFailure } from './payment-provider.js';
import { stripeClientOf, stripeFailure, type StripeAdapterDependencies } from './stripe.js';

/**
 * Stripe reads of an import (DESIGN D34): one page of a project's Prices (with their Product), Customers or
 * Subscriptions (every status), through the project's own key. Read-only: nothing here creates, updates, charges or
 * refunds. Pages are Stripe's list pagination (`limit`, `starting_after`, `has_more`) one call at a time — the job
 * stores the cursor between pages instead of the SDK's in-process auto-pagination, so a crash resumes at the page it
 * stopped.
 */

/** Objects read per Stripe list call (Stripe's maximum). */
const STRIPE_IMPORT_PAGE_SIZE = 100;

/** What an import reads, by the kind it becomes. */
export interface StripeImportObjects {
  plans: Stripe.Price;
  subscribers: Stripe.Customer;
  subscriptions: Stripe.Subscription;
}

/** One page of a list: its objects and whether more follow. */
export interface StripeImportPage<T> {
  ok: true;
  data: T[];
  hasMore: boolean;
}

/**
 * Reads one page of `kind` after `startingAfter` (a Stripe id, null for the first page) with the project's key.
 * Returns the page or the failure (`retryable` for 429, 5xx and an unreachable Stripe; see `stripeFailure`).
 */
export function stripeImportReader(dependencies: StripeAdapterDependencies) {
  const clientOf = stripeClientOf(dependencies);
  return async <K extends keyof StripeImportObjects>(
    target: { team_id: string; project_id: string },
    kind: K,
    startingAfter: string | null,
  ): Promise<StripeImportPage<StripeImportObjects[K]> | ProviderFailure> => {
    const client = await clientOf(target);
    if (!('prices' in client)) return client;
    const page = { limit: STRIPE_IMPORT_PAGE_SIZE, ...(startingAfter ? { starting_after: startingAfter } : {}) };
    try {
      const list =
        kind === 'plans'
          ? await client.prices.list({ ...page, expand: ['data.product'] })
          : kind === 'subscribers'
            ? await client.customers.list(page)
            : await client.subscriptions.list({ ...page, status: 'all' });
      return { ok: true, data: list.data as StripeImportObjects[K][], hasMore: list.has_more };
    } catch (error) {
      return stripeFailure(
        client.errors,
        error,
        `list the ${kind === 'plans' ? 'prices' : kind === 'subscribers' ? 'customers' : 'subscriptions'} to import`,
      );
    }
  };
}

/**
 * Whether a subscription of price `priceId` (every status but canceled) matches `wanted`, with the project's key: pages
 * the subscriptions of that price until one does. Returns the answer or the failure (`retryable` for 429, 5xx and an
 * unreachable Stripe). Read-only.
 */
export function stripePriceUseReader(dependencies: StripeAdapterDependencies) {
  const clientOf = stripeClientOf(dependencies);
  return async (
    target: { team_id: string; project_id: string },
    priceId: string,
    wanted: (subscription: Stripe.Subscription) => boolean,
  ): Promise<{ ok: true; used: boolean } | ProviderFailure> => {
    const client = await clientOf(target);
    if (!('subscriptions' in client)) return client;
    try {
      for await (const subscription of client.subscriptions.list({ price: priceId, limit: STRIPE_IMPORT_PAGE_SIZE }))
        if (wanted(subscription)) return { ok: true, used: true };
      return { ok: true, used: false };
    } catch (error) {
      return stripeFailure(client.errors, error, `list the subscriptions of Stripe price ${priceId}`);
    }
  };
}

/**
 * Reads one Stripe subscription by id with the project's key (an audit's repair: what Stripe has now). Returns it or
 * the failure (`retryable` for 429, 5xx and an unreachable Stripe). Read-only.
 */
export function stripeSubscriptionRetriever(dependencies: StripeAdapterDependencies) {
  const clientOf = stripeClientOf(dependencies);
  return async (
    target: { team_id: string; project_id: string },
    subscriptionId: string,
  ): Promise<{ ok: true; subscription: Stripe.Subscription } | ProviderFailure> => {
    const client = await clientOf(target);
    if (!('subscriptions' in client)) return client;
    try {
      return { ok: true, subscription: await client.subscriptions.retrieve(subscriptionId) };
    } catch (error) {
      return stripeFailure(client.errors, error, `read Stripe subscription ${subscriptionId}`);
    }
  };
}
