/**
 * The outbound webhook transport port (DESIGN §2, D7 attempt record, D9): the request, the result and the closed list
 * of failure reasons. Adapters: `./https-transport.ts` and test fakes.
 *
 * @module
 */

/**
 * Why a delivery attempt can fail (DESIGN §2): `http_status` non-2xx (3xx too), `timeout` whole budget, `tls`
 * (certificate, host name, < TLS 1.2), `dns`, `connect` (refused, reset, closed early), `ip_not_allowed` (not on
 * `allowed_ips`), `private_address` (not public unicast), `invalid_url` (not parsable `https:` or carries credentials).
 */
export const ATTEMPT_FAILURE_KINDS = [
  'http_status',
  'timeout',
  'tls',
  'dns',
  'connect',
  'ip_not_allowed',
  'private_address',
  'invalid_url',
] as const;

/** One of {@link ATTEMPT_FAILURE_KINDS}: why an attempt failed (DESIGN D7 attempt record). */
export type AttemptFailureKind = (typeof ATTEMPT_FAILURE_KINDS)[number];

/** Bytes of response body kept in an attempt record: the first 1 KiB (DESIGN D7). */
export const RESPONSE_BODY_RECORD_BYTES = 1024;

/** One outbound POST: one delivery attempt. */
export interface WebhookRequest {
  /** Target URL; must be `https:` (anything else fails with `invalid_url`). */
  url: string;
  /**
   * Headers to send (e.g. `Content-Type`, `SVC-Signature`, `SVC-Event-Id`, `SVC-Event-Name`).
   * `Content-Length` and `Host` are set by the transport (values given here are dropped, as are the
   * hop-by-hop headers `Transfer-Encoding`, `Connection`, `Keep-Alive`, `Upgrade`, `Expect`); a
   * `User-Agent` is added when absent. Never logged nor copied into results: they carry the signature.
   */
  headers: Record<string, string>;
  /** The exact body (UTF-8) that was signed; sent byte for byte. */
  body: string;
  /**
   * The endpoint's `allowed_ips`: IPv4/IPv6 addresses or CIDR blocks (`203.0.113.0/24`).
   * `null`, `undefined` or `[]` mean "no allowlist". Entries that do not parse match nothing.
   */
  allowedIps?: string[] | null;
}

/** Outcome of one attempt (DESIGN D7: status or failure kind, duration, first 1 KiB of the body). */
export interface AttemptResult {
  /** True only for a 2xx response whose body was read (to its end or to the read limit) within the budget. */
  ok: boolean;
  /** HTTP status when a response head arrived, else null. */
  status: number | null;
  /** Null when `ok`. */
  failure_kind: AttemptFailureKind | null;
  /** Human-readable cause (never contains request headers); null when `ok`. */
  failure_message: string | null;
  /** Wall-clock MILLISECONDS from the call to the result, DNS included (rounded to an integer). */
  duration_ms: number;
  /** First {@link RESPONSE_BODY_RECORD_BYTES} BYTES of the response body decoded as UTF-8 ('' when none). */
  response_body: string;
  /**
   * The pinned IP address the attempt connected to (or tried to). Null when no address was chosen:
   * invalid URL, DNS failure, or every resolved address refused (`ip_not_allowed`, `private_address`).
   */
  remote_address: string | null;
  /** The negotiated TLS version of the connection used (e.g. `TLSv1.3`); null or absent when none was made. */
  tls_version?: string | null;
  /**
   * MILLISECONDS to open the connection used (TCP connect and TLS handshake); null or absent when an
   * open connection was reused or none was made.
   */
  connect_ms?: number | null;
  /**
   * SECONDS the receiver asked to wait with `Retry-After` on a 429 or 503 answer (delta-seconds, or an
   * HTTP-date made relative to the attempt's end); null or absent otherwise.
   */
  retry_after_seconds?: number | null;
}

/** The outbound port used by the delivery pipeline (DESIGN §2 "Ports and adapters", D9). */
export interface WebhookTransport {
  /**
   * Performs one attempt. Never rejects: every outcome, programming-level failures such as a malformed
   * URL included, comes back as an {@link AttemptResult}.
   */
  send(request: WebhookRequest): Promise<AttemptResult>;
}

/**
 * A failed attempt as an error: its {@link AttemptFailureKind} and a message safe to record (never
 * request headers). Thrown inside adapters and turned into an {@link AttemptResult}; never escapes
 * {@link WebhookTransport.send}.
 */
export class AttemptFailure extends Error {
  /**
   * @param kind Why the attempt failed.
   * @param message Human-readable cause, recorded as `failure_message`.
   */
  constructor(
    readonly kind: AttemptFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'AttemptFailure';
  }
}
