import { DecryptCommand, GenerateDataKeyCommand, type KMSClient } from '@aws-sdk/client-kms';
import { CredentialDecryptionError, type KeyEncryptionKey } from '../credentials/envelope.js';

/** Options of {@link kmsKeyEncryptionKey}. */
export interface KmsKeyOptions {
  /**
   * Unwrapped data keys kept in memory, by wrapped key (default 100; 0 = none): a warm Lambda decrypts a credential
   * once.
   */
  cacheSize?: number;
}

/**
 * AWS key-encryption key (D16): `GenerateDataKey` (AES_256) and `Decrypt` under the credential's context, so KMS
 * refuses cross-team/project/kind keys. Unwrapped keys cached ({@link KmsKeyOptions.cacheSize}); a refused decryption
 * throws {@link CredentialDecryptionError}, other KMS errors as they are.
 */
export function kmsKeyEncryptionKey(client: KMSClient, keyId: string, options: KmsKeyOptions = {}): KeyEncryptionKey {
  const cacheSize = options.cacheSize ?? 100;
  const cache = new Map<string, Buffer>();
  const remember = (cacheKey: string, plaintext: Buffer) => {
    if (cacheSize <= 0) return;
    if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!);
    cache.set(cacheKey, Buffer.from(plaintext));
  };
  const cacheKeyOf = (wrapped: string, context: Readonly<Record<string, string>>) =>
    `${wrapped}\n${JSON.stringify(Object.entries(context).sort())}`;
  return {
    kind: 'kms',
    async generateDataKey(context) {
      const result = await client.send(
        new GenerateDataKeyCommand({ KeyId: keyId, KeySpec: 'AES_256', EncryptionContext: { ...context } }),
      );
      if (!result.Plaintext || !result.CiphertextBlob) throw new Error('KMS GenerateDataKey returned no key.');
      const plaintext = Buffer.from(result.Plaintext);
      const wrapped = Buffer.from(result.CiphertextBlob).toString('base64');
      remember(cacheKeyOf(wrapped, context), plaintext);
      return { plaintext, wrapped };
    },
    async unwrapDataKey(wrapped, context) {
      const cacheKey = cacheKeyOf(wrapped, context);
      const cached = cache.get(cacheKey);
      if (cached) return Buffer.from(cached);
      let result;
      try {
        result = await client.send(
          new DecryptCommand({
            KeyId: keyId,
            CiphertextBlob: Buffer.from(wrapped, 'base64'),
            EncryptionContext: { ...context },
          }),
        );
      } catch (error) {
        const name = (error as { name?: string }).name;
        if (name === 'InvalidCiphertextException' || name === 'IncorrectKeyException')
          throw new CredentialDecryptionError();
        throw error;
      }
      if (!result.Plaintext) throw new CredentialDecryptionError();
      const plaintext = Buffer.from(result.Plaintext);
      remember(cacheKey, plaintext);
      return plaintext;
    },
  };
}
