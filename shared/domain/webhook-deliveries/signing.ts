/**
 * Server-side webhook signing (interface "Webhook trust", D8): `SVC-Signature: t=<unix_seconds>,v1=<hex>` (plus `,v0=`
 * with the previous secret during a 24 h rotation) and Standard Webhooks headers (D29: `webhook-signature: v1,<base64>`
 * keyed with the base64-decoded bytes after `whsec_`).
 */
import { createHmac, randomBytes } from 'node:crypto';

/** Prefix of every webhook signing secret (DESIGN D8). */
const WEBHOOK_SECRET_PREFIX = 'whsec_';

/** Name of the signature header (interface "Webhook trust"). */
export const SIGNATURE_HEADER = 'SVC-Signature';
/** Name of the event-id header; equals the envelope `id` (interface "Webhook trust", DESIGN D6). */
export const EVENT_ID_HEADER = 'SVC-Event-Id';
/** Name of the event-name header; equals the envelope `type` (interface "Webhook trust"). */
export const EVENT_NAME_HEADER = 'SVC-Event-Name';

/**
 * Hex HMAC-SHA256 (64 lowercase chars) of `${timestampSeconds}.${rawBody}`, keyed with the WHOLE secret's UTF-8 bytes,
 * `whsec_` included (not decoded).
 * @throws TypeError when `timestampSeconds` is not a non-negative safe integer in SECONDS (milliseconds would sign
 * what no receiver accepts).
 */
export function computeSignature(secret: string, timestampSeconds: number, rawBody: string): string {
  assertTimestamp(timestampSeconds);
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`${timestampSeconds}.${rawBody}`, 'utf8')
    .digest('hex');
}

/** Input of {@link signatureHeader}. */
export interface SignatureHeaderInput {
  /** Current endpoint secret (`whsec_...`); produces the `v1=` entry. */
  secret: string;
  /**
   * Previous secret during a dashboard rotation's 24-hour dual-sign window (DESIGN D8); produces the
   * `v0=` entry. Omit (or pass `null`) outside that window and after API rotation, which signs `v1` only.
   */
  previousSecret?: string | null;
  /** Unix time in whole SECONDS; becomes `t=`. */
  timestampSeconds: number;
  /** The exact body string sent on the wire. */
  rawBody: string;
}

/**
 * Builds the `SVC-Signature` header value (interface "Webhook trust", DESIGN D8).
 *
 * @returns `t=<ts>,v1=<hex with secret>` or, with `previousSecret`,
 *   `t=<ts>,v1=<hex with secret>,v0=<hex with previousSecret>`.
 * @throws TypeError when `timestampSeconds` is not a non-negative safe integer.
 */
export function signatureHeader(input: SignatureHeaderInput): string {
  const { secret, previousSecret, timestampSeconds, rawBody } = input;
  let header = `t=${timestampSeconds},v1=${computeSignature(secret, timestampSeconds, rawBody)}`;
  if (previousSecret) {
    header += `,v0=${computeSignature(previousSecret, timestampSeconds, rawBody)}`;
  }
  return header;
}

/** The Standard Webhooks headers (DESIGN D29), lower case as the specification writes them. */
export const STANDARD_WEBHOOK_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/**
 * One Standard Webhooks signature (DESIGN D29): base64 HMAC-SHA256 of `${id}.${timestampSeconds}.${rawBody}`
 * keyed with the base64-decoded bytes of `secret` after its `whsec_` prefix (unlike {@link computeSignature},
 * which keys with the whole string). `timestampSeconds` in whole SECONDS.
 * @throws TypeError when `timestampSeconds` is not a non-negative safe integer.
 */
export function computeStandardSignature(
  secret: string,
  id: string,
  timestampSeconds: number,
  rawBody: string,
): string {
  assertTimestamp(timestampSeconds);
  const key = Buffer.from(
    secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret,
    'base64',
  );
  return createHmac('sha256', key).update(`${id}.${timestampSeconds}.${rawBody}`, 'utf8').digest('base64');
}

/**
 * The `webhook-signature` header value (DESIGN D29): `v1,<base64>` with the current secret, then
 * ` v1,<base64>` with the previous secret during a dual-signing window (space-separated, as the standard says).
 */
export function standardSignatureHeader(input: SignatureHeaderInput & { id: string }): string {
  const { secret, previousSecret, timestampSeconds, rawBody, id } = input;
  const signatures = [secret, ...(previousSecret ? [previousSecret] : [])].map(
    (key) => `v1,${computeStandardSignature(key, id, timestampSeconds, rawBody)}`,
  );
  return signatures.join(' ');
}

/**
 * Generates a new endpoint signing secret (DESIGN D8): `whsec_` followed by the standard base64
 * (with `+`, `/` and `=` padding; 44 characters) of 32 cryptographically random bytes.
 *
 * @returns e.g. `whsec_q3V0J9...=` (50 characters in total).
 */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString('base64');
}

function assertTimestamp(timestampSeconds: number): void {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) {
    throw new TypeError(`timestampSeconds must be a non-negative integer number of seconds, got ${timestampSeconds}`);
  }
}
