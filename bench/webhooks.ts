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
import {
  EVENT_ID_HEADER,
  EVENT_NAME_HEADER,
  generateWebhookSecret,
  SIGNATURE_HEADER,
  signatureHeader,
} from '../shared/domain/webhook-deliveries/signing.js';
import { createHttpsTransport } from '../shared/domain/webhook-deliveries/transport/https-transport.js';
import { outboxItem } from '../shared/events/outbox.js';
import { TIER_ATTRIBUTE } from '../shared/domain/billing/record.js';
import type { Project } from '../shared/domain/projects/schema.js';
import { keys } from '../shared/store/keys.js';
import { batchWrite, type RecordedPut } from './seeding.js';
import { mintTokens, runPool, summarize, type LatencySummary, type RequestCounter } from './support.js';

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
  /** Event commit → first attempt received, over every delivery (ms). */
  commitToAttempt: LatencySummary;
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

async function postJson(
  service: LocalService,
  token: string,
  path: string,
  body: unknown,
  expected: number,
): Promise<unknown> {
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
  const { bearer } = await createBenchTeam(service, `Bench webhooks ×${options.endpoints}`);
  for (let index = 0; index < options.endpoints; index++) {
    await postJson(
      service,
      bearer,
      '/v1/webhook-endpoints',
      {
        name: `bench ${index + 1}`,
        url: receiver.url(`/hooks/${options.endpoints}/${index + 1}`),
        events: ['project.created'],
      },
      201,
    );
  }
  // Warm-up: two projects through the whole pipeline (connections opened, code paths compiled).
  await service.runtime.idle();
  receiver.reset();
  const warmupProjects = 2;
  for (let index = 0; index < warmupProjects; index++)
    await postJson(service, bearer, '/v1/projects', { name: `Warm-up ${index}`, platform_type: 'discord' }, 201);
  await receiver.waitFor(warmupProjects * options.endpoints, 60_000);
  await service.runtime.idle();

  const deliveries = options.projects * options.endpoints;
  options.progress(
    `webhook pipeline: ${options.endpoints} endpoint(s) × ${options.projects} projects = ${deliveries} deliveries`,
  );
  receiver.reset();
  deliveryLog.reset();
  counter.reset();
  const started = performance.now();
  const all = receiver.waitFor(deliveries, 300_000);
  await runPool(options.projects, options.createConcurrency ?? 8, async (index) => {
    await postJson(service, bearer, '/v1/projects', { name: `Webhook bench ${index}`, platform_type: 'discord' }, 201);
  });
  const createdAt = performance.now();
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
    commitToAttempt: summarize(receiver.latencies().map((entry) => entry.ms)),
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
export async function measureCeiling(options: {
  receiver: Receiver;
  caPem: string;
  urls: string[];
  count: number;
  concurrency: number;
}): Promise<CeilingResult> {
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
      data: {
        project: {
          id: randomUUID(),
          name: `Ceiling ${index}`,
          platform_type: 'discord',
          description: null,
          status: 'active',
          created_at: new Date(nowMs).toISOString(),
          updated_at: new Date(nowMs).toISOString(),
        },
      },
    });
    const result = await transport.send({
      url: options.urls[index % options.urls.length],
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
    return {
      sends: options.count,
      concurrency: options.concurrency,
      seconds,
      sendsPerSecond: options.count / seconds,
      failures: Math.max(failures, options.count - options.receiver.count()),
    };
  } finally {
    await transport.close();
  }
}

/**
 * The label of the pipeline's background requests in the bench's request counter: the local outbox
 * relay woken after a commit, its fan-out and the dispatch that follows (run.ts labels them so).
 */
export const PIPELINE_LABEL = 'outbox relay, fan-out and dispatch';

/** Endpoints per team at most (DESIGN D8: the 50-endpoint cap); more endpoints take more teams. */
const ENDPOINTS_PER_TEAM = 50;

/**
 * Creates a team on the `business` tier (no tier limit below the D8 cap; set without events, as tests do) and one token
 * of it holding every ability.
 */
async function createBenchTeam(service: LocalService, name: string): Promise<{ teamId: string; bearer: string }> {
  const team = await createTeam(service.store, systemClock, { name });
  await service.store.update({
    Key: keys.team(team.id),
    UpdateExpression: 'SET #tier = :tier',
    ExpressionAttributeNames: { '#tier': TIER_ATTRIBUTE },
    ExpressionAttributeValues: { ':tier': 'business' },
  });
  const [token] = await mintTokens(service.store, team.id, 1, name);
  return { teamId: team.id, bearer: token.token };
}

/** Figures of one drain: N deliveries put in the outbox first, then timed until all succeeded. */
export interface DrainResult {
  endpoints: number;
  teams: number;
  events: number;
  deliveries: number;
  /** Seeding the outbox (BatchWriteItem; not measured). */
  seedSeconds: number;
  /** From waking the outbox relay until every delivery was logged `succeeded`. */
  seconds: number;
  deliveriesPerSecond: number;
  /** Dispatcher outcomes logged meanwhile, e.g. `{ succeeded: 10000, deferred: 12 }`. */
  outcomes: Record<string, number>;
  /**
   * DynamoDB requests per delivery — the relay, fan-out and dispatch of the drain; the service's
   * periodic sweeper and deadline worker are left out and given apart — and where they go (summed).
   */
  dynamoDbRequestsPerDelivery: number;
  described: Record<string, number>;
  /** Requests of the periodic workers meanwhile (sweeper, its outbox relay, deadline worker), by label. */
  periodic: Record<string, number>;
  unsigned: number;
  errors: string[];
}

/**
 * The drain: `deliveries` deliveries over `endpoints` endpoints of the keep-alive
 * receiver. Teams of at most {@link ENDPOINTS_PER_TEAM} endpoints are made through REST (endpoints
 * subscribed to `project.created`, one project each, delivered once as a warm-up); then
 * `deliveries ÷ endpoints` `project.created` events per team are put straight into the outbox
 * (BatchWriteItem of the items `outboxItem` builds, the unit of work's own builder) while the pipeline
 * is idle; then the outbox relay is woken once and the run is timed until every delivery was logged
 * `succeeded`. Every DynamoDB request meanwhile is counted.
 */
export async function measureDrain(options: {
  service: LocalService;
  receiver: Receiver;
  deliveryLog: DeliveryLog;
  counter: RequestCounter;
  endpoints: number;
  deliveries: number;
  progress: (line: string) => void;
}): Promise<DrainResult> {
  const { service, receiver, deliveryLog, counter } = options;
  const teams = Math.ceil(options.endpoints / ENDPOINTS_PER_TEAM);
  const endpointsPerTeam = options.endpoints / teams;
  if (!Number.isInteger(endpointsPerTeam))
    throw new Error(`${options.endpoints} endpoints do not split evenly over ${teams} teams`);
  const eventsPerTeam = Math.ceil(options.deliveries / options.endpoints);
  options.progress(
    `drain: ${teams} team(s) × ${endpointsPerTeam} endpoint(s), ${eventsPerTeam} events each = ${eventsPerTeam * options.endpoints} deliveries`,
  );
  const puts: RecordedPut[] = [];
  receiver.reset();
  for (let team = 0; team < teams; team++) {
    const { teamId, bearer } = await createBenchTeam(service, `Bench drain ×${options.endpoints} (${team + 1})`);
    for (let index = 0; index < endpointsPerTeam; index++) {
      await postJson(
        service,
        bearer,
        '/v1/webhook-endpoints',
        {
          name: `drain ${index + 1}`,
          url: receiver.url(`/drain/${options.endpoints}/${team + 1}/${index + 1}`),
          events: ['project.created'],
        },
        201,
      );
    }
    const project = (await postJson(
      service,
      bearer,
      '/v1/projects',
      { name: 'Drain', platform_type: 'discord' },
      201,
    )) as Project;
    for (let index = 0; index < eventsPerTeam; index++)
      puts.push({
        table: 'main',
        item: outboxItem(systemClock, teamId, { type: 'project.created', projectId: project.id, data: { project } })
          .item,
      });
  }
  await receiver.waitFor(options.endpoints, 60_000); // the warm-up projects' deliveries
  await service.runtime.idle();
  const seedStarted = performance.now();
  await batchWrite(service.store, puts, 8);
  const seedSeconds = (performance.now() - seedStarted) / 1000;

  const deliveries = eventsPerTeam * options.endpoints;
  receiver.reset();
  deliveryLog.reset();
  counter.reset();
  const all = deliveryLog.waitFor('succeeded', deliveries, 900_000);
  const started = performance.now();
  service.runtime.eventsCommitted(); // wakes the outbox relay (the stream's role on AWS), labelled PIPELINE_LABEL
  await all;
  const seconds = (performance.now() - started) / 1000;
  await service.runtime.idle();
  const counts = counter.snapshot();
  const described = { ...counts.described };
  for (const [description, count] of Object.entries(counts.backgroundDescribed[PIPELINE_LABEL] ?? {}))
    described[description] = (described[description] ?? 0) + count;
  const total = Object.values(described).reduce((sum, count) => sum + count, 0);
  const periodic = Object.fromEntries(Object.entries(counts.background).filter(([label]) => label !== PIPELINE_LABEL));
  return {
    endpoints: options.endpoints,
    teams,
    events: eventsPerTeam * teams,
    deliveries,
    seedSeconds,
    seconds,
    deliveriesPerSecond: deliveries / seconds,
    outcomes: deliveryLog.outcomes(),
    dynamoDbRequestsPerDelivery: total / deliveries,
    described,
    periodic,
    unsigned: receiver.unsigned(),
    errors: deliveryLog.errors(),
  };
}

/** A keep-alive HTTPS server on 127.0.0.1 that reads each request and never answers (a dead receiver). */
async function startSilentReceiver(
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

/** Figures of the noisy-neighbour case. */
export interface NoisyNeighbourResult {
  /**
   * Team A: endpoints of the dead receiver, deliveries queued to them, requests the dead receiver held when B started.
   */
  deadEndpoints: number;
  deadDeliveries: number;
  heldWhenBStarted: number;
  /** Team B: events sent (one project each, one endpoint) and commit → first attempt (ms). */
  eventsB: number;
  commitToAttemptB: LatencySummary;
  errors: string[];
}

/**
 * The noisy neighbour (fair delivery as a figure, DESIGN D24): team A has `deadEndpoints` endpoints
 * on a receiver that never answers and `deadProjects × deadEndpoints` deliveries queued to them; once
 * A's attempts hang, team B creates `eventsB` projects one after another (each a `project.created` to
 * its one endpoint on the live receiver) and B's commit → first attempt is measured at the receiver.
 * The dead receiver is closed before returning (A's hanging attempts fail at once).
 */
export async function measureNoisyNeighbour(options: {
  service: LocalService;
  receiver: Receiver;
  ca: CertificateAuthority;
  deadEndpoints: number;
  deadProjects: number;
  eventsB: number;
  progress: (line: string) => void;
}): Promise<NoisyNeighbourResult> {
  const { service, receiver } = options;
  const silent = await startSilentReceiver(options.ca);
  try {
    const teamA = await createBenchTeam(service, 'Bench noisy neighbour A');
    const teamB = await createBenchTeam(service, 'Bench noisy neighbour B');
    for (let index = 0; index < options.deadEndpoints; index++) {
      await postJson(
        service,
        teamA.bearer,
        '/v1/webhook-endpoints',
        { name: `dead ${index + 1}`, url: silent.url, events: ['project.created'] },
        201,
      );
    }
    await postJson(
      service,
      teamB.bearer,
      '/v1/webhook-endpoints',
      { name: 'B', url: receiver.url('/noisy/b'), events: ['project.created'] },
      201,
    );
    options.progress(
      `noisy neighbour: team A ${options.deadEndpoints} dead endpoints × ${options.deadProjects} events; team B ${options.eventsB} events`,
    );
    for (let index = 0; index < options.deadProjects; index++)
      await postJson(service, teamA.bearer, '/v1/projects', { name: `Noisy ${index}`, platform_type: 'discord' }, 201);
    const waitStarted = Date.now();
    while (silent.held() === 0 && Date.now() - waitStarted < 60_000)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const heldWhenBStarted = silent.held();
    receiver.reset();
    for (let index = 0; index < options.eventsB; index++) {
      await postJson(
        service,
        teamB.bearer,
        '/v1/projects',
        { name: `Neighbour ${index}`, platform_type: 'discord' },
        201,
      );
      await receiver.waitFor(index + 1, 120_000);
    }
    const latencies = receiver
      .latencies()
      .filter((entry) => entry.path.startsWith('/noisy/b'))
      .map((entry) => entry.ms);
    return {
      deadEndpoints: options.deadEndpoints,
      deadDeliveries: options.deadEndpoints * options.deadProjects,
      heldWhenBStarted,
      eventsB: options.eventsB,
      commitToAttemptB: summarize(latencies),
      errors: [],
    };
  } finally {
    await silent.close();
  }
}
