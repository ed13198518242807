/**
 * Benchmark 2, the drain: deliveries put in the outbox first, then timed from waking the relay until all succeeded
 * (over 1, 10 and 100 endpoints), beside the ceiling: the same number of signed POSTs sent straight through the same
 * HTTPS transport with the same concurrency.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../shared/clock.js';
import { newEventId } from '../shared/ids.js';
import type { LocalService } from '../shared/local/service.js';
import {
  EVENT_ID_HEADER,
  EVENT_NAME_HEADER,
  generateWebhookSecret,
  SIGNATURE_HEADER,
  signatureHeader,
} from '../shared/domain/webhook-deliveries/signing.js';
import { createHttpsTransport } from '../shared/domain/webhook-deliveries/transport/https-transport.js';
import { outboxItem } from '../shared/events/outbox.js';
import type { Project } from '../shared/domain/projects/schema.js';
import { runPool } from './measuring.js';
import type { DeliveryLog, Receiver } from './receiver.js';
import { batchWrite, type RecordedPut } from './seeding.js';
import type { RequestCounter } from './support.js';
import { createBenchTeam, PIPELINE_LABEL, postJson } from './webhooks.js';

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

/** Endpoints per team at most (DESIGN D8: the 50-endpoint cap); more endpoints take more teams. */
const ENDPOINTS_PER_TEAM = 50;

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
