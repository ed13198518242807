import { randomBytes } from 'node:crypto';
import { CredentialDecryptionError, contextBytes, gcmDecrypt, gcmEncrypt, type KeyEncryptionKey } from './envelope.js';

/** Prefix of a data key wrapped by {@link localKeyEncryptionKey} (format version 1). */
const LOCAL_WRAP_PREFIX = 'local1:';

/**
 * The local key-encryption key (DESIGN D16: "locally with a key from configuration", `ENCRYPTION_KEY`):
 * wraps each data key with AES-256-GCM under `key` (32 bytes), the encryption context as additional data.
 * The wrapped form is `local1:` + base64(iv ‖ tag ‖ ciphertext). Throws when `key` is not 32 bytes.
 */
export function localKeyEncryptionKey(key: Buffer): KeyEncryptionKey {
  if (key.length !== 32) throw new Error('The local key-encryption key must be 32 bytes.');
  const kek = Buffer.from(key);
  return {
    kind: 'local',
    async generateDataKey(context) {
      const plaintext = randomBytes(32);
      const sealed = gcmEncrypt(kek, plaintext, contextBytes(context));
      return {
        plaintext,
        wrapped: LOCAL_WRAP_PREFIX + Buffer.concat([sealed.iv, sealed.tag, sealed.ciphertext]).toString('base64'),
      };
    },
    async unwrapDataKey(wrapped, context) {
      if (!wrapped.startsWith(LOCAL_WRAP_PREFIX)) throw new CredentialDecryptionError();
      const bytes = Buffer.from(wrapped.slice(LOCAL_WRAP_PREFIX.length), 'base64');
      if (bytes.length !== 12 + 16 + 32) throw new CredentialDecryptionError();
      return gcmDecrypt(
        kek,
        { iv: bytes.subarray(0, 12), tag: bytes.subarray(12, 28), ciphertext: bytes.subarray(28) },
        contextBytes(context),
      );
    },
  };
}
