/**
 * Server-side webhook signing (interface "Webhook trust"; DESIGN D8).
 *
 * Every delivery carries `SVC-Signature: t=<unix_seconds>,v1=<hex>` where `<hex>` is the lowercase hex
 * HMAC-SHA256 of the string `<unix_seconds>.<raw_body>`, keyed with the endpoint secret. During a
 * dashboard rotation (24-hour dual-sign window) the header also carries `,v0=<hex>` computed with the
 * previous secret. Receivers verify with `verifyWebhook` in `./verify.ts`.
 *
 * Every delivery also carries the Standard Webhooks headers (DESIGN D29): `webhook-id` (the event id),
 * `webhook-timestamp` (the same `t`) and `webhook-signature: v1,<base64>` — HMAC-SHA256 of
 * `<id>.<timestamp>.<raw body>` keyed with the base64-DECODED bytes after `whsec_` — with a second `v1,`
 * entry for the previous secret during a dual-signing window; `standardwebhooks` and `svix` verify them.
 *
 * @module
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
 * Computes the hex HMAC-SHA256 signature of one delivery.
 *
 * The signed string is `${timestampSeconds}.${rawBody}` (UTF-8). The HMAC key is the UTF-8 bytes of the
 * WHOLE secret string, `whsec_` prefix included — the secret is NOT base64-decoded first. Receivers
 * must key their HMAC the same way (interface "Webhook trust").
 *
 * @param secret - The endpoint signing secret, e.g. `whsec_3q2+7w...` (used verbatim as the key).
 * @param timestampSeconds - Unix time in whole SECONDS (not milliseconds); the `t=` value.
 * @param rawBody - The exact request body string that is sent on the wire.
 * @returns 64 lowercase hex characters.
 * @throws TypeError when `timestampSeconds` is not a non-negative safe integer (a millisecond value
 *   or a fraction would silently produce signatures no receiver accepts).
 */
export function computeSignature(secret: string, timestampSeconds: number, rawBody: string): string {
  assertTimestamp(timestampSeconds);
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestampSeconds}.${rawBody}`, 'utf8').digest('hex');
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
export const STANDARD_WEBHOOK_HEADERS = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' } as const;

/**
 * One Standard Webhooks signature (DESIGN D29): base64 HMAC-SHA256 of `${id}.${timestampSeconds}.${rawBody}`
 * keyed with the base64-decoded bytes of `secret` after its `whsec_` prefix (unlike {@link computeSignature},
 * which keys with the whole string). `timestampSeconds` in whole SECONDS.
 * @throws TypeError when `timestampSeconds` is not a non-negative safe integer.
 */
export function computeStandardSignature(secret: string, id: string, timestampSeconds: number, rawBody: string): string {
  assertTimestamp(timestampSeconds);
  const key = Buffer.from(secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret, 'base64');
  return createHmac('sha256', key).update(`${id}.${timestampSeconds}.${rawBody}`, 'utf8').digest('base64');
}

/**
 * The `webhook-signature` header value (DESIGN D29): `v1,<base64>` with the current secret, then
 * ` v1,<base64>` with the previous secret during a dual-signing window (space-separated, as the standard says).
 */
export function standardSignatureHeader(input: SignatureHeaderInput & { id: string }): string {
  const { secret, previousSecret, timestampSeconds, rawBody, id } = input;
  const signatures = [secret, ...(previousSecret ? [previousSecret] : [])].map((key) => `v1,${computeStandardSignature(key, id, timestampSeconds, rawBody)}`);
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
