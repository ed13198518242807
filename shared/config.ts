import * as z from './schemas/zod.js';

/**
 * The service's configuration: one zod schema of environment variables (DESIGN §2). `lib/` imports
 * {@link ENVIRONMENT_VARIABLES} to set the names it passes to every Lambda; the Lambda runtime and the
 * local server parse them here, and a missing or malformed required setting fails at start-up with a
 * message naming it.
 */

/** The name of every environment variable the service reads. */
export const ENVIRONMENT_VARIABLES = {
  tableName: 'TABLE_NAME',
  deadLetterTableName: 'DEAD_LETTER_TABLE_NAME',
  dynamoDbEndpoint: 'DYNAMODB_ENDPOINT',
  deliveryQueueUrl: 'DELIVERY_QUEUE_URL',
  deliveryQueueArn: 'DELIVERY_QUEUE_ARN',
  jobQueueUrl: 'JOB_QUEUE_URL',
  schedulerGroupName: 'SCHEDULER_GROUP_NAME',
  schedulerRoleArn: 'SCHEDULER_ROLE_ARN',
  host: 'HOST',
  port: 'PORT',
  dynamoDbLocalPort: 'DYNAMODB_LOCAL_PORT',
  dataDirectory: 'DATA_DIR',
  timeScale: 'TIME_SCALE',
  demoHistory: 'DEMO_HISTORY',
  webhookExtraCaFile: 'WEBHOOK_EXTRA_CA_FILE',
  webhookAllowPrivateTargets: 'WEBHOOK_ALLOW_PRIVATE_TARGETS',
  encryptionKey: 'ENCRYPTION_KEY',
  credentialsKmsKeyId: 'CREDENTIALS_KMS_KEY_ID',
  telegramApiRoot: 'TELEGRAM_API_ROOT',
  stripeApiBaseUrl: 'STRIPE_API_BASE_URL',
  discordApiBaseUrl: 'DISCORD_API_BASE_URL',
  billingStripeWebhookSecret: 'BILLING_STRIPE_WEBHOOK_SECRET',
  billingStripeWebhookSecretArn: 'BILLING_STRIPE_WEBHOOK_SECRET_ARN',
  publicBaseUrl: 'PUBLIC_BASE_URL',
  dashboardBaseUrl: 'DASHBOARD_BASE_URL',
  smtpUrl: 'SMTP_URL',
  mailFrom: 'MAIL_FROM',
  maildevSmtpPort: 'MAILDEV_SMTP_PORT',
  maildevWebPort: 'MAILDEV_WEB_PORT',
} as const;

/** Path of the MCP tool server on its API (`{mcp_url}` = API URL + this path), on AWS and locally. */
export const MCP_PATH = '/mcp';

/**
 * The well-known path prefix of OAuth 2.0 Protected Resource Metadata (RFC 9728 §3) on the tool server's
 * API. The document is served at the prefix itself and at prefix + {@link MCP_PATH} (the path-suffixed
 * form RFC 9728 §3.1 derives from `{mcp_url}`, which MCP clients try first).
 */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/** Every path the tool server's API answers with its protected-resource metadata (`GET`), on AWS and locally. */
export const PROTECTED_RESOURCE_METADATA_PATHS: readonly string[] = [
  PROTECTED_RESOURCE_METADATA_PATH,
  `${PROTECTED_RESOURCE_METADATA_PATH}${MCP_PATH}`,
];

/** Table names used when none is configured (the local server, the CLI and the bench). */
const DEFAULT_TABLE_NAMES = { table: 'membership', deadLetterTable: 'membership-dead-letters' } as const;
/** Default port of the local server (`PORT`). */
const DEFAULT_PORT = 3000;
/** Default host of the local server (`HOST`): loopback only. */
const DEFAULT_HOST = '127.0.0.1';
/** Default port of the embedded DynamoDB Local (`DYNAMODB_LOCAL_PORT`). */
const DEFAULT_DYNAMODB_LOCAL_PORT = 8000;

/**
 * The key-encryption key of stored credentials for local runs and tests when `ENCRYPTION_KEY` is not set
 * (base64 of 32 bytes; DESIGN D16). It is public — it is written here — so it protects nothing: set your own
 * `ENCRYPTION_KEY` (`openssl rand -base64 32`) for any data you keep. Lambda functions never use it: on AWS
 * the stack's KMS key (`CREDENTIALS_KMS_KEY_ID`) wraps every data key.
 */
export const DEFAULT_LOCAL_ENCRYPTION_KEY = 'bG9jYWwtZGV2ZWxvcG1lbnQta2V5LW5vdC1zZWNyZXQ=';
/** The Telegram Bot API root grammy talks to when `TELEGRAM_API_ROOT` is not set. */
const DEFAULT_TELEGRAM_API_ROOT = 'https://api.telegram.org';
/** The Stripe API the `stripe` SDK talks to when `STRIPE_API_BASE_URL` is not set. */
const DEFAULT_STRIPE_API_BASE_URL = 'https://api.stripe.com';
/** The Discord API (REST and OAuth2 token and user endpoints) when `DISCORD_API_BASE_URL` is not set (DESIGN D28). */
export const DEFAULT_DISCORD_API_BASE_URL = 'https://discord.com/api';

const V = ENVIRONMENT_VARIABLES;
const text = () => z.string().check(z.trim(), z.minLength(1));
const optionalText = () =>
  z.pipe(
    z.optional(z.string()),
    z.transform((value) => (value && value.trim() ? value.trim() : undefined)),
  );
const port = (fallback: number, minimum: number) =>
  z._default(z.coerce.number().check(z.int(), z.gte(minimum), z.lte(65535)), fallback);

/** What every Lambda function reads (set by the CDK stack). */
const LambdaEnvironment = z.object({
  [V.tableName]: text(),
  [V.deadLetterTableName]: text(),
  [V.deliveryQueueUrl]: text(),
  [V.jobQueueUrl]: text(),
  [V.dynamoDbEndpoint]: optionalText(),
});

/** What the webhook workers read besides {@link LambdaEnvironment} (retry timers). */
const SchedulerEnvironment = z.object({
  [V.deliveryQueueArn]: text(),
  [V.schedulerGroupName]: text(),
  [V.schedulerRoleArn]: text(),
});

/** What the local server (`npm start`), the CLI and the bench read; every setting has a default. */
const LocalEnvironment = z.object({
  [V.host]: z._default(text(), DEFAULT_HOST),
  [V.port]: port(DEFAULT_PORT, 0),
  [V.dynamoDbEndpoint]: optionalText(),
  [V.dynamoDbLocalPort]: port(DEFAULT_DYNAMODB_LOCAL_PORT, 1),
  [V.dataDirectory]: optionalText(),
  [V.tableName]: z._default(text(), DEFAULT_TABLE_NAMES.table),
  [V.deadLetterTableName]: z._default(text(), DEFAULT_TABLE_NAMES.deadLetterTable),
  [V.timeScale]: z._default(z.coerce.number().check(z.gte(1, 'must be a number ≥ 1')), 1),
  [V.demoHistory]: z._default(z.enum(['0', '1']), '1'),
  [V.webhookExtraCaFile]: optionalText(),
  [V.webhookAllowPrivateTargets]: z._default(z.enum(['0', '1', '']), '0'),
  [V.maildevSmtpPort]: port(0, 0),
  [V.maildevWebPort]: port(0, 0),
});

/** What the integrations read (DESIGN D16, D22): every function and the local server; all optional. */
const IntegrationEnvironment = z.object({
  [V.encryptionKey]: optionalText().check(
    z.refine(
      (value) => value === undefined || Buffer.from(value, 'base64').length === 32,
      'must be the base64 text of 32 random bytes (openssl rand -base64 32)',
    ),
  ),
  [V.credentialsKmsKeyId]: optionalText(),
  [V.telegramApiRoot]: z.pipe(optionalText(), z.optional(z.url({ protocol: /^https?$/ }))),
  [V.stripeApiBaseUrl]: z.pipe(optionalText(), z.optional(z.url({ protocol: /^https?$/ }))),
  [V.discordApiBaseUrl]: z.pipe(optionalText(), z.optional(z.url({ protocol: /^https?$/ }))),
  [V.billingStripeWebhookSecret]: optionalText(),
  [V.billingStripeWebhookSecretArn]: optionalText(),
  [V.publicBaseUrl]: z.pipe(optionalText(), z.optional(z.url({ protocol: /^https?$/ }))),
  [V.dashboardBaseUrl]: z.pipe(optionalText(), z.optional(z.url({ protocol: /^https?$/ }))),
});

/**
 * What the e-mail channel reads (DESIGN D32), all optional: `SMTP_URL` (`smtp://` or `smtps://`, credentials in the
 * URL) sends through that server; otherwise `MAIL_FROM` alone sends through SES.
 */
const MailEnvironment = z.object({
  [V.smtpUrl]: z.pipe(optionalText(), z.optional(z.url({ protocol: /^smtps?$/ }))),
  [V.mailFrom]: z.pipe(optionalText(), z.optional(z.email())),
});

/** A setting is missing or malformed; the message names it. */
export class ConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}

function parse<S extends z.ZodMiniObject>(schema: S, env: NodeJS.ProcessEnv, where: string): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue: z.core.$ZodIssue) => {
    const name = String(issue.path[0]);
    return env[name] === undefined ? `${name} is required` : `${name} ${issue.message}`;
  });
  throw new ConfigurationError(`Configuration of ${where}: ${problems.join('; ')}.`);
}

/** Settings of a Lambda function of the service (parsed once, at cold start). Throws {@link ConfigurationError}. */
export function lambdaConfig(env: NodeJS.ProcessEnv = process.env) {
  const parsed = parse(LambdaEnvironment, env, 'the Lambda function');
  return {
    tableName: parsed[V.tableName],
    deadLetterTableName: parsed[V.deadLetterTableName],
    deliveryQueueUrl: parsed[V.deliveryQueueUrl],
    jobQueueUrl: parsed[V.jobQueueUrl],
    dynamoDbEndpoint: parsed[V.dynamoDbEndpoint],
  };
}

/**
 * Settings of the retry scheduler (EventBridge Scheduler) of the webhook workers. Throws {@link ConfigurationError}.
 */
export function schedulerConfig(env: NodeJS.ProcessEnv = process.env) {
  const parsed = parse(SchedulerEnvironment, env, 'the retry scheduler');
  return {
    queueArn: parsed[V.deliveryQueueArn],
    groupName: parsed[V.schedulerGroupName],
    roleArn: parsed[V.schedulerRoleArn],
  };
}

/** Settings of the local server, the CLI and the bench (all with defaults). Throws {@link ConfigurationError}. */
export function localConfig(env: NodeJS.ProcessEnv = process.env) {
  const parsed = parse(LocalEnvironment, env, 'the local server');
  return {
    host: parsed[V.host],
    port: parsed[V.port],
    dynamoDbEndpoint: parsed[V.dynamoDbEndpoint],
    dynamoDbLocalPort: parsed[V.dynamoDbLocalPort],
    dataDirectory: parsed[V.dataDirectory],
    tableName: parsed[V.tableName],
    deadLetterTableName: parsed[V.deadLetterTableName],
    timeScale: parsed[V.timeScale],
    demoHistory: parsed[V.demoHistory] === '1',
    webhookExtraCaFile: parsed[V.webhookExtraCaFile],
    allowPrivateTargets: parsed[V.webhookAllowPrivateTargets] === '1',
    // The embedded MailDev's ports; 0: free ones.
    inboxPorts: { smtp: parsed[V.maildevSmtpPort], web: parsed[V.maildevWebPort] },
  };
}

/**
 * Integration settings (D16, D20, D22, D30) for Lambdas and the local server, per field below. Throws {@link
 * ConfigurationError}.
 */
export function integrationConfig(env: NodeJS.ProcessEnv = process.env) {
  const parsed = parse(IntegrationEnvironment, env, 'the integrations');
  return {
    // The local key-encryption key (base64 of 32 bytes); unset: `keyEncryptionKeyFromEnvironment` uses
    // DEFAULT_LOCAL_ENCRYPTION_KEY.
    encryptionKey: parsed[V.encryptionKey],
    // The stack's KMS key: when set it wraps every data key instead.
    credentialsKmsKeyId: parsed[V.credentialsKmsKeyId],
    telegramApiRoot: (parsed[V.telegramApiRoot] ?? DEFAULT_TELEGRAM_API_ROOT).replace(/\/+$/, ''),
    stripeApiBaseUrl: (parsed[V.stripeApiBaseUrl] ?? DEFAULT_STRIPE_API_BASE_URL).replace(/\/+$/, ''),
    // Of the REST client and the OAuth2 token endpoint.
    discordApiBaseUrl: (parsed[V.discordApiBaseUrl] ?? DEFAULT_DISCORD_API_BASE_URL).replace(/\/+$/, ''),
    // The operator's billing hook signing secret (D20): local runs and tests only.
    billingStripeWebhookSecret: parsed[V.billingStripeWebhookSecret],
    // On AWS its Secrets Manager ARN, billing hook only (the value is never in the environment); neither set: the hook
    // refuses every event.
    billingStripeWebhookSecretArn: parsed[V.billingStripeWebhookSecretArn],
    // The base URL inbound hooks register under; unset: the caller's own.
    publicBaseUrl: parsed[V.publicBaseUrl]?.replace(/\/+$/, ''),
    // Where OAuth consent happens when MCP is another origin (D30); unset: the request's origin.
    dashboardBaseUrl: parsed[V.dashboardBaseUrl]?.replace(/\/+$/, ''),
  };
}

/**
 * Settings of the e-mail channel (DESIGN D32): `smtpUrl` and `mailFrom` (a bare address), each undefined when unset.
 * Throws {@link ConfigurationError} naming a malformed value.
 */
export function mailConfig(env: NodeJS.ProcessEnv = process.env) {
  const parsed = parse(MailEnvironment, env, 'the e-mail channel');
  return { smtpUrl: parsed[V.smtpUrl], mailFrom: parsed[V.mailFrom] };
}
