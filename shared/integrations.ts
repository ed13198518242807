import { integrationConfig } from './config.js';
import { keyEncryptionKeyFromEnvironment } from './aws/key-encryption-key.js';
import type { KeyEncryptionKey } from './credentials/envelope.js';

/**
 * What the integrations need from their environment (DESIGN D16, D22): the key-encryption key of stored
 * credentials, where the Telegram Bot API and the Stripe API are, the service's public base URL (inbound hooks are registered
 * under it) and how outbound provider calls are retried. A runtime may carry its own (the local server,
 * tests pointing grammy at a loopback fake); otherwise {@link integrationsFromEnvironment} applies.
 */
export interface IntegrationSettings {
  keyEncryptionKey: KeyEncryptionKey;
  /** Root of the Telegram Bot API (`TELEGRAM_API_ROOT`), without a trailing slash. */
  telegramApiRoot: string;
  /** Base URL of the Stripe API (`STRIPE_API_BASE_URL`), without a trailing slash: the `stripe` SDK's host, port and protocol. */
  stripeApiBaseUrl: string;
  /** The signing secret of the operator's billing webhook (`BILLING_STRIPE_WEBHOOK_SECRET`, DESIGN D20); undefined: `POST /hooks/billing/stripe` refuses every event. */
  billingStripeWebhookSecret?: string;
  /** The service's public base URL (`PUBLIC_BASE_URL`), without a trailing slash; undefined when unknown (connecting a bot then fails). */
  publicBaseUrl?: string;
  /** Retries of an outbound provider call after its first attempt, and the first wait in milliseconds (doubling). */
  retry: { retries: number; minTimeoutMs: number };
}

/** Retries of outbound provider calls unless a runtime says otherwise: 3 more attempts, after 0.5, 1 and 2 seconds. */
export const DEFAULT_PROVIDER_RETRY = { retries: 3, minTimeoutMs: 500 } as const;

let fromEnvironment: IntegrationSettings | undefined;

/**
 * The integration settings of the process environment (`shared/config.ts`, built once): see
 * `keyEncryptionKeyFromEnvironment` and `integrationConfig`. Throws `ConfigurationError`.
 */
export function integrationsFromEnvironment(): IntegrationSettings {
  if (fromEnvironment) return fromEnvironment;
  const config = integrationConfig();
  fromEnvironment = { keyEncryptionKey: keyEncryptionKeyFromEnvironment(), telegramApiRoot: config.telegramApiRoot, stripeApiBaseUrl: config.stripeApiBaseUrl, billingStripeWebhookSecret: config.billingStripeWebhookSecret, publicBaseUrl: config.publicBaseUrl, retry: { ...DEFAULT_PROVIDER_RETRY } };
  return fromEnvironment;
}

/** A runtime that may carry integration settings (`Runtime.integrations`). */
export interface IntegrationRuntime {
  integrations?: IntegrationSettings;
}

/** The integration settings of `runtime`, or the environment's when it carries none. */
export function integrationsOf(runtime: IntegrationRuntime): IntegrationSettings {
  return runtime.integrations ?? integrationsFromEnvironment();
}
