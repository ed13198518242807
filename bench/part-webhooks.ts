/**
 * Part 2 (`webhooks`) of `npm run bench`: the drain over 1, 10 and 100 endpoints, each beside the raw HTTPS ceiling
 * and the store's transaction ceiling, then commit → first attempt (2b) and the noisy neighbour (2c), each checked and
 * printed.
 *
 * @module
 */
import type { CertificateAuthority } from '../bin/certificates.js';
import type { LocalService } from '../shared/local/service.js';
import {
  CONCURRENCY,
  DELIVERY_AIM,
  DRAIN_ENDPOINTS,
  LATENCY_ENDPOINTS,
  NEIGHBOUR_DEAD_ENDPOINTS,
  NEIGHBOUR_DEAD_EVENTS,
  SIZE,
} from './config.js';
import { measureCeiling, measureDrain } from './drain.js';
import { round } from './measuring.js';
import { progress } from './output.js';
import type { DeliveryLog, Receiver } from './receiver.js';
import { printWebhooks, type DrainRow } from './report-webhooks.js';
import { measureWriteCeiling, type WriteCeiling } from './store-baseline.js';
import type { RequestCounter } from './support.js';
import {
  measureNoisyNeighbour,
  measurePipeline,
  type NoisyNeighbourResult,
  type PipelineResult,
} from './webhook-latency.js';

/** The figures of part 2: the drains, the transaction ceiling (requests/s), commit → first attempt, the neighbour. */
export interface WebhookFigures {
  drainRows: DrainRow[];
  transactionCeiling: WriteCeiling;
  latency: PipelineResult;
  neighbour: NoisyNeighbourResult;
}

/**
 * Runs part 2 on the instrumented `service` (its receiver trusting `ca`), printed beside the store's `storeCeiling`;
 * pushes each failed check onto `failures`.
 */
export async function runWebhooks(
  {
    service,
    receiver,
    deliveryLog,
    counter,
    ca,
  }: {
    service: LocalService;
    receiver: Receiver;
    deliveryLog: DeliveryLog;
    counter: RequestCounter;
    ca: CertificateAuthority;
  },
  storeCeiling: WriteCeiling,
  failures: string[],
): Promise<WebhookFigures> {
  const drainRows: DrainRow[] = [];
  progress(
    `store: ${SIZE.ceilingUpdates} concurrent TransactWriteItems of 2 conditional updates (the dispatcher's request mix)`,
  );
  const transactionCeiling = await measureWriteCeiling(service.store, {
    updates: SIZE.ceilingUpdates,
    concurrency: CONCURRENCY,
    itemsPerTransaction: 2,
  });
  for (const endpoints of DRAIN_ENDPOINTS) {
    const drain = await measureDrain({
      service,
      receiver,
      deliveryLog,
      counter,
      endpoints,
      deliveries: SIZE.drainDeliveries,
      progress,
    });
    progress(`HTTPS ceiling: ${drain.deliveries} direct signed POSTs, concurrency ${CONCURRENCY}`);
    const urls = Array.from({ length: endpoints }, (_, index) => receiver.url(`/ceiling/${endpoints}/${index + 1}`));
    const https = await measureCeiling({
      receiver,
      caPem: ca.certPem,
      urls,
      count: drain.deliveries,
      concurrency: CONCURRENCY,
    });
    drainRows.push({ drain, https });
    if ((drain.outcomes.succeeded ?? 0) !== drain.deliveries)
      failures.push(
        `drain ×${endpoints}: ${drain.outcomes.succeeded ?? 0} of ${drain.deliveries} deliveries succeeded`,
      );
    if (drain.unsigned) failures.push(`drain ×${endpoints}: ${drain.unsigned} unsigned deliveries`);
    if (https.failures) failures.push(`HTTPS ceiling ×${endpoints}: ${https.failures} failed sends`);
    if (drain.dynamoDbRequestsPerDelivery > DELIVERY_AIM)
      failures.push(
        `drain ×${endpoints}: ${round(drain.dynamoDbRequestsPerDelivery, 2)} DynamoDB requests per delivery, aim ≤ ${DELIVERY_AIM}`,
      );
  }
  // 2b. Event commit → first attempt, with events committed by real writes.
  const latency = await measurePipeline({
    service,
    receiver,
    deliveryLog,
    counter,
    endpoints: LATENCY_ENDPOINTS,
    projects: SIZE.latencyProjects,
    createConcurrency: 1,
    progress,
  });
  if ((latency.outcomes.succeeded ?? 0) !== latency.deliveries)
    failures.push(`commit → attempt: ${latency.outcomes.succeeded ?? 0} of ${latency.deliveries} deliveries succeeded`);
  // 2c. The noisy neighbour (last with the service: A's dead deliveries stay queued for retries).
  const neighbour = await measureNoisyNeighbour({
    service,
    receiver,
    ca,
    deadEndpoints: NEIGHBOUR_DEAD_ENDPOINTS,
    deadProjects: NEIGHBOUR_DEAD_EVENTS,
    eventsB: SIZE.neighbourEvents,
    progress,
  });
  if (neighbour.commitToAttemptB.count !== neighbour.eventsB)
    failures.push(
      `noisy neighbour: B's receiver saw ${neighbour.commitToAttemptB.count} of ${neighbour.eventsB} events`,
    );
  printWebhooks(drainRows, storeCeiling, transactionCeiling, latency, neighbour);
  return { drainRows, transactionCeiling, latency, neighbour };
}
