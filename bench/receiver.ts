/**
 * What the webhook benchmarks observe: a keep-alive HTTPS receiver that answers at once and counts what it got
 * (with each event's commit → arrival time, ms), a dead receiver that never answers, and the delivery lines the local
 * service logs.
 *
 * @module
 */
import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { CertificateAuthority } from '../bin/certificates.js';
import { issueServerCertificate } from '../bin/certificates.js';
import { SIGNATURE_HEADER } from '../shared/domain/webhook-deliveries/signing.js';

/** A keep-alive HTTPS receiver on 127.0.0.1 that answers 200 at once and counts what it got. */
export interface Receiver {
  port: number;
  /** `https://127.0.0.1:<port><path>` */
  url(path: string): string;
  /** Requests fully received since the last reset. */
  count(): number;
  /** Requests without an `SVC-Signature` header since the last reset. */
  unsigned(): number;
  /**
   * Milliseconds from each received event's `created_at` (set when its transaction was built, just
   * before the commit) to the moment its request was fully received, with the request path, since the
   * last reset: commit → first attempt, as the receiver sees it.
   */
  latencies(): Array<{ path: string; ms: number }>;
  /** Zeroes the counts and the latencies. */
  reset(): void;
  /** Resolves when {@link count} reaches `target`; rejects after `timeoutMs`. */
  waitFor(target: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts the receiver with a leaf certificate for `127.0.0.1` / `localhost` issued by `ca` (the service
 * trusts `ca` through `extraCaPem`). Each request body is read in full, then answered `200 ok`.
 */
export async function startReceiver(ca: CertificateAuthority): Promise<Receiver> {
  const leaf = await issueServerCertificate(ca, { hostnames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const events = new EventEmitter();
  events.setMaxListeners(0);
  let received = 0;
  let unsigned = 0;
  let latencies: Array<{ path: string; ms: number }> = [];
  const server: Server = createServer(
    { cert: leaf.certPem, key: leaf.keyPem, keepAlive: true, keepAliveTimeout: 10_000 },
    (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const arrivedMs = Date.now();
        try {
          const createdAt = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { created_at?: string }).created_at;
          if (createdAt) latencies.push({ path: request.url ?? '', ms: arrivedMs - Date.parse(createdAt) });
        } catch {
          // Not an envelope: counted, no latency.
        }
        received++;
        if (!request.headers[SIGNATURE_HEADER.toLowerCase()]) unsigned++;
        response.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '2' });
        response.end('ok');
        events.emit('count', received);
      });
    },
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: (path) => `https://127.0.0.1:${port}${path}`,
    count: () => received,
    unsigned: () => unsigned,
    latencies: () => [...latencies],
    reset() {
      received = 0;
      unsigned = 0;
      latencies = [];
    },
    waitFor(target, timeoutMs) {
      if (received >= target) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          events.off('count', listener);
          reject(new Error(`receiver saw ${received} of ${target} requests within ${timeoutMs} ms`));
        }, timeoutMs);
        const listener = (count: number) => {
          if (count >= target) {
            clearTimeout(timer);
            events.off('count', listener);
            resolve();
          }
        };
        events.on('count', listener);
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A keep-alive HTTPS server on 127.0.0.1 that reads each request and never answers (a dead receiver): `url` to send to,
 * `held()` the requests it holds.
 */
export async function startSilentReceiver(
  ca: CertificateAuthority,
): Promise<{ url: string; held: () => number; close: () => Promise<void> }> {
  const leaf = await issueServerCertificate(ca, { hostnames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  let held = 0;
  const server: Server = createServer({ cert: leaf.certPem, key: leaf.keyPem }, (request) => {
    request.resume();
    held++;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/never`,
    held: () => held,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Counts the delivery lines the local service logs (`{ type: 'delivery', outcome }`) and its error lines. */
export interface DeliveryLog {
  /** Pass as `log` of `startLocalService`. */
  log: (line: string) => void;
  /** Outcomes since the last reset, e.g. `{ succeeded: 200 }`. */
  outcomes(): Record<string, number>;
  /** `{ type: 'error' }` lines since the last reset (their messages, first 5). */
  errors(): string[];
  /** Resolves when `outcome` was logged `target` times since the last reset; rejects after `timeoutMs`. */
  waitFor(outcome: string, target: number, timeoutMs: number): Promise<void>;
  reset(): void;
}

/** Creates a {@link DeliveryLog}; request lines are ignored. */
export function createDeliveryLog(): DeliveryLog {
  let outcomes: Record<string, number> = {};
  let errors: string[] = [];
  const changes = new EventEmitter();
  changes.setMaxListeners(0);
  return {
    log(line) {
      if (!line.includes('"type":"delivery"') && !line.includes('"type":"error"')) return;
      const parsed = JSON.parse(line) as { type: string; outcome?: string; message?: string };
      if (parsed.type === 'delivery') {
        const outcome = parsed.outcome ?? 'unknown';
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        changes.emit('outcome', outcome, outcomes[outcome]);
      } else if (errors.length < 5) errors.push(parsed.message ?? line);
    },
    outcomes: () => ({ ...outcomes }),
    errors: () => [...errors],
    waitFor(outcome, target, timeoutMs) {
      if ((outcomes[outcome] ?? 0) >= target) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          changes.off('outcome', listener);
          reject(new Error(`${outcomes[outcome] ?? 0} of ${target} deliveries ${outcome} within ${timeoutMs} ms`));
        }, timeoutMs);
        const listener = (logged: string, count: number) => {
          if (logged === outcome && count >= target) {
            clearTimeout(timer);
            changes.off('outcome', listener);
            resolve();
          }
        };
        changes.on('outcome', listener);
      });
    },
    reset() {
      outcomes = {};
      errors = [];
    },
  };
}
