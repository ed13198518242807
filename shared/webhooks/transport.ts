/**
 * Outbound HTTPS transport for webhook deliveries (DESIGN D9; interface "Webhook trust" transport rules
 * and IP allowlist, "Delivery rules" 2–3, "Limits": minimum TLS 1.2, 10-second response budget).
 *
 * One call to {@link WebhookTransport.send} is one delivery attempt. It never throws: every outcome,
 * including programming-level failures such as a malformed URL, comes back as an {@link AttemptResult}.
 *
 * Request headers (they carry `SVC-Signature`) are never logged, and never copied into results or
 * error messages.
 *
 * @module
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import tls from 'node:tls';
import ipaddr from 'ipaddr.js';

/**
 * Why an attempt failed (DESIGN D7 attempt record):
 * - `http_status` — a response arrived but was not 2xx (3xx included: redirects are never followed).
 * - `timeout` — the whole-attempt budget (`timeoutMs`) ran out: DNS, connect, TLS, response or body read.
 * - `tls` — handshake failed: untrusted or expired certificate, host-name mismatch, protocol below
 *   TLS 1.2, or any other TLS/SSL error.
 * - `dns` — the host name did not resolve (ENOTFOUND, EAI_AGAIN, empty answer).
 * - `connect` — TCP connection refused, reset, or closed before a response (socket hang up).
 * - `ip_not_allowed` — `allowedIps` is set and the resolved address is not on it.
 * - `private_address` — the resolved address is not public unicast and private targets are not allowed.
 * - `invalid_url` — not a parsable `https:` URL.
 */
export type AttemptFailureKind =
  | 'http_status'
  | 'timeout'
  | 'tls'
  | 'dns'
  | 'connect'
  | 'ip_not_allowed'
  | 'private_address'
  | 'invalid_url';

/** One outbound POST. */
export interface WebhookRequest {
  /** Target URL; must be `https:`. */
  url: string;
  /**
   * Headers to send (e.g. `Content-Type`, `SVC-Signature`, `SVC-Event-Id`, `SVC-Event-Name`).
   * `Content-Length` and `Host` are set by the transport; a `User-Agent` is added when absent.
   */
  headers: Record<string, string>;
  /** The exact body (UTF-8) that was signed. */
  body: string;
  /**
   * The endpoint's `allowed_ips`: IPv4/IPv6 addresses or CIDR blocks (`203.0.113.0/24`).
   * `null`, `undefined` or `[]` mean "no allowlist". Entries that do not parse are ignored.
   */
  allowedIps?: string[] | null;
}

/** Outcome of one attempt (DESIGN D7: status or failure kind, duration, first 1 KiB of the body). */
export interface AttemptResult {
  /** True only for a 2xx response whose body was read within the budget. */
  ok: boolean;
  /** HTTP status when a response head arrived, else null. */
  status: number | null;
  /** Null when `ok`. */
  failure_kind: AttemptFailureKind | null;
  /** Human-readable cause (never contains request headers); null when `ok`. */
  failure_message: string | null;
  /** Wall-clock MILLISECONDS from the call to the result, DNS included. */
  duration_ms: number;
  /** First 1024 BYTES of the response body decoded as UTF-8 ('' when none). */
  response_body: string;
  /**
   * The pinned IP address the attempt connected to (or tried to). Null when no address was chosen:
   * invalid URL, DNS failure, or every resolved address refused (`ip_not_allowed`, `private_address`).
   */
  remote_address: string | null;
}

/** The outbound port used by the dispatcher (DESIGN §2 "Ports and adapters"). */
export interface WebhookTransport {
  /** Performs one attempt. Never rejects. */
  send(request: WebhookRequest): Promise<AttemptResult>;
}

/** Options of {@link createHttpsTransport}. */
export interface HttpsTransportOptions {
  /**
   * Extra trusted CA certificates (PEM strings, each possibly holding several certificates), added to
   * Node's bundled roots (`tls.rootCertificates`). For local and test receivers only (D9).
   */
  extraCaPem?: string[];
  /**
   * Allow non-public targets (loopback, RFC 1918, link-local, unique-local, metadata, ...). Local runs
   * only (`WEBHOOK_ALLOW_PRIVATE_TARGETS=1`). Default false.
   */
  allowPrivateTargets?: boolean;
  /** Whole-attempt budget in MILLISECONDS (DNS + connect + TLS + response + body). Default 10 000. */
  timeoutMs?: number;
  /**
   * DNS resolver returning every address of a host name. Default: `node:dns/promises` `lookup` with
   * `{ all: true }`. Called at most once per attempt, and never for IP-literal hosts.
   */
  lookup?: (hostname: string) => Promise<string[]>;
  /** Maximum response-body BYTES read before the connection is dropped. Default 65 536 (64 KiB). */
  maxResponseBytes?: number;
}

/** Default whole-attempt budget, MILLISECONDS (interface "Delivery rules" 3). */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** Default maximum response bytes read (DESIGN D9). */
export const DEFAULT_MAX_RESPONSE_BYTES = 65_536;
/** Bytes of response body kept in an attempt record (DESIGN D7). */
export const RESPONSE_BODY_RECORD_BYTES = 1024;

const USER_AGENT = 'membership-service-webhooks/1.0';

class AttemptFailure extends Error {
  constructor(
    readonly kind: AttemptFailureKind,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Creates the HTTPS transport (DESIGN D9).
 *
 * Per attempt:
 * 1. The URL must parse and use `https:`, else `invalid_url`.
 * 2. The host is resolved ONCE (`lookup`; an IP literal is used as is). DNS failure → `dns`.
 * 3. Address choice — the exact rule: each resolved address, in resolver order, is tested against
 *    (a) the allowlist, when `allowedIps` is non-empty: the address (IPv4-mapped IPv6 normalised to
 *        IPv4) must equal an entry or fall inside a CIDR entry, else it fails with `ip_not_allowed`;
 *    (b) then the public-address rule, unless `allowPrivateTargets`: the address must be global unicast
 *        (ipaddr.js range `unicast`), else `private_address` — loopback, RFC 1918 private, link-local
 *        (incl. the 169.254.169.254 metadata service), unique-local, CGNAT, unspecified, multicast,
 *        broadcast, reserved/documentation, NAT64/6to4/Teredo are all refused.
 *    An allowlist therefore never lets a private address through on its own: both rules must pass.
 *    The first address passing both is pinned; when none passes, the attempt fails with the first
 *    address's failure.
 * 4. The TCP connection goes to the pinned address only (custom `lookup` on the socket), while SNI and
 *    certificate host-name checks use the URL host. TLS ≥ 1.2, `rejectUnauthorized: true`, trust =
 *    Node's roots + `extraCaPem`.
 * 5. One POST, no redirects (3xx → `http_status`), body read up to `maxResponseBytes`; 2xx → ok.
 * 6. The whole attempt shares one `timeoutMs` budget → `timeout`.
 *
 * Connections are kept alive and reused per (origin, pinned address); `close()` destroys them.
 */
export function createHttpsTransport(options: HttpsTransportOptions = {}): WebhookTransport & { close(): Promise<void> } {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const allowPrivateTargets = options.allowPrivateTargets ?? false;
  const resolve = options.lookup ?? defaultLookup;
  const secureContext = tls.createSecureContext({
    ca: [...tls.rootCertificates, ...(options.extraCaPem ?? [])],
    minVersion: 'TLSv1.2',
  });
  const agents = new Map<string, https.Agent>();
  let closed = false;

  function agentFor(key: string): https.Agent {
    let agent = agents.get(key);
    if (!agent) {
      // Idle sockets are closed after 4 s, under the 5 s keep-alive timeout of a default Node server.
      agent = new https.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 4_000 });
      agents.set(key, agent);
    }
    return agent;
  }

  async function send(request: WebhookRequest): Promise<AttemptResult> {
    const started = performance.now();
    const deadline = started + timeoutMs;
    let remoteAddress: string | null = null;
    let status: number | null = null;
    let responseBody = '';
    const finish = (failure: AttemptFailure | null): AttemptResult => ({
      ok: failure === null && status !== null && status >= 200 && status < 300,
      status,
      failure_kind: failure?.kind ?? null,
      failure_message: failure?.message ?? null,
      duration_ms: Math.round(performance.now() - started),
      response_body: responseBody,
      remote_address: remoteAddress,
    });

    try {
      if (closed) throw new AttemptFailure('connect', 'transport is closed');
      const url = parseTarget(request.url);
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
      const port = url.port === '' ? 443 : Number(url.port);

      const candidates = isIP(host) !== 0 ? [host] : await withDeadline(resolveHost(resolve, host), deadline, 'DNS lookup');
      const pinned = chooseAddress(candidates, request.allowedIps, allowPrivateTargets);
      remoteAddress = pinned;

      const postInput: PostInput = {
        url,
        host,
        port,
        address: pinned,
        headers: request.headers,
        body: request.body,
        agent: agentFor(`${url.origin}|${pinned}`),
        secureContext,
        deadline,
        maxResponseBytes,
        onStatus: (s) => {
          status = s;
        },
        onSocketAddress: (a) => {
          remoteAddress = a;
        },
      };
      let response: { bodyPrefix: string };
      try {
        response = await post(postInput);
      } catch (error) {
        if (!(error instanceof StaleSocketError)) throw error;
        response = await post(postInput);
      }
      responseBody = response.bodyPrefix;
      if (status! < 200 || status! >= 300) {
        return finish(new AttemptFailure('http_status', `HTTP ${status}`));
      }
      return finish(null);
    } catch (error) {
      if (error instanceof PostError) {
        responseBody = error.bodyPrefix;
        return finish(classify(error.cause));
      }
      return finish(classify(error));
    }
  }

  return {
    send,
    async close(): Promise<void> {
      closed = true;
      for (const agent of agents.values()) agent.destroy();
      agents.clear();
    },
  };
}

/**
 * Reads `WEBHOOK_EXTRA_CA_FILE` (DESIGN D9): when set, returns the file's PEM text as a one-element
 * array (the file may hold several certificates); when unset or empty, returns `[]`.
 *
 * @throws Error when the variable is set but the file cannot be read or holds no `BEGIN CERTIFICATE`
 *   block — a misconfigured trust store should stop the service, not silently drop the extra CA.
 */
export function extraCaFromEnvironment(env: NodeJS.ProcessEnv = process.env): string[] {
  const file = env.WEBHOOK_EXTRA_CA_FILE;
  if (!file) return [];
  const pem = readFileSync(file, 'utf8');
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error(`WEBHOOK_EXTRA_CA_FILE (${file}) holds no PEM certificate`);
  }
  return [pem];
}

// ---------------------------------------------------------------------------------------------------

async function defaultLookup(hostname: string): Promise<string[]> {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => a.address);
}

function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AttemptFailure('invalid_url', 'URL does not parse');
  }
  if (url.protocol !== 'https:') throw new AttemptFailure('invalid_url', `scheme ${url.protocol} is not https:`);
  if (url.username || url.password) throw new AttemptFailure('invalid_url', 'URL must not carry credentials');
  if (!url.hostname) throw new AttemptFailure('invalid_url', 'URL has no host');
  return url;
}

async function resolveHost(resolve: (hostname: string) => Promise<string[]>, host: string): Promise<string[]> {
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new AttemptFailure('dns', `DNS lookup of ${host} failed${code ? ` (${code})` : ''}`);
  }
  const valid = addresses.filter((a) => isIP(a) !== 0);
  if (valid.length === 0) throw new AttemptFailure('dns', `DNS lookup of ${host} returned no address`);
  return valid;
}

function normalise(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const parsed = ipaddr.parse(address.split('%')[0]!);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
    ? (parsed as ipaddr.IPv6).toIPv4Address()
    : parsed;
}

function onAllowlist(address: ipaddr.IPv4 | ipaddr.IPv6, allowedIps: string[]): boolean {
  for (const entry of allowedIps) {
    try {
      if (entry.includes('/')) {
        const [net, bits] = ipaddr.parseCIDR(entry.trim());
        const range = net.kind() === 'ipv6' && (net as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96
          ? ([(net as ipaddr.IPv6).toIPv4Address(), bits - 96] as const)
          : ([net, bits] as const);
        if (range[0].kind() === address.kind() && address.match(range[0], range[1])) return true;
      } else {
        const ip = normalise(entry.trim());
        if (ip.kind() === address.kind() && ip.toNormalizedString() === address.toNormalizedString()) return true;
      }
    } catch {
      // An unparsable entry matches nothing.
    }
  }
  return false;
}

/** Applies the address rule documented on {@link createHttpsTransport}; returns the pinned address. */
function chooseAddress(candidates: string[], allowedIps: string[] | null | undefined, allowPrivate: boolean): string {
  let firstFailure: AttemptFailure | null = null;
  for (const candidate of candidates) {
    const address = normalise(candidate);
    let failure: AttemptFailure | null = null;
    if (allowedIps && allowedIps.length > 0 && !onAllowlist(address, allowedIps)) {
      failure = new AttemptFailure('ip_not_allowed', `resolved address ${candidate} is not in allowed_ips`);
    } else if (!allowPrivate && address.range() !== 'unicast') {
      failure = new AttemptFailure(
        'private_address',
        `resolved address ${candidate} is in the ${address.range()} range; non-public targets are refused`,
      );
    }
    if (!failure) return address.toString();
    firstFailure ??= failure;
  }
  throw firstFailure ?? new AttemptFailure('dns', 'no address');
}

async function withDeadline<T>(promise: Promise<T>, deadline: number, what: string): Promise<T> {
  const remaining = deadline - performance.now();
  if (remaining <= 0) throw new AttemptFailure('timeout', `budget exhausted before ${what}`);
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new AttemptFailure('timeout', `${what} exceeded the time budget`)), remaining);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** A reused keep-alive socket turned out to be closed before the request was answered. */
class StaleSocketError extends Error {
  constructor() {
    super('stale keep-alive socket');
  }
}

/** Carries the body prefix read before a failure (e.g. a timeout while reading a 2xx body). */
class PostError extends Error {
  constructor(
    override readonly cause: unknown,
    readonly bodyPrefix: string,
  ) {
    super('post failed');
  }
}

interface PostInput {
  url: URL;
  host: string;
  port: number;
  address: string;
  headers: Record<string, string>;
  body: string;
  agent: https.Agent;
  secureContext: tls.SecureContext;
  deadline: number;
  maxResponseBytes: number;
  onStatus(status: number): void;
  onSocketAddress(address: string): void;
}

function post(input: PostInput): Promise<{ bodyPrefix: string }> {
  return new Promise((resolvePromise, rejectPromise) => {
    const remaining = input.deadline - performance.now();
    if (remaining <= 0) {
      rejectPromise(new AttemptFailure('timeout', 'budget exhausted before connecting'));
      return;
    }
    const family = isIP(input.address);
    const pinnedLookup: LookupFunction = (_hostname, opts, callback) => {
      // Every connection of this request goes to the address resolved once above (anti-rebinding).
      if ((opts as { all?: boolean }).all) {
        (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
          { address: input.address, family },
        ]);
      } else {
        callback(null, input.address, family);
      }
    };

    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    let timedOut = false;
    const prefix = (): string => Buffer.concat(chunks).subarray(0, RESPONSE_BODY_RECORD_BYTES).toString('utf8');
    const fail = (error: unknown): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      rejectPromise(new PostError(timedOut ? new AttemptFailure('timeout', `no complete response within the ${Math.round(remaining)} ms budget`) : error, prefix()));
    };
    const succeed = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolvePromise({ bodyPrefix: prefix() });
    };

    const headers: Record<string, string> = { ...input.headers };
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'user-agent')) headers['User-Agent'] = USER_AGENT;
    for (const name of Object.keys(headers)) {
      const lower = name.toLowerCase();
      if (lower === 'content-length' || lower === 'host' || lower === 'transfer-encoding') delete headers[name];
    }
    headers['Content-Length'] = String(Buffer.byteLength(input.body, 'utf8'));

    const requestOptions: https.RequestOptions & { secureContext: tls.SecureContext } = {
      method: 'POST',
      host: input.host,
      port: input.port,
      path: `${input.url.pathname}${input.url.search}`,
      headers,
      agent: input.agent,
      lookup: pinnedLookup,
      family,
      servername: isIP(input.host) === 0 ? input.host : undefined,
      secureContext: input.secureContext,
      minVersion: 'TLSv1.2',
      rejectUnauthorized: true,
    };
    const req = https.request(requestOptions);

    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error('budget exceeded'));
      fail(null);
    }, remaining);

    let responded = false;
    req.on('error', (error: NodeJS.ErrnoException) => {
      // A kept-alive socket the server closed while idle: the request never reached the application,
      // so it is retried once on a fresh connection (Node's documented `reusedSocket` pattern).
      if (!responded && req.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        rejectPromise(new StaleSocketError());
        return;
      }
      fail(error);
    });
    req.on('response', (res: IncomingMessage) => {
      responded = true;
      if (res.socket?.remoteAddress) input.onSocketAddress(res.socket.remoteAddress);
      input.onStatus(res.statusCode ?? 0);
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        const room = input.maxResponseBytes - received;
        if (room > 0) {
          const piece = chunk.length > room ? chunk.subarray(0, room) : chunk;
          if (received < RESPONSE_BODY_RECORD_BYTES) chunks.push(piece);
          received += piece.length;
        }
        if (received >= input.maxResponseBytes) {
          // Enough read: drop the rest and the connection (it cannot be reused mid-body).
          succeed();
          res.destroy();
        }
      });
      res.on('end', succeed);
      res.on('error', fail);
      res.on('aborted', () => fail(new AttemptFailure('connect', 'response aborted by the server')));
      res.on('close', () => {
        if (!res.complete) fail(new AttemptFailure('connect', 'connection closed before the response body ended'));
      });
    });
    req.end(input.body, 'utf8');
  });
}

const CONNECT_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN']);
const TLS_CODE_PREFIXES = ['CERT_', 'ERR_TLS_', 'ERR_SSL_', 'UNABLE_TO_', 'ERR_OSSL_'];
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'HOSTNAME_MISMATCH',
  'EPROTO',
  'INVALID_CA',
  'CERT_HAS_EXPIRED',
]);

/** Maps a Node / OpenSSL error to an {@link AttemptFailure}. */
function classify(error: unknown): AttemptFailure {
  if (error instanceof AttemptFailure) return error;
  const e = (error ?? {}) as { code?: string; message?: string };
  const code = e.code ?? '';
  const message = (e.message ?? String(error)).trim();
  const describe = (text: string): string => (code && !text.includes(code) ? `${code}: ${text}` : text);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NODATA' || code === 'EAI_NONAME') {
    return new AttemptFailure('dns', describe(message));
  }
  if (code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT') return new AttemptFailure('timeout', describe(message));
  // Checked before the TLS patterns: a reset during the handshake says "...TLS connection..." but is a
  // connection failure, not a certificate or protocol one.
  if (CONNECT_CODES.has(code)) return new AttemptFailure('connect', describe(message));
  if (TLS_CODES.has(code) || TLS_CODE_PREFIXES.some((p) => code.startsWith(p)) || /ssl|tls|certificate|wrong version/i.test(message)) {
    return new AttemptFailure('tls', describe(message));
  }
  return new AttemptFailure('connect', describe(message));
}
