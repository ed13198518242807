import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { systemClock, type Clock } from '../clock.js';
import { awsClient } from './clients.js';

/**
 * How long a secret value read from Secrets Manager is used before it is read again, in MILLISECONDS:
 * 5 minutes, the default TTL of AWS's own Parameters and Secrets Lambda Extension. A warm execution
 * environment reads a secret at most once per period (the first read is lazy: on first use after a cold
 * start), and a value the operator puts later (`put-secret-value`, a rolled Stripe secret) is picked up
 * within one period without a deployment.
 */
export const SECRET_VALUE_MAX_AGE_MS = 5 * 60 * 1000;

/** Options of {@link secretsManagerSecret}. */
export interface SecretsManagerSecretOptions {
  /** Milliseconds a read value (or absence) is kept. @default {@link SECRET_VALUE_MAX_AGE_MS} */
  readonly maxAgeMs?: number;
  /** The clock that ages the cached value. @default the system clock */
  readonly clock?: Clock;
}

/** Reads a secret's current value: the text, or `undefined` when there is none. */
export type SecretValueReader = () => Promise<string | undefined>;

/**
 * The error of `GetSecretValue` that means "no current value" rather than a failure: the secret or its `AWSCURRENT`
 * version does not exist.
 */
const NO_VALUE_ERROR = 'ResourceNotFoundException';

/**
 * Cached reader of one Secrets Manager secret (D16): `AWSCURRENT` of `secretId` for `maxAgeMs`, concurrent calls
 * sharing one request. Resolves to the trimmed value or `undefined` (none, blank, not found; cached). Other failures
 * reject with the SDK error (never holding the value), uncached.
 */
export function secretsManagerSecret(
  client: SecretsManagerClient,
  secretId: string,
  options: SecretsManagerSecretOptions = {},
): SecretValueReader {
  const maxAgeMs = options.maxAgeMs ?? SECRET_VALUE_MAX_AGE_MS;
  const clock = options.clock ?? systemClock;
  let cached: { value: Promise<string | undefined>; readAtMs: number } | undefined;

  const read = async (): Promise<string | undefined> => {
    try {
      const result = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
      const text = result.SecretString?.trim();
      return text ? text : undefined;
    } catch (error) {
      if ((error as { name?: string }).name === NO_VALUE_ERROR) return undefined;
      throw error;
    }
  };

  return () => {
    const nowMs = clock.nowMs();
    if (cached && nowMs - cached.readAtMs < maxAgeMs) return cached.value;
    const entry = { value: read(), readAtMs: nowMs };
    cached = entry;
    entry.value.catch(() => {
      if (cached === entry) cached = undefined;
    });
    return entry.value;
  };
}

/**
 * {@link secretsManagerSecret} with the function's own Secrets Manager client (region and credentials from the
 * Lambda environment, instrumented through {@link awsClient}). `secretId` is the secret's ARN.
 */
export function awsSecret(secretId: string, options: SecretsManagerSecretOptions = {}): SecretValueReader {
  return secretsManagerSecret(awsClient(new SecretsManagerClient({})), secretId, options);
}
