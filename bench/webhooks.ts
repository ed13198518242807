/**
 * Benchmark 2: webhook delivery throughput of the local pipeline (outbox relay → fan-out → in-process
 * queue → dispatcher → HTTPS; DESIGN §2, D6, D7, D9) for 1 and for 50 endpoints, beside the ceiling: the
 * same number of signed POSTs sent straight through the same HTTPS transport with the same concurrency.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../shared/clock.js';
import { newEventId } from '../shared/ids.js';
import type { CertificateAuthority } from '../bin/certificates.js';
import { issueServerCertificate } from '../bin/certificates.js';
import type { LocalService } from '../shared/local/service.js';
import { createTeam } from '../shared/domain/teams/repository.js';
import { EVENT_ID_HEADER, EVENT_NAME_HEADER, generateWebhookSecret, SIGNATURE_HEADER, signatureHeader } from '../shared/domain/webhook-deliveries/signing.js';
import { createHttpsTransport } from '../shared/domain/webhook-deliveries/transport/https-transport.js';
import { mintTokens, runPool, type RequestCounter } from './support.js';

/** A keep-alive HTTPS receiver on 127.0.0.1 that answers 200 at once and counts what it got. */
export interface Receiver {
  port: number;
  /** `https://127.0.0.1:<port><path>` */
  url(path: string): string;
  /** Requests fully received since the last reset. */
  count(): number;
  /** Requests without an `SVC-Signature` header since the last reset. */
  unsigned(): number;
  /** Zeroes the counts. */
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
  const server: Server = createServer({ cert: leaf.certPem, key: leaf.keyPem, keepAlive: true, keepAliveTimeout: 10_000 }, (request, response) => {
    request.resume();
    request.on('end', () => {
      received++;
      if (!request.headers[SIGNATURE_HEADER.toLowerCase()]) unsigned++;
      response.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': '2' });
      response.end('ok');
      events.emit('count', received);
    });
  });
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
    reset() {
      received = 0;
      unsigned = 0;
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

/** Counts the delivery lines the local service logs (`{ type: 'delivery', outcome }`) and its error lines. */
export interface DeliveryLog {
  /** Pass as `log` of `startLocalService`. */
  log(line: string): void;
  /** Outcomes since the last reset, e.g. `{ succeeded: 200 }`. */
  outcomes(): Record<string, number>;
  /** `{ type: 'error' }` lines since the last reset (their messages, first 5). */
  errors(): string[];
  reset(): void;
}

/** Creates a {@link DeliveryLog}; request lines are ignored. */
export function createDeliveryLog(): DeliveryLog {
  let outcomes: Record<string, number> = {};
  let errors: string[] = [];
  return {
    log(line) {
      if (!line.includes('"type":"delivery"') && !line.includes('"type":"error"')) return;
      const parsed = JSON.parse(line) as { type: string; outcome?: string; message?: string };
      if (parsed.type === 'delivery') outcomes[parsed.outcome ?? 'unknown'] = (outcomes[parsed.outcome ?? 'unknown'] ?? 0) + 1;
      else if (errors.length < 5) errors.push(parsed.message ?? line);
    },
    outcomes: () => ({ ...outcomes }),
    errors: () => [...errors],
    reset() {
      outcomes = {};
      errors = [];
    },
  };
}

/** Figures of one pipeline run. */
export interface PipelineResult {
  endpoints: number;
  projects: number;
  deliveries: number;
  /** From the first `POST /v1/projects` until the receiver had every delivery. */
  seconds: number;
  deliveriesPerSecond: number;
  /** Until every `POST /v1/projects` was answered (part of {@link seconds}). */
  createSeconds: number;
  /** Dispatcher outcomes logged by the service, e.g. `{ succeeded: 1000 }`. */
  outcomes: Record<string, number>;
  /** Background DynamoDB commands (relay, fan-out, dispatch) per delivery. */
  dynamoDbRequestsPerDelivery: number;
  /** Receiver requests without a signature header (must be 0). */
  unsigned: number;
  errors: string[];
}

/** Options of {@link measurePipeline}. */
export interface PipelineOptions {
  service: LocalService;
  receiver: Receiver;
  deliveryLog: DeliveryLog;
  counter: RequestCounter;
  endpoints: number;
  projects: number;
  /** Projects created at most this many at a time (default 8). */
  createConcurrency?: number;
  progress: (line: string) => void;
}

async function postJson(service: LocalService, token: string, path: string, body: unknown, expected: number): Promise<unknown> {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== expected) throw new Error(`POST ${path}: HTTP ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/**
 * Measures deliveries per second through the local pipeline: a new team with `endpoints` endpoints
 * subscribed to `project.created` (created through `POST /v1/webhook-endpoints`), a small warm-up,
 * then `projects` projects created quickly through `POST /v1/projects`, timed until the receiver has
 * seen `projects × endpoints` deliveries. Waits for the pipeline to be idle before returning.
 */
export async function measurePipeline(options: PipelineOptions): Promise<PipelineResult> {
  const { service, receiver, deliveryLog, counter } = options;
  const team = await createTeam(service.store, systemClock, { name: `Bench webhooks ×${options.endpoints}` });
  const [token] = await mintTokens(service.store, team.id, 1, `bench webhooks ×${options.endpoints}`);
  const bearer = token!.token;
  for (let index = 0; index < options.endpoints; index++) {
    await postJson(service, bearer, '/v1/webhook-endpoints', { name: `bench ${index + 1}`, url: receiver.url(`/hooks/${options.endpoints}/${index + 1}`), events: ['project.created'] }, 201);
  }
  // Warm-up: two projects through the whole pipeline (connections opened, code paths compiled).
  await service.runtime.idle();
  receiver.reset();
  const warmupProjects = 2;
  for (let index = 0; index < warmupProjects; index++) await postJson(service, bearer, '/v1/projects', { name: `Warm-up ${index}`, platform_type: 'discord' }, 201);
  await receiver.waitFor(warmupProjects * options.endpoints, 60_000);
  await service.runtime.idle();

  const deliveries = options.projects * options.endpoints;
  options.progress(`webhook pipeline: ${options.endpoints} endpoint(s) × ${options.projects} projects = ${deliveries} deliveries`);
  receiver.reset();
  deliveryLog.reset();
  counter.reset();
  const started = performance.now();
  let createdAt = started;
  const all = receiver.waitFor(deliveries, 300_000);
  await runPool(options.projects, options.createConcurrency ?? 8, async (index) => {
    await postJson(service, bearer, '/v1/projects', { name: `Webhook bench ${index}`, platform_type: 'discord' }, 201);
  });
  createdAt = performance.now();
  await all;
  const finished = performance.now();
  await service.runtime.idle();
  const background = Object.values(counter.snapshot().background).reduce((total, count) => total + count, 0);
  const seconds = (finished - started) / 1000;
  return {
    endpoints: options.endpoints,
    projects: options.projects,
    deliveries,
    seconds,
    deliveriesPerSecond: deliveries / seconds,
    createSeconds: (createdAt - started) / 1000,
    outcomes: deliveryLog.outcomes(),
    dynamoDbRequestsPerDelivery: background / deliveries,
    unsigned: receiver.unsigned(),
    errors: deliveryLog.errors(),
  };
}

/** Figures of the direct-send ceiling. */
export interface CeilingResult {
  sends: number;
  concurrency: number;
  seconds: number;
  sendsPerSecond: number;
  failures: number;
}

/**
 * The ceiling: `count` signed POSTs (an envelope-like body, `SVC-Signature`, `SVC-Event-Id`,
 * `SVC-Event-Name`) sent straight through a fresh `createHttpsTransport` (same options as the
 * service's) to `urls` in turn, `concurrency` at a time, after a warm-up of `concurrency` sends.
 */
export async function measureCeiling(options: { receiver: Receiver; caPem: string; urls: string[]; count: number; concurrency: number }): Promise<CeilingResult> {
  const transport = createHttpsTransport({ extraCaPem: [options.caPem], allowPrivateTargets: true });
  const secret = generateWebhookSecret();
  const send = async (index: number): Promise<boolean> => {
    const nowMs = Date.now();
    const id = newEventId(nowMs);
    const body = JSON.stringify({
      id,
      type: 'project.created',
      api_version: '2026-05-01',
      created_at: new Date(nowMs).toISOString(),
      data: { project: { id: randomUUID(), name: `Ceiling ${index}`, platform_type: 'discord', description: null, status: 'active', created_at: new Date(nowMs).toISOString(), updated_at: new Date(nowMs).toISOString() } },
    });
    const result = await transport.send({
      url: options.urls[index % options.urls.length]!,
      headers: {
        'Content-Type': 'application/json',
        [SIGNATURE_HEADER]: signatureHeader({ secret, timestampSeconds: Math.floor(nowMs / 1000), rawBody: body }),
        [EVENT_ID_HEADER]: id,
        [EVENT_NAME_HEADER]: 'project.created',
      },
      body,
    });
    return result.ok;
  };
  try {
    await runPool(options.concurrency, options.concurrency, async (index) => {
      await send(index);
    });
    options.receiver.reset();
    let failures = 0;
    const started = performance.now();
    await runPool(options.count, options.concurrency, async (index) => {
      if (!(await send(index))) failures++;
    });
    const seconds = (performance.now() - started) / 1000;
    return { sends: options.count, concurrency: options.concurrency, seconds, sendsPerSecond: options.count / seconds, failures: Math.max(failures, options.count - options.receiver.count()) };
  } finally {
    await transport.close();
  }
}
