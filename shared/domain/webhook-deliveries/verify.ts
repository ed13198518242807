/**
 * Receiver-side webhook verification (interface "Webhook trust", "Events", "Limits": 300 s window, event ids kept ≥ 24
 * h). Depends only on `node:crypto`, so a customer can copy this file into their receiver.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Default freshness window in SECONDS (interface "Limits": signature freshness window). */
const DEFAULT_TOLERANCE_SECONDS = 300;
/** Minimum time in SECONDS an event id is remembered for de-duplication (interface "Limits": 24 hours). */
const MIN_SEEN_TTL_SECONDS = 86_400;

/** Why {@link verifyWebhook} rejected a request. */
export type WebhookVerificationReason =
  /** `SVC-Signature`, `SVC-Event-Id` or `SVC-Event-Name` is absent or empty. */
  | 'missing_header'
  /** `SVC-Signature` lacks a single integer `t=` or any `v1=`/`v0=` entry. */
  | 'malformed_header'
  /** The signature is valid but |now − t| exceeds the tolerance. */
  | 'timestamp_outside_tolerance'
  /** No `v1=` or `v0=` entry matches the HMAC computed with the secret. */
  | 'signature_mismatch'
  /** `SVC-Event-Id` differs from body `id`, or `SVC-Event-Name` from body `type`. */
  | 'header_mismatch'
  /** The event id was already seen (at-least-once delivery; answer 2xx and drop it). */
  | 'duplicate_event'
  /** The (authentic) body is not a JSON object with the envelope fields. */
  | 'malformed_body';

/** Thrown by {@link verifyWebhook}; `reason` says which receiver rule failed. */
export class WebhookVerificationError extends Error {
  /** Machine-readable cause. */
  readonly reason: WebhookVerificationReason;

  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

/**
 * A store of event ids already processed (interface "Webhook trust" rule 3). Both methods may be async
 * (e.g. Redis or DynamoDB). `ttlSeconds` is in SECONDS and is always at least 86 400 (24 hours).
 * `has` followed by `add` is not atomic: a store shared by concurrent workers should make `add`
 * a conditional write and process the event only when it wins.
 */
export interface SeenEventStore {
  has(id: string): boolean | Promise<boolean>;
  add(id: string, ttlSeconds: number): void | Promise<void>;
}

/** The event envelope (interface "Events" → "Envelope"). */
export interface WebhookEvent<TData = Record<string, unknown>> {
  /** `evt_` + ULID; equals the `SVC-Event-Id` header. */
  id: string;
  /** Event name such as `subscription.created`; equals the `SVC-Event-Name` header. */
  type: string;
  /** ISO 8601 UTC timestamp. */
  created_at: string;
  /** Date stamp `YYYY-MM-DD`, e.g. `2026-05-01`. */
  api_version: string;
  /** Null for team-scoped and billing events. */
  project_id: string | null;
  /** Event-specific object. */
  data: TData;
}

/** Input of {@link verifyWebhook}. */
export interface VerifyWebhookInput {
  /** The request body exactly as received (do not re-serialise parsed JSON). */
  rawBody: string | Buffer;
  /** Request headers; names are matched case-insensitively. An array value is joined with `,`. */
  headers: Record<string, string | string[] | undefined>;
  /** The endpoint signing secret, whole string (`whsec_...`) used verbatim as the HMAC key. */
  secret: string;
  /** Freshness window in SECONDS; default 300. */
  toleranceSeconds?: number;
  /** Current Unix time in SECONDS; default `Math.floor(Date.now() / 1000)`. For tests. */
  nowSeconds?: number;
  /** De-duplication store; when omitted, no de-duplication is done. */
  seen?: SeenEventStore;
  /** How long to remember ids, in SECONDS; values below 86 400 are raised to 86 400. */
  seenTtlSeconds?: number;
}

/**
 * Verifies one delivery (interface "Webhook trust"): headers, signature (constant-time, v1/v0), freshness (both
 * directions), body, header/body match, dedup last.
 * @throws {@link WebhookVerificationError}: answer 2xx for `duplicate_event` (drop the event), 4xx otherwise.
 */
export async function verifyWebhook<TData = Record<string, unknown>>(
  input: VerifyWebhookInput,
): Promise<WebhookEvent<TData>> {
  const toleranceSeconds = input.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowSeconds = input.nowSeconds ?? Math.floor(Date.now() / 1000);

  const signature = header(input.headers, 'svc-signature');
  const eventId = header(input.headers, 'svc-event-id');
  const eventName = header(input.headers, 'svc-event-name');
  if (!signature) throw new WebhookVerificationError('missing_header', 'SVC-Signature header is missing');
  if (!eventId) throw new WebhookVerificationError('missing_header', 'SVC-Event-Id header is missing');
  if (!eventName) throw new WebhookVerificationError('missing_header', 'SVC-Event-Name header is missing');

  const parsed = parseSignatureHeader(signature);
  const body = typeof input.rawBody === 'string' ? Buffer.from(input.rawBody, 'utf8') : input.rawBody;

  const expected = createHmac('sha256', Buffer.from(input.secret, 'utf8'))
    .update(`${parsed.timestamp}.`, 'utf8')
    .update(body)
    .digest();
  let matched = false;
  for (const candidate of parsed.signatures) {
    // Every candidate is compared (no early exit) so timing does not reveal which one matched.
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  }
  if (!matched) {
    throw new WebhookVerificationError('signature_mismatch', 'no v1/v0 signature matches the payload');
  }
  if (Math.abs(nowSeconds - parsed.timestamp) > toleranceSeconds) {
    throw new WebhookVerificationError(
      'timestamp_outside_tolerance',
      `timestamp ${parsed.timestamp} is more than ${toleranceSeconds} s away from now (${nowSeconds})`,
    );
  }

  const event = parseEnvelope<TData>(body);
  if (event.id !== eventId) {
    throw new WebhookVerificationError('header_mismatch', 'SVC-Event-Id does not equal the body id');
  }
  if (event.type !== eventName) {
    throw new WebhookVerificationError('header_mismatch', 'SVC-Event-Name does not equal the body type');
  }

  if (input.seen) {
    if (await input.seen.has(event.id)) {
      throw new WebhookVerificationError('duplicate_event', `event ${event.id} was already received`);
    }
    await input.seen.add(event.id, Math.max(input.seenTtlSeconds ?? MIN_SEEN_TTL_SECONDS, MIN_SEEN_TTL_SECONDS));
  }
  return event;
}

/** Parsed `SVC-Signature`: the `t=` value (SECONDS) and the raw 32-byte `v1`/`v0` digests. */
interface ParsedSignature {
  timestamp: number;
  signatures: Buffer[];
}

function parseSignatureHeader(value: string): ParsedSignature {
  let timestamp: number | undefined;
  const signatures: Buffer[] = [];
  let schemes = 0;
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const key = part.slice(0, eq).trim();
    const val = part.slice(eq + 1).trim();
    if (key === 't') {
      if (!/^\d{1,15}$/.test(val)) throw new WebhookVerificationError('malformed_header', 't= is not an integer');
      const t = Number(val);
      if (timestamp !== undefined && timestamp !== t) {
        throw new WebhookVerificationError('malformed_header', 'more than one t= value');
      }
      timestamp = t;
    } else if (key === 'v1' || key === 'v0') {
      schemes += 1;
      // A value that is not 64 hex digits can never match; it is kept out of the comparison.
      if (/^[0-9a-fA-F]{64}$/.test(val)) signatures.push(Buffer.from(val, 'hex'));
    }
    // Unknown schemes (a future v2=...) are ignored.
  }
  if (timestamp === undefined) throw new WebhookVerificationError('malformed_header', 'SVC-Signature has no t=');
  if (schemes === 0) throw new WebhookVerificationError('malformed_header', 'SVC-Signature has no v1= or v0=');
  return { timestamp, signatures };
}

function parseEnvelope<TData>(body: Buffer): WebhookEvent<TData> {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('malformed_body', 'body is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new WebhookVerificationError('malformed_body', 'body is not a JSON object');
  }
  const v = value as Record<string, unknown>;
  for (const field of ['id', 'type', 'created_at', 'api_version'] as const) {
    if (typeof v[field] !== 'string') {
      throw new WebhookVerificationError('malformed_body', `body field ${field} is not a string`);
    }
  }
  if (v.project_id !== null && typeof v.project_id !== 'string') {
    throw new WebhookVerificationError('malformed_body', 'body field project_id is not a string or null');
  }
  if (typeof v.data !== 'object' || v.data === null || Array.isArray(v.data)) {
    throw new WebhookVerificationError('malformed_body', 'body field data is not an object');
  }
  return v as unknown as WebhookEvent<TData>;
}

function header(headers: VerifyWebhookInput['headers'], lowerName: string): string | undefined {
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== lowerName || value === undefined) continue;
    const text = Array.isArray(value) ? value.join(',') : value;
    return text.trim() === '' ? undefined : text.trim();
  }
  return undefined;
}

/**
 * A process-local {@link SeenEventStore}: remembers each id until `now + ttlSeconds`, then forgets it.
 * Suitable for one receiver process; use a shared store when several processes receive.
 *
 * @param nowSeconds - Clock returning Unix time in SECONDS; default `Date.now()/1000`. Inject in tests.
 * @returns The store, plus `size()` (ids currently remembered, expired ones pruned first).
 */
export function createMemorySeenStore(
  nowSeconds: () => number = () => Date.now() / 1000,
): SeenEventStore & { size(): number } {
  const expiries = new Map<string, number>();
  const prune = (): void => {
    const now = nowSeconds();
    for (const [id, expiresAt] of expiries) if (expiresAt <= now) expiries.delete(id);
  };
  let addsSincePrune = 0;
  return {
    has(id: string): boolean {
      const expiresAt = expiries.get(id);
      if (expiresAt === undefined) return false;
      if (expiresAt <= nowSeconds()) {
        expiries.delete(id);
        return false;
      }
      return true;
    },
    add(id: string, ttlSeconds: number): void {
      expiries.set(id, nowSeconds() + ttlSeconds);
      if (++addsSincePrune >= 1000) {
        addsSincePrune = 0;
        prune();
      }
    },
    size(): number {
      prune();
      return expiries.size;
    },
  };
}
