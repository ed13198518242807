/**
 * The Secrets Manager adapter (`shared/aws/secrets-manager.ts`) behind the operator billing hook's signing
 * secret on AWS (DESIGN D20, D16 storage rules), with aws-sdk-client-mock: the exact
 * `GetSecretValue` input, one read then the cached answer (concurrent first calls included) until it is
 * `SECRET_VALUE_MAX_AGE_MS` old, "no secret" for a missing or blank value, failures not cached; and the
 * settings built from the environment: the value variable wins, else the secret's ARN, and a placeholder
 * (not `whsec_...`) is "no secret", logged once without the value.
 */
import {
  GetSecretValueCommand,
  InternalServiceError,
  ResourceNotFoundException,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SECRET_VALUE_MAX_AGE_MS, secretsManagerSecret } from '../../shared/aws/secrets-manager.js';
import { manualClock } from '../../shared/clock.js';
import {
  billingStripeWebhookSecretOf,
  integrationSettingsOf,
  stripeSigningSecretOnly,
} from '../../shared/integrations.js';
import { logger } from '../../shared/logger.js';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:billing-webhook-AbC123';
const SIGNING_SECRET = 'whsec_0123456789abcdefABCDEF0123456789';

const secretsManager = mockClient(SecretsManagerClient);

beforeEach(() => {
  secretsManager.reset();
});

afterEach(() => {
  vi.restoreAllMocks();
});

const client = () => new SecretsManagerClient({ region: 'eu-west-1' });
const notFound = () =>
  new ResourceNotFoundException({ message: "Secrets Manager can't find the specified secret.", $metadata: {} });

describe('secretsManagerSecret', () => {
  it('reads the secret once (GetSecretValue of its ARN) and answers from the cache after, concurrent first calls included', async () => {
    secretsManager.on(GetSecretValueCommand).resolves({ ARN: SECRET_ARN, SecretString: `${SIGNING_SECRET}\n` });
    const read = secretsManagerSecret(client(), SECRET_ARN, { clock: manualClock(1_000_000) });

    expect(await Promise.all([read(), read()])).toEqual([SIGNING_SECRET, SIGNING_SECRET]);
    expect(await read()).toBe(SIGNING_SECRET);
    const calls = secretsManager.commandCalls(GetSecretValueCommand);
    expect(calls).toHaveLength(1);
    expect(calls[0].args[0].input).toEqual({ SecretId: SECRET_ARN });
  });

  it('reads again once the cached value is SECRET_VALUE_MAX_AGE_MS old, picking up a value put since', async () => {
    const clock = manualClock(1_000_000);
    secretsManager
      .on(GetSecretValueCommand)
      .resolvesOnce({ SecretString: 'generated-placeholder' })
      .resolves({ SecretString: SIGNING_SECRET });
    const read = secretsManagerSecret(client(), SECRET_ARN, { clock });

    expect(await read()).toBe('generated-placeholder');
    clock.advance(SECRET_VALUE_MAX_AGE_MS - 1);
    expect(await read()).toBe('generated-placeholder');
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(1);
    clock.advance(1);
    expect(await read()).toBe(SIGNING_SECRET);
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });

  it('answers undefined ("no secret") when the secret has no value, a blank one, or no current version; the absence is cached too', async () => {
    for (const answer of [
      {},
      { SecretString: '' },
      { SecretString: '  \n' },
      { SecretBinary: new Uint8Array([1, 2, 3]) },
    ]) {
      secretsManager.reset();
      secretsManager.on(GetSecretValueCommand).resolves(answer);
      const read = secretsManagerSecret(client(), SECRET_ARN, { clock: manualClock(1_000_000) });
      expect(await read(), JSON.stringify(answer)).toBeUndefined();
      expect(await read()).toBeUndefined();
      expect(secretsManager.commandCalls(GetSecretValueCommand), JSON.stringify(answer)).toHaveLength(1);
    }
    secretsManager.reset();
    secretsManager.on(GetSecretValueCommand).rejects(notFound());
    expect(await secretsManagerSecret(client(), SECRET_ARN, { clock: manualClock(1_000_000) })()).toBeUndefined();
  });

  it('passes any other failure through and does not cache it: the next call asks again', async () => {
    secretsManager
      .on(GetSecretValueCommand)
      .rejectsOnce(new InternalServiceError({ message: 'try again', $metadata: {} }))
      .resolves({ SecretString: SIGNING_SECRET });
    const read = secretsManagerSecret(client(), SECRET_ARN, { clock: manualClock(1_000_000) });

    await expect(read()).rejects.toThrow(InternalServiceError);
    expect(await read()).toBe(SIGNING_SECRET);
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(2);
  });
});

describe('stripeSigningSecretOnly', () => {
  it('passes a whsec_ value through, and turns anything else into "no secret", logged once without the value until a usable one appears', async () => {
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    const answers: (string | undefined)[] = ['GeneratedPlaceholder0123456789ab', undefined, SIGNING_SECRET, ''];
    const secret = stripeSigningSecretOnly(async () => answers.shift(), SECRET_ARN);

    expect(await secret()).toBeUndefined();
    expect(await secret()).toBeUndefined();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(await secret()).toBe(SIGNING_SECRET);
    expect(await secret()).toBeUndefined();
    expect(warn).toHaveBeenCalledTimes(2);
    const logged = JSON.stringify(warn.mock.calls);
    expect(logged).toContain(SECRET_ARN);
    expect(logged).not.toContain('GeneratedPlaceholder');
    expect(logged).not.toContain(SIGNING_SECRET);
  });
});

describe('the billing hook’s signing secret from the environment', () => {
  it('is BILLING_STRIPE_WEBHOOK_SECRET when set (local), without asking Secrets Manager', async () => {
    const settings = integrationSettingsOf({
      BILLING_STRIPE_WEBHOOK_SECRET: SIGNING_SECRET,
      BILLING_STRIPE_WEBHOOK_SECRET_ARN: SECRET_ARN,
    });
    expect(await billingStripeWebhookSecretOf({ integrations: settings })).toBe(SIGNING_SECRET);
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(0);
  });

  it('is read from the Secrets Manager secret BILLING_STRIPE_WEBHOOK_SECRET_ARN names, once; a placeholder or a missing value is none', async () => {
    vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    secretsManager.on(GetSecretValueCommand, { SecretId: SECRET_ARN }).resolves({ SecretString: SIGNING_SECRET });
    const settings = integrationSettingsOf({ BILLING_STRIPE_WEBHOOK_SECRET_ARN: SECRET_ARN });
    expect(typeof settings.billingStripeWebhookSecret).toBe('function');
    expect(await billingStripeWebhookSecretOf({ integrations: settings })).toBe(SIGNING_SECRET);
    expect(await billingStripeWebhookSecretOf({ integrations: settings })).toBe(SIGNING_SECRET);
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(1);

    secretsManager.reset();
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: 'GeneratedPlaceholder0123456789ab' });
    expect(
      await billingStripeWebhookSecretOf({
        integrations: integrationSettingsOf({ BILLING_STRIPE_WEBHOOK_SECRET_ARN: SECRET_ARN }),
      }),
    ).toBeUndefined();
    secretsManager.reset();
    secretsManager.on(GetSecretValueCommand).rejects(notFound());
    expect(
      await billingStripeWebhookSecretOf({
        integrations: integrationSettingsOf({ BILLING_STRIPE_WEBHOOK_SECRET_ARN: SECRET_ARN }),
      }),
    ).toBeUndefined();
  });

  it('is none when neither variable is set', async () => {
    expect(await billingStripeWebhookSecretOf({ integrations: integrationSettingsOf({}) })).toBeUndefined();
  });
});
