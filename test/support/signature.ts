/**
 * The receiver's check of a webhook delivery's signature (interface "Webhook trust"), written from the
 * interface text alone. It deliberately imports nothing of the service's own signing or verification
 * code: it is the independent check every test holds the service's deliveries to, so a bug shared by
 * the signer and the service's verifier cannot hide here.
 *
 * The interface: `SVC-Signature: t=<unix_seconds>,v1=<hex>` (plus `,v0=<hex>` for 24 hours after a
 * dashboard rotation), each hex an HMAC-SHA256 keyed with the endpoint secret over the string
 * `<unix_seconds>.<raw_body>`. A receiver compares the signature in constant time, accepts v1 or v0,
 * and rejects the request when |now − t| exceeds 300 seconds, even if the signature matches.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** How far `t` may lie from the receiver's clock, either way (interface "Webhook trust" 2). */
const SIGNATURE_TOLERANCE_SECONDS = 300;

/** Why a receiver refuses a delivery's signature. */
export type SignatureRejection = 'missing header' | 'malformed header' | 'signature mismatch' | 'stale timestamp';

export interface SignatureCheckInput {
  /** The `SVC-Signature` header as received (an array when it was sent more than once). */
  header: string | readonly string[] | undefined;
  /** The request body exactly as received, before any JSON parsing. */
  rawBody: string;
  /** The endpoint secret the receiver holds (the whole `whsec_...` string, used as the HMAC key). */
  secret: string;
  /** The receiver's clock in unix seconds; default the real current time. */
  nowSeconds?: number;
}

/**
 * Checks `SVC-Signature` as a receiver should: `t=` must be a single unix-seconds value; the expected
 * HMAC-SHA256 of `<t>.<raw body>` is compared in constant time against every `v1=` and `v0=` value
 * (either may match; other keys are ignored); then |now − t| ≤ 300 s.
 * Returns null when the delivery is acceptable, else the reason it is not (a wrong signature is
 * reported before a stale timestamp).
 */
export function checkSignature(input: SignatureCheckInput): SignatureRejection | null {
  const { header, rawBody, secret } = input;
  if (header === undefined || header === '') return 'missing header';
  if (typeof header !== 'string') return 'malformed header';
  const timestamps: string[] = [];
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const separator = part.indexOf('=');
    if (separator < 0) return 'malformed header';
    const key = part.slice(0, separator).trim();
    const value = part.slice(separator + 1).trim();
    if (key === 't') timestamps.push(value);
    else if (key === 'v1' || key === 'v0') signatures.push(value);
  }
  if (timestamps.length !== 1 || !/^\d+$/.test(timestamps[0]) || signatures.length === 0) return 'malformed header';
  const t = timestamps[0];
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${t}.${rawBody}`, 'utf8').digest();
  // Every candidate is compared (no early exit), each in constant time.
  let matched = false;
  for (const signature of signatures) {
    const presented = /^[0-9a-fA-F]+$/.test(signature) ? Buffer.from(signature, 'hex') : Buffer.alloc(0);
    if (presented.length === expected.length && timingSafeEqual(presented, expected)) matched = true;
  }
  if (!matched) return 'signature mismatch';
  const nowSeconds = input.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(nowSeconds - Number(t)) > SIGNATURE_TOLERANCE_SECONDS) return 'stale timestamp';
  return null;
}
