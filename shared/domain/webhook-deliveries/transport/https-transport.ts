/**
 * The undici HTTPS adapter of {@link WebhookTransport} (DESIGN D9; interface "Webhook trust", "Delivery rules" 2–3,
 * "Limits": TLS ≥ 1.2, 10-second budget). `send` is one attempt and never rejects. Request headers (they carry
 * `SVC-Signature`) are never logged nor copied into results or errors.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import type { Readable } from 'node:stream';
import tls from 'node:tls';
import { Pool, buildConnector, sendRequest } from '../../../http/undici.js';
import {
  parseWebhookTarget,
  pinAddress,
  resolveCandidates,
  systemResolver,
  type HostResolver,
  type WebhookTarget,
} from './address-policy.js';
import { attemptsByPayload, connections, measuredConnector, pinnedLookup } from './connections.js';
import { classifyError } from './failure-classification.js';
import {
  AttemptFailure,
  RESPONSE_BODY_RECORD_BYTES,
  type AttemptResult,
  type WebhookRequest,
  type WebhookTransport,
} from './port.js';
import { trustedCaCertificates } from './trust.js';

/** Default whole-attempt budget, MILLISECONDS (interface "Delivery rules" 3, DESIGN D9). */
const DEFAULT_TIMEOUT_MS = 10_000;
/** Default maximum response-body BYTES read (64 KiB, DESIGN D9). */
const DEFAULT_MAX_RESPONSE_BYTES = 65_536;

/** Options of {@link createHttpsTransport}. */
export interface HttpsTransportOptions {
  /**
   * Extra trusted CA certificates (PEM strings, each possibly holding several certificates), added to
   * Node's root store. For local and test receivers only (DESIGN D9; see `extraCaFromEnvironment`).
   */
  extraCaPem?: string[];
  /**
   * Allow non-public targets (loopback, RFC 1918, link-local, unique-local, metadata, ...). Local runs
   * only (`WEBHOOK_ALLOW_PRIVATE_TARGETS=1`). Default false.
   */
  allowPrivateTargets?: boolean;
  /** Whole-attempt budget in MILLISECONDS (DNS + connect + TLS + response head + body). Default 10 000. */
  timeoutMs?: number;
  /**
   * DNS resolver returning every address of a host name. Default: the system resolver
   * (`node:dns/promises` `lookup`, all addresses). Called at most once per attempt, never for IP literals.
   */
  lookup?: HostResolver;
  /** Maximum response-body BYTES read before the connection is dropped. Default 65 536 (64 KiB). */
  maxResponseBytes?: number;
}

/** The HTTPS transport: the port plus `close()`, which destroys every kept-alive connection. */
export interface HttpsTransport extends WebhookTransport {
  /** Destroys every connection and refuses later attempts (they fail with `connect`). Idempotent. */
  close(): Promise<void>;
}

const USER_AGENT = 'membership-service-webhooks/1.0';
/** Idle keep-alive sockets are closed after 4 s, under the 5 s keep-alive timeout of a default Node server. */
const IDLE_SOCKET_MS = 4_000;
/** Concurrent connections per (origin, pinned address). */
const CONNECTIONS_PER_TARGET = 64;
/** Connection pools kept at once; the least recently used one is closed (gracefully) beyond this. */
const MAX_POOLS = 256;
/** Headers the transport owns or that undici refuses; dropped from {@link WebhookRequest.headers}. */
const DROPPED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'expect',
]);

/**
 * Creates the HTTPS transport (DESIGN D9): per attempt, within one `timeoutMs` budget, resolve ONCE, pin one address
 * ({@link pinAddress}), connect to it (SNI and certificate check on the URL host), POST once, never follow redirects,
 * read at most `maxResponseBytes` (first 1 KiB kept). Pools per (origin, pinned address); call `close()` when done.
 */
export function createHttpsTransport(options: HttpsTransportOptions = {}): HttpsTransport {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const allowPrivateTargets = options.allowPrivateTargets ?? false;
  const resolve = options.lookup ?? systemResolver;
  // One context for every connection: parsing the ~150 roots per handshake would be wasted work.
  // It carries both the trust list and the protocol floor.
  const secureContext = tls.createSecureContext({
    ca: trustedCaCertificates(options.extraCaPem),
    minVersion: 'TLSv1.2',
  });
  const pools = new Map<string, Pool>();
  let closed = false;

  function poolFor(target: WebhookTarget, address: string): Pool {
    const key = `${target.url.origin}|${address}`;
    const existing = pools.get(key);
    if (existing) {
      pools.delete(key);
      pools.set(key, existing); // most recently used last
      return existing;
    }
    if (pools.size >= MAX_POOLS) {
      const [oldestKey, oldest] = pools.entries().next().value!;
      pools.delete(oldestKey);
      void oldest.close().catch(() => undefined);
    }
    const pool = new Pool(target.url.origin, {
      connections: CONNECTIONS_PER_TARGET,
      pipelining: 1,
      keepAliveTimeout: IDLE_SOCKET_MS,
      keepAliveMaxTimeout: IDLE_SOCKET_MS,
      // The attempt's AbortSignal enforces the whole budget; these only bound each phase by it too.
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      // The lookup always answers the pinned address (DNS rebinding cannot move the connection); SNI and the host-name
      // check use the URL host.
      connect: measuredConnector(
        buildConnector({ timeout: timeoutMs, lookup: pinnedLookup(address), secureContext, rejectUnauthorized: true }),
      ),
    });
    pools.set(key, pool);
    return pool;
  }

  async function send(request: WebhookRequest): Promise<AttemptResult> {
    const started = performance.now();
    const budget = new AbortController();
    let phase = 'DNS lookup';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      budget.abort(new AttemptFailure('timeout', `${phase} did not finish within the ${timeoutMs} ms budget`));
    }, timeoutMs);

    let remoteAddress: string | null = null;
    let status: number | null = null;
    let retryAfterSeconds: number | null = null;
    const body: BodyPrefix = { chunks: [], kept: 0 };
    // The exact bytes sent; undici keeps this Buffer as the request body, which names the attempt when it is written
    // (see `./connections.ts`).
    const payload = Buffer.from(request.body, 'utf8');
    const sentOn: { socket?: object } = {};
    attemptsByPayload.set(payload, sentOn);
    const finish = (failure: AttemptFailure | null): AttemptResult => {
      const connection = sentOn.socket ? connections.get(sentOn.socket) : undefined;
      const firstUse = connection !== undefined && connection.usedBy === payload;
      return {
        ok: failure === null,
        status,
        failure_kind: failure?.kind ?? null,
        failure_message: failure?.message ?? null,
        duration_ms: Math.round(performance.now() - started),
        response_body: Buffer.concat(body.chunks).toString('utf8'),
        remote_address: remoteAddress,
        tls_version: connection?.tlsVersion ?? null,
        connect_ms: firstUse ? connection.connectMs : null,
        ...(retryAfterSeconds !== null ? { retry_after_seconds: retryAfterSeconds } : {}),
      };
    };

    try {
      if (closed) throw new AttemptFailure('connect', 'transport is closed');
      const target = parseWebhookTarget(request.url);
      const candidates = await untilAborted(resolveCandidates(target.host, resolve), budget.signal);
      remoteAddress = pinAddress(candidates, request.allowedIps, allowPrivateTargets);

      phase = 'connection, TLS handshake and response head';
      // No redirect is followed (undici's redirect interceptor is not installed): a 3xx is an `http_status` failure. A
      // socket the server just closed fails as `connect`, not resent (D7 retries it).
      const response = await sendRequest(poolFor(target, remoteAddress), {
        method: 'POST',
        path: `${target.url.pathname}${target.url.search}`,
        headers: outboundHeaders(request.headers),
        body: payload,
        signal: budget.signal,
      });
      status = response.statusCode;
      if (status === 429 || status === 503)
        retryAfterSeconds = retryAfterOf(response.headers['retry-after'], Date.now());

      phase = 'response body';
      const ended = await readBodyPrefix(response.body, maxResponseBytes, body);
      const result = finish(status < 200 || status >= 300 ? new AttemptFailure('http_status', `HTTP ${status}`) : null);
      // With pipelining 1, undici hands a kept-alive socket back to its pool one event-loop turn after
      // the response ends (so a server that closes despite keep-alive is noticed first). Yielding that
      // turn lets the caller's next attempt reuse the connection instead of opening a second one.
      if (ended) await new Promise<void>((resolveTurn) => setImmediate(resolveTurn));
      return result;
    } catch (error) {
      if (timedOut) return finish(budget.signal.reason as AttemptFailure);
      return finish(classifyError(error));
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    send,
    async close(): Promise<void> {
      closed = true;
      const all = [...pools.values()];
      pools.clear();
      await Promise.all(all.map((pool) => pool.destroy().catch(() => undefined)));
    },
  };
}

/**
 * The SECONDS a `Retry-After` header asks to wait (RFC 9110 §10.2.3: delta-seconds, or an HTTP-date
 * taken relative to `nowMs`, epoch MILLISECONDS), or null when it is absent or unreadable. Never negative.
 */
export function retryAfterOf(header: string | string[] | undefined, nowMs: number): number | null {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value);
  // An HTTP-date always ends in GMT (V8's Date.parse alone would read "-5" as a year).
  const date = value.endsWith('GMT') ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - nowMs) / 1000));
}

// ---------------------------------------------------------------------------------------------------

/** The response bytes kept for the attempt record (at most {@link RESPONSE_BODY_RECORD_BYTES}). */
interface BodyPrefix {
  chunks: Buffer[];
  kept: number;
}

/** The request's headers minus the ones the transport owns, plus a `User-Agent` when absent. */
function outboundHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  let hasUserAgent = false;
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (DROPPED_HEADERS.has(lower)) continue;
    if (lower === 'user-agent') hasUserAgent = true;
    out[name] = value;
  }
  if (!hasUserAgent) out['User-Agent'] = USER_AGENT;
  return out;
}

/**
 * Reads `body` to its end or `limit` BYTES, keeping the first {@link RESPONSE_BODY_RECORD_BYTES} in `prefix` as they
 * arrive; the limit destroys the body (undici drops the connection). True when read to its end (reusable), false when
 * cut. Throws the stream's error (abort, reset) before either.
 */
async function readBodyPrefix(body: Readable, limit: number, prefix: BodyPrefix): Promise<boolean> {
  // The destroy below may emit an 'error' (undici's "request aborted") after the loop has stopped listening.
  body.on('error', () => undefined);
  let received = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    const piece = chunk.length > limit - received ? chunk.subarray(0, limit - received) : chunk;
    if (prefix.kept < RESPONSE_BODY_RECORD_BYTES) {
      const kept = piece.subarray(0, RESPONSE_BODY_RECORD_BYTES - prefix.kept);
      prefix.chunks.push(kept);
      prefix.kept += kept.length;
    }
    received += piece.length;
    if (received >= limit) return false; // leaving the loop destroys the stream
  }
  return true;
}

/** Rejects with `signal.reason` as soon as `signal` aborts; otherwise settles like `promise`. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolvePromise, rejectPromise) => {
    const onAbort = (): void => rejectPromise(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolvePromise(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        rejectPromise(error);
      },
    );
  });
}
