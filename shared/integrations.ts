import { integrationConfig } from './config.js';
import { keyEncryptionKeyFromEnvironment } from './aws/key-encryption-key.js';
import type { KeyEncryptionKey } from './credentials/envelope.js';
import type { SecretValueReader } from './aws/secrets-manager.js';
import { logger } from './logger.js';
import { STRIPE_WEBHOOK_SECRET_PATTERN } from './providers/stripe-keys.js';

/**
 * What the integrations need from their environment (DESIGN D16, D22): the key-encryption key of stored credentials,
 * where the Telegram Bot API and the Stripe API are, the service's public base URL (inbound hooks are registered under
 * it) and how outbound provider calls are retried. A runtime may carry its own (the local server, tests pointing grammy
 * at a loopback fake); otherwise {@link integrationsFromEnvironment} applies.
 */
export interface IntegrationSettings {
  keyEncryptionKey: KeyEncryptionKey;
  /** Root of the Telegram Bot API (`TELEGRAM_API_ROOT`), without a trailing slash. */
  telegramApiRoot: string;
  /**
   * Base URL of the Stripe API (`STRIPE_API_BASE_URL`), without a trailing slash: the `stripe` SDK's host, port and
   * protocol.
   */
  stripeApiBaseUrl: string;
  /**
   * Base URL of the Discord API (`DISCORD_API_BASE_URL`, DESIGN D28), without a trailing slash: the REST client's `api`
   * and the OAuth2 token endpoint's host. Undefined: `DEFAULT_DISCORD_API_BASE_URL` (`https://discord.com/api`).
   */
  discordApiBaseUrl?: string;
  /**
   * The signing secret of the operator's billing webhook (DESIGN D20): the value itself
   * (`BILLING_STRIPE_WEBHOOK_SECRET`: local runs, tests), or a reader of it (on AWS the Secrets Manager secret
   * `BILLING_STRIPE_WEBHOOK_SECRET_ARN`, read lazily and cached; see {@link integrationsFromEnvironment}) that
   * resolves to undefined while there is none. Undefined: `POST /hooks/billing/stripe` refuses every event.
   * Read it through {@link billingStripeWebhookSecretOf}.
   */
  billingStripeWebhookSecret?: string | SecretValueReader;
  /**
   * The service's public base URL (`PUBLIC_BASE_URL`), without a trailing slash; undefined when unknown (connecting a
   * bot then fails).
   */
  publicBaseUrl?: string;
  /**
   * Where the dashboard is served (`DASHBOARD_BASE_URL`, the REST API's base URL on AWS), without a trailing slash: the
   * tool server's OAuth consent happens there (DESIGN D30). Undefined: the request's own origin (the local server).
   */
  dashboardBaseUrl?: string;
  /** Retries of an outbound provider call after its first attempt, and the first wait in milliseconds (doubling). */
  retry: { retries: number; minTimeoutMs: number };
}

/** Retries of outbound provider calls unless a runtime says otherwise: 3 more attempts, after 0.5, 1 and 2 seconds. */
export const DEFAULT_PROVIDER_RETRY = { retries: 3, minTimeoutMs: 500 } as const;

let fromEnvironment: IntegrationSettings | undefined;

/**
 * The integration settings of the process environment (`shared/config.ts`, built once): see
 * `keyEncryptionKeyFromEnvironment` and `integrationConfig`. The billing hook's signing secret is
 * `BILLING_STRIPE_WEBHOOK_SECRET` when set, else — on AWS — the Secrets Manager secret
 * `BILLING_STRIPE_WEBHOOK_SECRET_ARN` names ({@link secretsManagerSigningSecret}), else none. Throws
 * `ConfigurationError`.
 */
export function integrationsFromEnvironment(): IntegrationSettings {
  return (fromEnvironment ??= integrationSettingsOf(process.env));
}

/**
 * The integration settings `env` describes, built anew (see {@link integrationsFromEnvironment}, which builds them
 * once). Throws `ConfigurationError`.
 */
export function integrationSettingsOf(env: NodeJS.ProcessEnv): IntegrationSettings {
  const config = integrationConfig(env);
  const billingStripeWebhookSecret =
    config.billingStripeWebhookSecret ??
    (config.billingStripeWebhookSecretArn
      ? secretsManagerSigningSecret(config.billingStripeWebhookSecretArn)
      : undefined);
  return {
    keyEncryptionKey: keyEncryptionKeyFromEnvironment(env),
    telegramApiRoot: config.telegramApiRoot,
    stripeApiBaseUrl: config.stripeApiBaseUrl,
    discordApiBaseUrl: config.discordApiBaseUrl,
    billingStripeWebhookSecret,
    publicBaseUrl: config.publicBaseUrl,
    dashboardBaseUrl: config.dashboardBaseUrl,
    retry: { ...DEFAULT_PROVIDER_RETRY },
  };
}

/**
 * The Stripe signing secret held by the Secrets Manager secret `secretArn` (DESIGN D16 storage rules, D20):
 * the adapter (`shared/aws/secrets-manager.ts`, imported on first use so the functions that never read it do
 * not load the Secrets Manager client) reads it lazily and caches it; {@link stripeSigningSecretOnly} turns
 * a placeholder into "no secret". Rejects when Secrets Manager fails (the hook answers 500; Stripe retries).
 */
function secretsManagerSigningSecret(secretArn: string): SecretValueReader {
  let reader: Promise<SecretValueReader> | undefined;
  const read: SecretValueReader = async () => {
    reader ??= import('./aws/secrets-manager.js').then((adapter) => adapter.awsSecret(secretArn));
    return (await reader)();
  };
  return stripeSigningSecretOnly(read, secretArn);
}

/**
 * `read`, with every value that is not a Stripe webhook signing secret (`STRIPE_WEBHOOK_SECRET_PATTERN`,
 * `whsec_...`) turned into `undefined` — no value, an empty one, or the random placeholder the stack's secret
 * is created with — so the hook refuses every event as with no secret. The first such answer after a usable one
 * (or after start) is logged once as a warning naming `secretId` and why, never the value; a usable value
 * re-arms the warning. Rejections of `read` pass through.
 */
export function stripeSigningSecretOnly(read: SecretValueReader, secretId: string): SecretValueReader {
  let warned = false;
  return async () => {
    const value = await read();
    if (value !== undefined && STRIPE_WEBHOOK_SECRET_PATTERN.test(value)) {
      warned = false;
      return value;
    }
    if (!warned) {
      warned = true;
      logger.warn('billing webhook signing secret not set: POST /hooks/billing/stripe refuses every event', {
        secret_id: secretId,
        reason:
          value === undefined ? 'the secret has no value' : 'the value is not a Stripe signing secret (whsec_...)',
      });
    }
    return undefined;
  };
}

/**
 * The operator's billing webhook signing secret (DESIGN D20) of `runtime`'s integration settings
 * ({@link IntegrationSettings.billingStripeWebhookSecret}): the value, what its reader resolves to, or
 * undefined (none: the hook refuses every event). Rejects when the reader fails (Secrets Manager unreachable).
 */
export async function billingStripeWebhookSecretOf(runtime: IntegrationRuntime): Promise<string | undefined> {
  const secret = integrationsOf(runtime).billingStripeWebhookSecret;
  return typeof secret === 'function' ? secret() : secret;
}

/** A runtime that may carry integration settings (`Runtime.integrations`). */
export interface IntegrationRuntime {
  integrations?: IntegrationSettings;
}

/** The integration settings of `runtime`, or the environment's when it carries none. */
export function integrationsOf(runtime: IntegrationRuntime): IntegrationSettings {
  return runtime.integrations ?? integrationsFromEnvironment();
}
