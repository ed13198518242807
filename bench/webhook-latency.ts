/**
 * Benchmark 2b and 2c: event commit → first attempt received (ms), on a quiet pipeline with events committed by real
 * writes, and for a team whose neighbour's deliveries hang on a receiver that never answers (fair delivery, DESIGN
 * D24).
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import type { CertificateAuthority } from '../bin/certificates.js';
import type { LocalService } from '../shared/local/service.js';
import { runPool, summarize, type LatencySummary } from './measuring.js';
import { startSilentReceiver, type DeliveryLog, type Receiver } from './receiver.js';
import type { RequestCounter } from './support.js';
import { createBenchTeam, postJson } from './webhooks.js';

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
