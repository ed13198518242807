/**
 * Envelope encryption of stored credentials (DESIGN D16): the round trip with the
 * local key-encryption key, tamper detection on every part of a sealed secret and on its context, and the
 * KMS adapter's exact GenerateDataKey / Decrypt inputs (aws-sdk-client-mock), its cache and its refusals.
 */
import { randomBytes } from 'node:crypto';
import {
  DecryptCommand,
  GenerateDataKeyCommand,
  InvalidCiphertextException,
  KMSClient,
  KMSInvalidStateException,
} from '@aws-sdk/client-kms';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, DEFAULT_LOCAL_ENCRYPTION_KEY } from '../../shared/config.js';
import { keyEncryptionKeyFromEnvironment } from '../../shared/aws/key-encryption-key.js';
import {
  CredentialDecryptionError,
  newWrappedDataKey,
  openSecret,
  sealSecret,
  sealSecretWithKey,
  type SealedSecret,
} from '../../shared/credentials/envelope.js';
import { kmsKeyEncryptionKey } from '../../shared/aws/kms-key.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';

const CONTEXT = { team_id: 'team-a', project_id: 'project-a', kind: 'telegram_bot' };
const SECRET = '123456:AAE-bot-token-that-must-stay-secret';

/** Flips one bit of a base64 field. */
function flip(base64: string, byteIndex = 0): string {
  const bytes = Buffer.from(base64, 'base64');
  bytes[byteIndex % bytes.length] ^= 0x01;
  return bytes.toString('base64');
}

describe('envelope encryption with the local key', () => {
  const kek = localKeyEncryptionKey(randomBytes(32));

  it('round-trips, with a fresh data key and nonce each time and no plaintext in the sealed form', async () => {
    const first = await sealSecret(kek, SECRET, CONTEXT);
    const second = await sealSecret(kek, SECRET, CONTEXT);
    expect(await openSecret(kek, first, CONTEXT)).toBe(SECRET);
    expect(await openSecret(kek, second, { kind: 'telegram_bot', project_id: 'project-a', team_id: 'team-a' })).toBe(
      SECRET,
    );
    expect(first.wrapped_key).not.toBe(second.wrapped_key);
    expect(first.iv).not.toBe(second.iv);
    expect(first).toMatchObject({ v: 1, kek: 'local' });
    expect(JSON.stringify(first)).not.toContain('bot-token');
    expect(Buffer.from(first.iv, 'base64')).toHaveLength(12);
    expect(Buffer.from(first.tag, 'base64')).toHaveLength(16);
  });

  it('seals later with a data key made ahead (wrapped only), which openSecret opens, and only under its context', async () => {
    const wrapped = await newWrappedDataKey(kek, CONTEXT);
    const first = await sealSecretWithKey(kek, wrapped, SECRET, CONTEXT);
    const second = await sealSecretWithKey(kek, wrapped, SECRET, CONTEXT);
    expect(first).toMatchObject({ v: 1, kek: 'local', wrapped_key: wrapped });
    expect(first.iv).not.toBe(second.iv);
    expect(JSON.stringify(first)).not.toContain('bot-token');
    expect(await openSecret(kek, first, CONTEXT)).toBe(SECRET);
    await expect(sealSecretWithKey(kek, wrapped, SECRET, { ...CONTEXT, team_id: 'team-b' })).rejects.toBeInstanceOf(
      CredentialDecryptionError,
    );
  });

  it('detects tampering with the ciphertext, the tag, the nonce or the wrapped key, and a moved secret', async () => {
    const sealed = await sealSecret(kek, SECRET, CONTEXT);
    const tampered: SealedSecret[] = [
      { ...sealed, ciphertext: flip(sealed.ciphertext, 3) },
      { ...sealed, tag: flip(sealed.tag, 5) },
      { ...sealed, iv: flip(sealed.iv) },
      { ...sealed, wrapped_key: `local1:${flip(sealed.wrapped_key.slice('local1:'.length), 40)}` },
      { ...sealed, wrapped_key: 'local1:AAAA' },
    ];
    for (const candidate of tampered)
      await expect(openSecret(kek, candidate, CONTEXT)).rejects.toBeInstanceOf(CredentialDecryptionError);
    await expect(openSecret(kek, sealed, { ...CONTEXT, team_id: 'team-b' })).rejects.toBeInstanceOf(
      CredentialDecryptionError,
    );
    await expect(openSecret(kek, sealed, { ...CONTEXT, kind: 'stripe' })).rejects.toBeInstanceOf(
      CredentialDecryptionError,
    );
    await expect(openSecret(localKeyEncryptionKey(randomBytes(32)), sealed, CONTEXT)).rejects.toBeInstanceOf(
      CredentialDecryptionError,
    );
    await expect(openSecret(kek, { ...sealed, kek: 'kms' }, CONTEXT)).rejects.toThrow(/sealed with a kms key/);
  });

  it('errors never carry the secret', async () => {
    const sealed = await sealSecret(kek, SECRET, CONTEXT);
    const error = await openSecret(kek, { ...sealed, tag: flip(sealed.tag) }, CONTEXT).catch((caught: Error) => caught);
    expect(String((error as Error).message)).not.toContain(SECRET);
    expect(() => localKeyEncryptionKey(randomBytes(16))).toThrow(/32 bytes/);
  });
});

describe('the key-encryption key from the environment', () => {
  it('uses ENCRYPTION_KEY or the documented default locally, KMS when a key id is set, and refuses the default inside Lambda', async () => {
    const fallback = keyEncryptionKeyFromEnvironment({});
    expect(fallback.kind).toBe('local');
    const sealed = await sealSecret(fallback, SECRET, CONTEXT);
    expect(
      await openSecret(localKeyEncryptionKey(Buffer.from(DEFAULT_LOCAL_ENCRYPTION_KEY, 'base64')), sealed, CONTEXT),
    ).toBe(SECRET);
    const own = randomBytes(32).toString('base64');
    const configured = keyEncryptionKeyFromEnvironment({ ENCRYPTION_KEY: own });
    await expect(openSecret(configured, sealed, CONTEXT)).rejects.toBeInstanceOf(CredentialDecryptionError);
    expect(keyEncryptionKeyFromEnvironment({ CREDENTIALS_KMS_KEY_ID: 'alias/credentials' }).kind).toBe('kms');
    expect(() => keyEncryptionKeyFromEnvironment({ AWS_LAMBDA_FUNCTION_NAME: 'route' })).toThrow(ConfigurationError);
    expect(() => keyEncryptionKeyFromEnvironment({ ENCRYPTION_KEY: 'c2hvcnQ=' })).toThrow(
      /ENCRYPTION_KEY must be the base64 text of 32 random bytes/,
    );
  });
});

describe('the KMS key-encryption key', () => {
  const kms = mockClient(KMSClient);
  afterEach(() => kms.reset());
  const KEY_ID = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

  it('asks KMS for an AES_256 data key and decrypts it with the same encryption context (exact inputs)', async () => {
    const dataKey = randomBytes(32);
    const blob = randomBytes(184);
    kms
      .on(GenerateDataKeyCommand)
      .resolves({ Plaintext: new Uint8Array(dataKey), CiphertextBlob: new Uint8Array(blob), KeyId: KEY_ID });
    kms.on(DecryptCommand).resolves({ Plaintext: new Uint8Array(dataKey), KeyId: KEY_ID });
    const sealed = await sealSecret(
      kmsKeyEncryptionKey(new KMSClient({ region: 'eu-west-1' }), KEY_ID),
      SECRET,
      CONTEXT,
    );
    expect(sealed).toMatchObject({ kek: 'kms', wrapped_key: blob.toString('base64') });
    expect(kms.commandCalls(GenerateDataKeyCommand)[0].args[0].input).toEqual({
      KeyId: KEY_ID,
      KeySpec: 'AES_256',
      EncryptionContext: CONTEXT,
    });

    // Another execution environment (no cache) opens it through KMS Decrypt; a second read hits the cache.
    const cold = kmsKeyEncryptionKey(new KMSClient({ region: 'eu-west-1' }), KEY_ID);
    expect(await openSecret(cold, sealed, CONTEXT)).toBe(SECRET);
    expect(await openSecret(cold, sealed, CONTEXT)).toBe(SECRET);
    const decrypts = kms.commandCalls(DecryptCommand);
    expect(decrypts).toHaveLength(1);
    expect(decrypts[0].args[0].input).toEqual({ KeyId: KEY_ID, CiphertextBlob: blob, EncryptionContext: CONTEXT });
  });

  it('turns a refused decryption into CredentialDecryptionError and passes other KMS failures through', async () => {
    kms
      .on(GenerateDataKeyCommand)
      .resolves({ Plaintext: new Uint8Array(randomBytes(32)), CiphertextBlob: new Uint8Array(randomBytes(100)) });
    const sealed = await sealSecret(
      kmsKeyEncryptionKey(new KMSClient({ region: 'eu-west-1' }), KEY_ID, { cacheSize: 0 }),
      SECRET,
      CONTEXT,
    );
    kms.on(DecryptCommand).rejects(new InvalidCiphertextException({ message: 'context mismatch', $metadata: {} }));
    const cold = kmsKeyEncryptionKey(new KMSClient({ region: 'eu-west-1' }), KEY_ID, { cacheSize: 0 });
    await expect(openSecret(cold, sealed, { ...CONTEXT, project_id: 'project-b' })).rejects.toBeInstanceOf(
      CredentialDecryptionError,
    );
    kms.on(DecryptCommand).rejects(new KMSInvalidStateException({ message: 'key disabled', $metadata: {} }));
    await expect(openSecret(cold, sealed, CONTEXT)).rejects.toBeInstanceOf(KMSInvalidStateException);
  });
});
