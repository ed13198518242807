import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import * as z from '../schemas/zod.js';

/**
 * Envelope encryption (D16, D22): AES-256-GCM under a fresh 32-byte data key wrapped by the {@link KeyEncryptionKey};
 * the context (team, project, kind) binds both layers, so a copied ciphertext does not open. Plaintext leaves only
 * through {@link openSecret}.
 */

/** Who a sealed secret belongs to; bound to the ciphertext (GCM additional data, KMS encryption context). */
export type EncryptionContext = Readonly<Record<string, string>>;

/** A data key: its plaintext (32 bytes; zero it after use) and the key-encryption key's wrapping of it. */
interface DataKey {
  plaintext: Buffer;
  /** The wrapped data key, as text (the adapter's own format; stored beside the ciphertext). */
  wrapped: string;
}

/**
 * The key-encryption-key port: makes and unwraps data keys. Adapters: `localKeyEncryptionKey`
 * (AES-256-GCM with a key from configuration) and `kmsKeyEncryptionKey` (KMS GenerateDataKey / Decrypt).
 */
export interface KeyEncryptionKey {
  /** `local` or `kms`: recorded with each sealed secret so a store never mixes them up silently. */
  readonly kind: 'local' | 'kms';
  /** A new 32-byte data key, wrapped under `context`. */
  generateDataKey(context: EncryptionContext): Promise<DataKey>;
  /**
   * The plaintext of a wrapped data key (throws {@link CredentialDecryptionError} when it does not open under
   * `context`).
   */
  unwrapDataKey(wrapped: string, context: EncryptionContext): Promise<Buffer>;
}

/** A sealed secret as stored: nothing in it is secret without the key-encryption key. All binary fields are base64. */
export const SealedSecret = z.object({
  /** Format version. */
  v: z.literal(1),
  /** The key-encryption key that wrapped the data key. */
  kek: z.enum(['local', 'kms']),
  wrapped_key: z.string(),
  /** GCM nonce (12 bytes). */
  iv: z.string(),
  ciphertext: z.string(),
  /** GCM authentication tag (16 bytes). */
  tag: z.string(),
});
/** A sealed secret (see {@link SealedSecret}). */
export type SealedSecret = z.infer<typeof SealedSecret>;

/**
 * A sealed secret did not open: tampered with, another context, or another key-encryption key. The message holds no
 * secret.
 */
export class CredentialDecryptionError extends Error {
  constructor(
    message = 'The stored credential could not be decrypted (tampered with, moved, or sealed with another key).',
  ) {
    super(message);
    this.name = 'CredentialDecryptionError';
  }
}

/** The GCM additional data of a context: its entries sorted by name, as JSON (stable whatever the key order). */
export function contextBytes(context: EncryptionContext): Buffer {
  return Buffer.from(
    JSON.stringify(
      Object.keys(context)
        .sort()
        .map((name) => [name, context[name]]),
    ),
    'utf8',
  );
}

/** AES-256-GCM encryption of `plaintext` with `key` and additional data `aad`: `{ iv, ciphertext, tag }`. */
export function gcmEncrypt(
  key: Buffer,
  plaintext: Buffer,
  aad: Buffer,
): { iv: Buffer; ciphertext: Buffer; tag: Buffer } {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { iv, ciphertext, tag: cipher.getAuthTag() };
}

/** AES-256-GCM decryption; throws {@link CredentialDecryptionError} when authentication fails. */
export function gcmDecrypt(key: Buffer, parts: { iv: Buffer; ciphertext: Buffer; tag: Buffer }, aad: Buffer): Buffer {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, parts.iv);
    decipher.setAAD(aad);
    decipher.setAuthTag(parts.tag);
    return Buffer.concat([decipher.update(parts.ciphertext), decipher.final()]);
  } catch {
    throw new CredentialDecryptionError();
  }
}

/** Seals `plaintext` (UTF-8 text) under a new data key from `kek`, bound to `context`. */
export async function sealSecret(
  kek: KeyEncryptionKey,
  plaintext: string,
  context: EncryptionContext,
): Promise<SealedSecret> {
  const dataKey = await kek.generateDataKey(context);
  try {
    const sealed = gcmEncrypt(dataKey.plaintext, Buffer.from(plaintext, 'utf8'), contextBytes(context));
    return {
      v: 1,
      kek: kek.kind,
      wrapped_key: dataKey.wrapped,
      iv: sealed.iv.toString('base64'),
      ciphertext: sealed.ciphertext.toString('base64'),
      tag: sealed.tag.toString('base64'),
    };
  } finally {
    dataKey.plaintext.fill(0);
  }
}

/**
 * A new data key of `kek` for `context`, wrapped only (its plaintext is zeroed): code allowed to open but not to make
 * data keys (the queue workers) seals with it later through {@link sealSecretWithKey}.
 */
export async function newWrappedDataKey(kek: KeyEncryptionKey, context: EncryptionContext): Promise<string> {
  const dataKey = await kek.generateDataKey(context);
  dataKey.plaintext.fill(0);
  return dataKey.wrapped;
}

/**
 * Seals `plaintext` (UTF-8 text) like {@link sealSecret}, under the data key `wrapped` (from {@link newWrappedDataKey}
 * with the same `context`), unwrapped by `kek`; {@link openSecret} opens it. Throws CredentialDecryptionError when
 * `wrapped` does not open under `context`.
 */
export async function sealSecretWithKey(
  kek: KeyEncryptionKey,
  wrapped: string,
  plaintext: string,
  context: EncryptionContext,
): Promise<SealedSecret> {
  const key = await kek.unwrapDataKey(wrapped, context);
  try {
    const sealed = gcmEncrypt(key, Buffer.from(plaintext, 'utf8'), contextBytes(context));
    return {
      v: 1,
      kek: kek.kind,
      wrapped_key: wrapped,
      iv: sealed.iv.toString('base64'),
      ciphertext: sealed.ciphertext.toString('base64'),
      tag: sealed.tag.toString('base64'),
    };
  } finally {
    key.fill(0);
  }
}

/**
 * Opens a sealed secret with `kek` under `context` (the same context it was sealed with). Throws
 * {@link CredentialDecryptionError} when it was sealed by another kind of key-encryption key, with another
 * context, or any byte of it changed.
 */
export async function openSecret(
  kek: KeyEncryptionKey,
  sealed: SealedSecret,
  context: EncryptionContext,
): Promise<string> {
  if (sealed.v !== 1 || sealed.kek !== kek.kind)
    throw new CredentialDecryptionError(
      `The stored credential was sealed with a ${sealed.kek} key; this service uses a ${kek.kind} key.`,
    );
  const key = await kek.unwrapDataKey(sealed.wrapped_key, context);
  try {
    const plaintext = gcmDecrypt(
      key,
      {
        iv: Buffer.from(sealed.iv, 'base64'),
        ciphertext: Buffer.from(sealed.ciphertext, 'base64'),
        tag: Buffer.from(sealed.tag, 'base64'),
      },
      contextBytes(context),
    );
    return plaintext.toString('utf8');
  } finally {
    key.fill(0);
  }
}
