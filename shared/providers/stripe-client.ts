import type Stripe from 'stripe';
import type { IntegrationSettings } from '../integrations.js';

/**
 * Builds every `stripe` SDK client (D16, D22), pointed at `settings.stripeApiBaseUrl`; SDK retries are off (callers
 * retry per `settings.retry`). The SDK (~250 KB) is imported on first use, a chunk of its own, so route bundles stay
 * small (D23).
 */

let sdk: Promise<typeof Stripe> | undefined;

/** The `stripe` SDK's class, imported once on first use (see above). */
function loadStripe(): Promise<typeof Stripe> {
  sdk ??= import('stripe').then((module) => module.default);
  return sdk;
}

/** The SDK's error classes (`client.errors`: `StripeError`, `StripeConnectionError`, `StripeAPIError`, ...). */
export type StripeErrors = Stripe['errors'];

/** Milliseconds the SDK waits for one Stripe API response before failing the call (a retryable failure). */
const STRIPE_REQUEST_TIMEOUT_MS = 10_000;

/**
 * The SDK's `host`, `port` and `protocol` options for a base URL such as `https://api.stripe.com` or
 * `http://127.0.0.1:12111`.
 */
function stripeAddress(baseUrl: string): { host: string; port: number; protocol: 'http' | 'https' } {
  const url = new URL(baseUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: url.port ? Number(url.port) : protocol === 'http' ? 80 : 443, protocol };
}

/**
 * A Stripe API client authenticated with `secretKey` (a project's restricted key, `rk_...`, or a secret
 * key, `sk_...`), talking to `settings.stripeApiBaseUrl`. Never logs the key; errors the SDK throws are
 * `Stripe.errors.StripeError` subclasses (their `code`, `type`, `statusCode` and `message` are Stripe's).
 */
export async function stripeClient(
  settings: Pick<IntegrationSettings, 'stripeApiBaseUrl'>,
  secretKey: string,
): Promise<Stripe> {
  const Sdk = await loadStripe();
  return new Sdk(secretKey, {
    ...stripeAddress(settings.stripeApiBaseUrl),
    maxNetworkRetries: 0,
    timeout: STRIPE_REQUEST_TIMEOUT_MS,
    telemetry: false,
  });
}

/**
 * The SDK's webhook helpers (`constructEvent`, `generateTestHeaderString`) without an API key: verifying
 * an inbound event needs only its endpoint's signing secret (DESIGN D22).
 */
export async function stripeWebhooks(): Promise<Stripe['webhooks']> {
  return (await loadStripe()).webhooks;
}
