/**
 * `npm run bench` (DESIGN §6: benchmarks are separate from tests and print figures). Starts its own
 * DynamoDB Local on a free port, the local service in-process (port 0, unique tables) and an HTTPS
 * receiver, then runs:
 *   1. DynamoDB requests per call and latency: `GET /v1/teams/current`, `POST /v1/projects`, MCP
 *      `tools/call list_projects` in a 2025-06-18 session and stateless on 2026-07-28 (1,000 sequential calls each
 *      after 50 warm-up calls), each with its
 *      latency ratio (p50 ÷ the p50 of its DynamoDB requests' summed durations in the call), and the front
 *      door: a join-page view and a checkout-session creation (against a loopback Stripe fake); then refused
 *      authentication, an unknown token id beside a wrong secret on both surfaces;
 *   2. webhook delivery: the drain of 10,000 deliveries put in the outbox first (1, 10, 100 endpoints)
 *      beside the raw HTTPS ceiling and DynamoDB Local's write ceiling; commit → first attempt; the noisy
 *      neighbour;
 *   3. replay-dead of 10,000 dead deliveries;
 *   4. the subscriber side at scale: requests per subscription transition, page 1 vs page 100
 *      of 100,000 subscribers, the deadline worker applying 10,000 renewals beside the write ceiling;
 *   5. `GET /v1/metrics` of a team with 100 subscribers and with 100,000 (10,000 at small scale);
 *   6. a broadcast to 2,000 subscribers (200 at small scale): messages sent per second through the queue and the
 *      message worker over SMTP to a loopback server;
 *   7. the Stripe import of 10,000 customers (300 at small scale) from a loopback Stripe fake (subscriptions per
 *      second, part `import`), then an access audit of them (DynamoDB and Stripe requests per audited Stripe
 *      subscription, part `audit`; either part runs both).
 * `BENCH_SCALE=small` shrinks every size for a quick run (page 100 stays page 100, with smaller pages);
 * `BENCH_IMPORT_CUSTOMERS=<n>` sets the size of part 7 alone (the import runs its pages one after the other);
 * `BENCH_PARTS=calls,webhooks,replay,subscribers,metrics,messages,import,audit` (any of them) runs only those parts.
 * Prints readable tables on stdout, progress on stderr, and one JSON line last; at the end it also
 * writes the tables to `bench/RESULTS.md` with the date, machine and scale (`bench/results.ts`;
 * `BENCH_RESULTS=<path>` writes them elsewhere). Everything it started is stopped at the end, on error
 * and on Ctrl-C. Exits 1 when a check fails (an error during
 * measurement, a lost delivery, a replay count that does not match).
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createCertificateAuthority } from '../bin/certificates.js';
import { startLocalService, type LocalService } from '../shared/local/service.js';
import { keys } from '../shared/store/keys.js';
import { extraCaFromEnvironment } from '../shared/domain/webhook-deliveries/transport/trust.js';
import { startDynamoDbLocal } from '../shared/store/dynamodb-local.js';
import { measureRefusals, type RefusalSeries } from './authentication.js';
import { measureReplay, type ReplayResult } from './replay.js';
import { runRequestBenchmarks, type CallScenarioResult } from './requests.js';
import { measureFrontDoor } from './front-door.js';
import { measureMetrics, type MetricsFigures } from './metrics.js';
import { measureBroadcast, type BroadcastFigures } from './messages.js';
import { measureImportAndAudit, type AuditFigures, type ImportFigures } from './audit.js';
import { measureAuditAtScale, WORKER_TIMEOUT_SECONDS, type AuditScaleFigures } from './audit-scale.js';
import { measureHookRefusals, type HookRefusalSeries } from './hook-refusals.js';
import { startFakeStripeApi } from '../test/support/stripe-api.js';
import {
  measureRawRequests,
  rawPriceOf,
  measureWriteCeiling,
  type RawRequestLatency,
  type WriteCeiling,
} from './store-baseline.js';
import {
  measureListing,
  measureRenewals,
  measureTransitions,
  type ListingFigures,
  type RenewalFigures,
  type TransitionFigures,
} from './subscriptions.js';
import {
  attachRequestCounter,
  benchParts,
  benchScale,
  formatDescribed,
  formatTable,
  freePort,
  installSignalHandlers,
  isStopping,
  onCleanup,
  round,
  runAsBackground,
  runCleanups,
  type RequestCounter,
} from './support.js';
import { createResultsRecorder, currentLoad, writeResults } from './results.js';
import {
  PIPELINE_LABEL,
  createDeliveryLog,
  measureCeiling,
  measureDrain,
  measureNoisyNeighbour,
  measurePipeline,
  startReceiver,
  type CeilingResult,
  type DrainResult,
  type NoisyNeighbourResult,
  type PipelineResult,
} from './webhooks.js';

/** The sizes of each part, per `BENCH_SCALE` (`full`: the sizes the aims are set for). */
const SIZES = {
  full: {
    calls: 1_000,
    refusalCalls: 500,
    rawSamples: 1_000,
    ceilingUpdates: 10_000,
    transitions: 50,
    subscribers: 100_000,
    metricsSizes: [100, 100_000],
    pageSize: 100,
    renewals: 10_000,
    drainDeliveries: 10_000,
    latencyProjects: 200,
    neighbourEvents: 50,
    replayDeliveries: 10_000,
    broadcastRecipients: 2_000,
    importCustomers: 10_000,
    auditSubscriptions: 100_000,
  },
  small: {
    calls: 200,
    refusalCalls: 100,
    rawSamples: 200,
    ceilingUpdates: 2_000,
    transitions: 10,
    subscribers: 2_000,
    metricsSizes: [100, 10_000],
    pageSize: 20,
    renewals: 1_000,
    drainDeliveries: 1_000,
    latencyProjects: 30,
    neighbourEvents: 20,
    replayDeliveries: 1_000,
    broadcastRecipients: 200,
    importCustomers: 300,
    auditSubscriptions: 2_000,
  },
} as const;
const SCALE = benchScale();
const SIZE = SIZES[SCALE];
/** The parts to run (`BENCH_PARTS`, e.g. `subscribers,replay`; default all; the store's own figures always run). */
const PARTS = benchParts([
  'calls',
  'webhooks',
  'replay',
  'subscribers',
  'metrics',
  'messages',
  'import',
  'audit',
  'audit-scale',
]);
// The audit at size takes a quarter of an hour: it runs only when named.
if (!process.env.BENCH_PARTS?.trim()) PARTS.delete('audit-scale');

const WARMUP_CALLS = 50;
const MEASURED_CALLS = SIZE.calls;
/** Calls per kind of refused token and surface (4 series; fewer than MEASURED_CALLS to keep the run short). */
const REFUSAL_CALLS = SIZE.refusalCalls;
/** The local dispatcher's concurrency (its default) and the ceilings' concurrency. */
const CONCURRENCY = 32;
const REPLAY_DELIVERIES = SIZE.replayDeliveries;
const REPLAY_SINCE_HOURS = 24;
/** Endpoint counts of the drain (1, 10 and 100). */
const DRAIN_ENDPOINTS = [1, 10, 100] as const;
/** Endpoints of the commit → first attempt run (events committed one at a time: latency, not a backlog). */
const LATENCY_ENDPOINTS = 1;
/** The noisy neighbour: A's dead endpoints and events (50 × 6 = 300 deliveries). */
const NEIGHBOUR_DEAD_ENDPOINTS = 50;
const NEIGHBOUR_DEAD_EVENTS = 6;
/** Subscriber pages read (page 1 and page 100). */
const LISTING_PAGES = 100;
/** Aim: DynamoDB requests of one transition beyond authentication. */
const TRANSITION_AIM = 3;
/** Aim: DynamoDB requests per delivery, outbox to succeeded. */
const DELIVERY_AIM = 3;

const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** The figures: printed on stdout and kept for `bench/RESULTS.md`. */
const figures = createResultsRecorder();
const out = (text: string) => figures.print(text);

/** The local service's timers' index partitions (sharded ones by their prefix), each with the label its reads get. */
const BACKGROUND_PARTITIONS: readonly { prefix: string; label: string }[] = [
  { prefix: keys.pendingDeliveriesIndex(0).slice(0, -2), label: 'sweeper' },
  { prefix: keys.pendingMessagesIndex(0).slice(0, -2), label: 'sweeper messages' },
  { prefix: keys.outboxIndex(0).slice(0, -2), label: 'sweeper outbox relay' },
  { prefix: keys.deadlineIndex(0).slice(0, -2), label: 'deadline worker' },
  { prefix: keys.scheduledAccessAuditsIndex, label: 'access audit schedule' },
  // Every job's running index (`running…Index`): the sweeper pages each for stalled jobs, a new job's included.
  ...Object.entries(keys)
    .filter(([name, partition]) => /^running\w+Index$/.test(name) && typeof partition === 'string')
    .map(([, partition]) => ({ prefix: partition as string, label: 'sweeper' })),
];

/**
 * Labels the local service's own background reads: the sweeper's queries of pending deliveries and messages, of the
 * outbox and of running jobs, the deadline worker's and the audit schedule's (the relay woken after a commit is
 * labelled through its async context instead).
 */
function classifyServiceBackground(commandName: string, input: unknown): string | null {
  if (commandName !== 'QueryCommand' || !input || typeof input !== 'object') return null;
  const query = input as { IndexName?: string; ExpressionAttributeValues?: Record<string, unknown> };
  if (query.IndexName !== 'gsi1') return null;
  const partitions = Object.values(query.ExpressionAttributeValues ?? {}).filter((value) => typeof value === 'string');
  const match = BACKGROUND_PARTITIONS.find(({ prefix }) => partitions.some((value) => value.startsWith(prefix)));
  return match?.label ?? null;
}

/** The bench's hold on the local pipeline's wake-ups after commits (see {@link instrumentService}). */
export interface PipelineHold {
  /** From now on, commits queue their wake-ups instead of waking the pipeline. */
  hold(): void;
  /** Stops holding, wakes the pipeline for every queued commit and resolves once it is idle. */
  release(): Promise<void>;
}

/**
 * Counts every DynamoDB request of the service through its document client's middleware stack (the
 * same stack as its DynamoDB client), and runs the local outbox relay and fan-out (woken after each
 * commit; on AWS the stream-driven fan-out Lambda) as labelled background work, so it is not charged to
 * the call. While held, commits queue their wake-ups, so a measured call shares neither the process nor
 * DynamoDB Local with the fan-out (on AWS another Lambda, after the answer).
 */
function instrumentService(service: LocalService): { counter: RequestCounter; pipeline: PipelineHold } {
  const counter = attachRequestCounter(service.store.document.middlewareStack, classifyServiceBackground);
  const wake = service.runtime.eventsCommitted.bind(service.runtime);
  let held: Array<Parameters<typeof wake>[0]> | null = null;
  service.runtime.eventsCommitted = (events) => {
    if (held) held.push(events);
    else runAsBackground(PIPELINE_LABEL, () => wake(events));
  };
  const pipeline: PipelineHold = {
    hold() {
      held ??= [];
    },
    async release() {
      const queued = held ?? [];
      held = null;
      for (const events of queued) runAsBackground(PIPELINE_LABEL, () => wake(events));
      await service.runtime.idle();
    },
  };
  return { counter, pipeline };
}

function printRequests(results: CallScenarioResult[]): void {
  out(
    `\n1. DynamoDB requests per call and latency (${MEASURED_CALLS} sequential calls after ${WARMUP_CALLS} warm-up calls each)\n`,
  );
  out(
    formatTable(
      [
        'call',
        'p50 ms',
        'p99 ms',
        'DDB ms',
        'ratio',
        'non-DDB ms',
        'calls/s',
        'DDB req/call min',
        'max',
        'aim',
        'errors',
      ],
      results.map((result) => [
        result.name,
        round(result.latency.p50),
        round(result.latency.p99),
        round(result.dynamoDbMs),
        round(result.latency.p50 / result.dynamoDbMs),
        round(result.outsideDynamoDbMs),
        round(result.throughputPerSecond, 1),
        result.requestsPerCall.min,
        result.requestsPerCall.max,
        result.aim ? `≤ ${result.aim.maxRequests} ${result.aim.met ? 'met' : 'NOT MET'}` : '-',
        result.errors,
      ]),
    ),
  );
  out(
    "\n   DDB ms = p50 of a call's DynamoDB time (its requests, each timed in the call at the store's client, summed); ratio = p50 ÷ DDB ms; non-DDB ms = p50 of the rest of each call\n",
  );
  for (const result of results) {
    const mixes = Object.entries(result.commandMixes)
      .sort((a, b) => b[1] - a[1])
      .map(([mix, count]) => `${mix} (${count})`)
      .join('; ');
    out(
      `   ${result.name}: ${mixes}; attempts/call ${result.attemptsPerCall.min}–${result.attemptsPerCall.max}; tokens ${result.tokens}`,
    );
    if (result.backgroundPerCall > 0) {
      const labels = Object.entries(result.background)
        .map(([label, count]) => `${label} ${count}`)
        .join(', ');
      out(`      + background ${round(result.backgroundPerCall, 2)} DDB req/call (${labels})`);
    }
    if (result.errorSamples.length) out(`      errors: ${result.errorSamples.join(' | ')}`);
  }
}

function printRefusals(series: RefusalSeries[]): void {
  out(
    `\n1b. Refused authentication: an unknown token id beside a wrong secret (${REFUSAL_CALLS} calls each after ${WARMUP_CALLS} warm-up calls, alternating; the same work on both paths)\n`,
  );
  out(
    formatTable(
      ['surface', 'token', 'p50 ms', 'p99 ms', 'DDB req/call typical', 'min', 'max', 'not 401'],
      series.map((entry) => [
        entry.surface,
        entry.kind,
        round(entry.latency.p50, 3),
        round(entry.latency.p99, 3),
        entry.requestsPerCall.typical,
        entry.requestsPerCall.min,
        entry.requestsPerCall.max,
        entry.unexpected,
      ]),
    ),
  );
  for (const entry of series)
    if (entry.unexpectedSamples.length)
      out(`   ${entry.surface}, ${entry.kind}: ${entry.unexpectedSamples.join(' | ')}`);
}

/** Prints 1e: the two paths of refused Stripe hook requests side by side. */
function printHookRefusals(series: HookRefusalSeries[]): void {
  out(
    `\n1e. Refused Stripe hook requests: a forged signature for a project connected to Stripe beside an unknown project (${REFUSAL_CALLS} calls each, alternating; both decrypt one credential)\n`,
  );
  out(
    formatTable(
      ['project', 'p50 ms', 'p99 ms', 'DDB req/call min', 'max', 'not 400'],
      series.map((entry) => [
        entry.project,
        round(entry.latency.p50, 3),
        round(entry.latency.p99, 3),
        entry.requestsPerCall.min,
        entry.requestsPerCall.max,
        entry.unexpected,
      ]),
    ),
  );
}

/**
 * The operation of a command or request description: `GetItemCommand` / `Get SUBSCRIPTION` → `Get`,
 * `TransactWrite[...]` → `TransactWrite`.
 */
function operationOf(name: string): string {
  return name
    .replace(/Command$/, '')
    .split(/[ [×]/)[0]
    .replace(/Items?$/, '');
}

/** Read operations (priced at the raw GetItem p50 by {@link getUpdateRoundTripsMs}). */
const READ_OPERATIONS = new Set(['Get', 'BatchGet', 'Query', 'TransactGet', 'Scan']);

/**
 * The round trips of a call priced at the raw requests' p50 (ms), each request at its own kind's raw p50
 * (`rawPriceOf`: a TransactWriteItems at a raw two-item transaction's, a BatchGetItem at a raw two-key batch's), from
 * requests per call by command name or description.
 */
function roundTripsMs(perCall: Record<string, number>, raw: RawRequestLatency): number {
  return Object.entries(perCall).reduce(
    (total, [name, count]) => total + count * rawPriceOf(operationOf(name), raw),
    0,
  );
}

/**
 * The same round trips at two prices only, as earlier runs printed them: each read at the GetItem p50, each write
 * (PutItem, TransactWriteItems, ...) at the UpdateItem p50.
 */
function getUpdateRoundTripsMs(perCall: Record<string, number>, raw: RawRequestLatency): number {
  return Object.entries(perCall).reduce(
    (total, [name, count]) =>
      total + count * (READ_OPERATIONS.has(operationOf(name)) ? raw.getItem.p50 : raw.updateItem.p50),
    0,
  );
}

/** `totals` divided by `calls`. */
function perCall(totals: Record<string, number>, calls: number): Record<string, number> {
  return Object.fromEntries(Object.entries(totals).map(([name, count]) => [name, count / calls]));
}

function printBaseline(raw: RawRequestLatency, ceiling: WriteCeiling, calls: CallScenarioResult[]): void {
  out(`\n1c. The store's own figures (raw requests through the store adapter, same DynamoDB Local, same run)\n`);
  out(
    formatTable(
      ['request', 'p50 ms', 'p99 ms'],
      (
        [
          ['GetItem (strongly consistent)', raw.getItem],
          ['UpdateItem (conditional)', raw.updateItem],
          ['BatchGetItem (2 keys)', raw.batchGetItem],
          ['Query (1 item)', raw.query],
          ['PutItem (conditional)', raw.putItem],
          ['TransactWriteItems (2 conditional updates)', raw.transactWriteItems],
        ] as const
      ).map(([request, latency]) => [request, round(latency.p50, 3), round(latency.p99, 3)]),
    ),
  );
  out(
    `\n   write ceiling: ${ceiling.updates} conditional UpdateItems at concurrency ${ceiling.concurrency}: ${round(ceiling.updatesPerSecond, 1)} /s\n`,
  );
  out(
    formatTable(
      [
        'call',
        'p50 ms',
        'DDB req/call',
        'round trips at raw p50, ms',
        'p50 ÷ round trips at raw p50',
        'p50 ÷ round trips at GetItem/UpdateItem p50',
      ],
      calls.map((result) => {
        const requests = perCall(result.commandTotals, result.calls);
        const trips = roundTripsMs(requests, raw);
        return [
          result.name,
          round(result.latency.p50, 2),
          round(result.requestsPerCall.mean, 2),
          round(trips, 2),
          round(result.latency.p50 / trips, 2),
          round(result.latency.p50 / getUpdateRoundTripsMs(requests, raw), 2),
        ];
      }),
    ),
  );
}

interface DrainRow {
  drain: DrainResult;
  https: CeilingResult;
}

function printWebhooks(
  rows: DrainRow[],
  storeCeiling: WriteCeiling,
  transactionCeiling: WriteCeiling,
  latency: PipelineResult,
  neighbour: NoisyNeighbourResult,
): void {
  out(
    `\n2. Webhook drain: deliveries put in the outbox first, timed from waking the relay until all succeeded (dispatcher concurrency ${CONCURRENCY}, at most ${CONCURRENCY / 4} per team, 5 per endpoint)`,
  );
  out(
    `   HTTPS ceiling = the same number of signed POSTs straight through the same transport, concurrency ${CONCURRENCY}; store ceiling = ${round(storeCeiling.updatesPerSecond, 1)} conditional UpdateItems/s (concurrency ${storeCeiling.concurrency})`,
  );
  out(
    `   transaction ceiling = ${round(transactionCeiling.updatesPerSecond, 1)} TransactWriteItems of ${transactionCeiling.itemsPerTransaction} conditional updates/s (concurrency ${transactionCeiling.concurrency}): the dispatcher's own request mix\n`,
  );
  out(
    formatTable(
      [
        'endpoints',
        'teams',
        'deliveries',
        'drain s',
        'deliveries/s',
        'HTTPS ceiling/s',
        'DDB req/delivery',
        `aim ≤ ${DELIVERY_AIM}`,
        'store ceiling ÷ req/delivery',
        'drain ÷ that (aim ≥ 0.5)',
        'transaction ceiling ÷ req/delivery',
        'drain ÷ that',
      ],
      rows.map(({ drain, https }) => {
        const bound = storeCeiling.updatesPerSecond / drain.dynamoDbRequestsPerDelivery;
        const mixBound = transactionCeiling.updatesPerSecond / drain.dynamoDbRequestsPerDelivery;
        return [
          drain.endpoints,
          drain.teams,
          drain.deliveries,
          round(drain.seconds, 2),
          round(drain.deliveriesPerSecond, 1),
          round(https.sendsPerSecond, 1),
          round(drain.dynamoDbRequestsPerDelivery, 2),
          drain.dynamoDbRequestsPerDelivery <= DELIVERY_AIM ? 'met' : 'NOT MET',
          round(bound, 1),
          round(drain.deliveriesPerSecond / bound, 2),
          round(mixBound, 1),
          round(drain.deliveriesPerSecond / mixBound, 2),
        ];
      }),
    ),
  );
  out('');
  for (const { drain, https } of rows) {
    const outcomes = Object.entries(drain.outcomes)
      .map(([outcome, count]) => `${outcome} ${count}`)
      .join(', ');
    out(
      `   ${drain.endpoints} endpoint(s): ${drain.events} events seeded in ${round(drain.seedSeconds, 2)} s; outcomes: ${outcomes || 'none'}; unsigned ${drain.unsigned}; HTTPS ceiling failures ${https.failures}` +
        (drain.errors.length ? `; errors: ${drain.errors.join(' | ')}` : ''),
    );
    out(`      DDB requests per delivery: ${formatDescribed(drain.described, drain.deliveries)}`);
  }
  out(
    `\n2b. Event commit → first attempt received, quiet pipeline (${latency.projects} projects created over REST one at a time, ${latency.endpoints} endpoint; ${latency.deliveries} deliveries)\n`,
  );
  out(
    formatTable(
      ['figure', 'value'],
      [
        ['p50 ms', String(round(latency.commitToAttempt.p50, 1))],
        ['p99 ms', String(round(latency.commitToAttempt.p99, 1))],
        ['max ms', String(round(latency.commitToAttempt.max, 1))],
        [
          'DynamoDB requests per delivery (fan-out and dispatch)',
          String(round(latency.dynamoDbRequestsPerDelivery, 2)),
        ],
      ],
    ),
  );
  out(
    `\n2c. Noisy neighbour: team A has ${neighbour.deadEndpoints} endpoints on a receiver that never answers and ${neighbour.deadDeliveries} deliveries queued (${neighbour.heldWhenBStarted} attempts hanging when B started); team B creates ${neighbour.eventsB} projects one by one\n`,
  );
  out(
    formatTable(
      ['figure', 'value'],
      [
        ["B's commit → first attempt p50 ms", String(round(neighbour.commitToAttemptB.p50, 1))],
        ["B's commit → first attempt p99 ms", String(round(neighbour.commitToAttemptB.p99, 1))],
        ["B's max ms", String(round(neighbour.commitToAttemptB.max, 1))],
      ],
    ),
  );
}

function printTransitionsAndListing(
  transitions: TransitionFigures[],
  listing: ListingFigures,
  raw: RawRequestLatency,
): void {
  out(`\n4. Subscriber side at scale\n`);
  out(
    `4a. One subscription transition over REST (${transitions[0]?.calls ?? 0} calls each; authentication = the token with the IP's counter and the rate counter)\n`,
  );
  out(
    formatTable(
      [
        'transition',
        'p50 ms',
        'DDB req/call',
        'authentication',
        'beyond authentication',
        `aim ≤ ${TRANSITION_AIM}`,
        'overhead ratio',
        'errors',
      ],
      transitions.map((entry) => [
        entry.name,
        round(entry.latency.p50, 2),
        entry.total.min === entry.total.max ? String(entry.total.max) : `${entry.total.min}–${entry.total.max}`,
        entry.authentication.min === entry.authentication.max
          ? String(entry.authentication.max)
          : `${entry.authentication.min}–${entry.authentication.max}`,
        entry.beyondAuthentication.min === entry.beyondAuthentication.max
          ? String(entry.beyondAuthentication.max)
          : `${entry.beyondAuthentication.min}–${entry.beyondAuthentication.max}`,
        entry.beyondAuthentication.max <= TRANSITION_AIM ? 'met' : 'NOT MET',
        round(entry.latency.p50 / roundTripsMs(perCall(entry.described, entry.calls), raw), 2),
        entry.errors.length,
      ]),
    ),
  );
  out('');
  for (const entry of transitions) {
    out(`   ${entry.name}: ${formatDescribed(entry.described, entry.calls)}`);
    if (entry.errors.length) out(`      errors: ${entry.errors.join(' | ')}`);
  }
  out(
    `\n4b. GET /v1/projects/{id}/subscribers of a project with ${listing.subscribers.toLocaleString('en-US')} subscribers, limit ${listing.pageSize} (seeded in ${round(listing.seedSeconds, 1)} s with BatchWriteItem)\n`,
  );
  out(
    formatTable(
      ['page', 'subscribers on it', 'DDB requests', 'ms', 'requests'],
      [
        [
          '1',
          listing.first.count,
          listing.first.requests,
          round(listing.first.ms, 1),
          formatDescribed(listing.first.described),
        ],
        [
          String(listing.last.page),
          listing.last.count,
          listing.last.requests,
          round(listing.last.ms, 1),
          formatDescribed(listing.last.described),
        ],
      ],
    ),
  );
  out(
    `\n   every page read: ${listing.requestsPerPage.min}–${listing.requestsPerPage.max} requests${listing.errors.length ? `; errors: ${listing.errors.join(' | ')}` : ''}`,
  );
}

function printMetrics(metrics: MetricsFigures[]): void {
  out(
    `\n5. GET /v1/metrics of a team (${MEASURED_CALLS} sequential calls per size; counters and 90 daily rollups, seeded with BatchWriteItem)\n`,
  );
  out(
    formatTable(
      ['subscribers', 'seeded in s', 'p50 ms', 'p99 ms', 'DDB requests/call', 'errors'],
      metrics.map((entry) => [
        entry.subscribers.toLocaleString('en-US'),
        round(entry.seedSeconds, 1),
        round(entry.latency.p50, 2),
        round(entry.latency.p99, 2),
        entry.requests.min === entry.requests.max
          ? String(entry.requests.max)
          : `${entry.requests.min}–${entry.requests.max}`,
        entry.errors.length,
      ]),
    ),
  );
  out('');
  for (const entry of metrics)
    out(
      `   ${entry.subscribers.toLocaleString('en-US')} subscribers: ${formatDescribed(entry.described, entry.calls)}`,
    );
}

function printBroadcasts(broadcasts: readonly BroadcastFigures[]): void {
  out(
    `\n6. A broadcast, end to end through the local queue and the message worker (SMTP to a loopback server; Telegram DMs to the Bot API fake, at most 30 per second)\n`,
  );
  out(
    formatTable(
      [
        'channel',
        'recipients',
        'seconds',
        'messages/s',
        'queued',
        'sent',
        'failed',
        'skipped',
        'accepted',
        'retries',
        'deferred',
      ],
      broadcasts.map((broadcast) => [
        broadcast.channel,
        broadcast.recipients.toLocaleString('en-US'),
        round(broadcast.seconds, 2),
        round(broadcast.messagesPerSecond, 1),
        broadcast.counts.queued,
        broadcast.counts.sent,
        broadcast.counts.failed,
        broadcast.counts.skipped,
        broadcast.accepted,
        broadcast.retries,
        broadcast.deferred,
      ]),
    ),
  );
}

function printImportAndAudit(importing: ImportFigures, audit: AuditFigures): void {
  out(`\n7. The Stripe import and an access audit (loopback Stripe fake, queue messages run one after the other)\n`);
  out(
    formatTable(
      [
        'customers',
        'subscriptions imported',
        'seconds',
        'subscriptions/s',
        'DynamoDB req / sub',
        'Stripe requests',
        'Stripe req / sub',
      ],
      [
        [
          importing.customers.toLocaleString('en-US'),
          importing.subscriptions.toLocaleString('en-US'),
          round(importing.seconds, 2),
          round(importing.subscriptionsPerSecond, 1),
          round(importing.dynamoDbPerSubscription, 2),
          importing.stripeRequests,
          round(importing.stripePerSubscription, 3),
        ],
      ],
    ),
  );
  out(
    formatTable(
      [
        'Stripe subscriptions audited',
        'our subscriptions',
        'findings',
        'pages',
        'seconds',
        'DynamoDB req / Stripe sub',
        'Stripe req / Stripe sub',
      ],
      [
        [
          audit.stripeSubscriptions.toLocaleString('en-US'),
          audit.subscriptions.toLocaleString('en-US'),
          audit.findings,
          audit.pages,
          round(audit.seconds, 2),
          round(audit.dynamoDbPerStripeSubscription, 2),
          round(audit.stripePerStripeSubscription, 3),
        ],
      ],
    ),
  );
}

function printAuditAtScale(audit: AuditScaleFigures): void {
  out(
    `\n7b. An access audit at size (${audit.subscriptions.toLocaleString('en-US')} subscriptions seeded through the store adapters, one queue message at a time)\n`,
  );
  out(
    formatTable(
      [
        'Stripe subs',
        'our subs',
        'seed s',
        'audit s',
        'chunks',
        'longest chunk s',
        `of ${WORKER_TIMEOUT_SECONDS} s timeout`,
        'DynamoDB req / sub',
        'Stripe req / sub',
      ],
      [
        [
          audit.stripeSubscriptions.toLocaleString('en-US'),
          audit.subscriptions.toLocaleString('en-US'),
          round(audit.seedSeconds, 1),
          round(audit.seconds, 1),
          audit.chunks,
          round(audit.longestChunkSeconds, 2),
          `${round(audit.longestChunkShare * 100, 1)} %`,
          round(audit.dynamoDbPerSubscription, 3),
          round(audit.stripePerSubscription, 4),
        ],
      ],
    ),
  );
  out(
    formatTable(
      ['phase', 'chunks', 'seconds', 'longest chunk s', 'DynamoDB requests', 'Stripe requests'],
      audit.phases.map((phase) => [
        phase.phase,
        phase.chunks,
        round(phase.seconds, 1),
        round(phase.longestChunkSeconds, 2),
        phase.dynamoDbRequests.toLocaleString('en-US'),
        phase.stripeRequests,
      ]),
    ),
  );
  out(
    `findings: ${Object.entries(audit.findings)
      .map(([kind, count]) => `${kind} ${count}`)
      .join(', ')} (planted ${audit.planted}; all found: ${audit.allFound ? 'yes' : 'NO'})`,
  );
  out(`a second audit requested while it ran: ${audit.secondAudit}`);
}

function printRenewals(renewals: RenewalFigures): void {
  const bound = renewals.ceiling.updatesPerSecond / renewals.requestsPerTransition;
  out(
    `\n4c. The deadline worker applying ${renewals.renewals.toLocaleString('en-US')} due renewals (fresh tables; seeded in ${round(renewals.seedSeconds, 1)} s)\n`,
  );
  out(
    formatTable(
      ['figure', 'value'],
      [
        [
          'renewals applied (failed)',
          `${renewals.applied} (${renewals.failed}); sample renewed ${renewals.renewedInSample} of ${renewals.sample}`,
        ],
        ['worker runs, back to back', String(renewals.runs)],
        ['seconds', String(round(renewals.seconds, 2))],
        ['transitions per second', String(round(renewals.transitionsPerSecond, 1))],
        ['DynamoDB requests per transition', String(round(renewals.requestsPerTransition, 2))],
        [
          `store write ceiling (conditional UpdateItems, concurrency ${renewals.ceiling.concurrency})`,
          `${round(renewals.ceiling.updatesPerSecond, 1)} /s`,
        ],
        [
          'ceiling ÷ requests per transition',
          `${round(bound, 1)} /s (worker reached ${round(renewals.transitionsPerSecond / bound, 2)} of it)`,
        ],
      ],
    ),
  );
  out(`\n   requests per renewal: ${formatDescribed(renewals.described, Math.max(1, renewals.applied))}`);
}

function printReplay(result: ReplayResult): void {
  out(
    `\n3. replay-dead of ${result.seeded.toLocaleString('en-US')} dead deliveries (since_hours ${result.sinceHours})\n`,
  );
  const byCommand = Object.entries(result.byCommand)
    .map(([name, count]) => `${name.replace(/Command$/, '')} ${count}`)
    .join(', ');
  out(
    formatTable(
      ['figure', 'value'],
      [
        ['seconds to the 202 (job, matched counted; aim < 1 s)', String(round(result.secondsTo202, 3))],
        ['seconds until the job replayed everything (aim < 60 s)', String(round(result.seconds, 2))],
        ['matched', String(result.matched)],
        ['deliveries replayed per second', String(round(result.replayed / result.seconds, 1))],
        ['DynamoDB requests', `${result.dynamoDbRequests} (${byCommand}); HTTP attempts ${result.dynamoDbAttempts}`],
        ['returned count', `${result.replayed} ${result.replayed === result.seeded ? '= seeded' : '≠ seeded'}`],
        [
          'queue messages',
          `${result.queueMessages} in ${result.queueSends} send calls, ${result.distinctQueuedDeliveries} distinct deliveries ${result.queueMessages === result.seeded ? '= seeded' : '≠ seeded'}`,
        ],
        ['after: dead-letter copies left', String(result.deadLetterLeft)],
        ['after: rows pending, attempts 0', String(result.pendingAfter)],
        ['seeding (BatchWriteItem, not measured)', `${round(result.seedSeconds, 2)} s`],
      ],
    ),
  );
}

/** Runs `part` against a DynamoDB Local of its own (started on a free port, stopped afterwards). */
async function withFreshDynamoDb<T>(name: string, part: (endpoint: string) => Promise<T>): Promise<T> {
  const port = await freePort();
  progress(`${name}: starting a fresh DynamoDB Local on 127.0.0.1:${port}`);
  const dynamoDb = await startDynamoDbLocal({ port });
  let stopping: Promise<void> | null = null;
  const stop = () => (stopping ??= dynamoDb.stop());
  onCleanup(`DynamoDB Local (${name})`, stop);
  try {
    return await part(dynamoDb.endpoint);
  } finally {
    await stop();
  }
}

async function main(): Promise<void> {
  installSignalHandlers();
  const started = performance.now();
  const startedAt = new Date();
  const loadAtStart = currentLoad();
  const failures: string[] = [];

  const dynamoDbPort = await freePort();
  progress(`starting DynamoDB Local on 127.0.0.1:${dynamoDbPort}`);
  const dynamoDb = await startDynamoDbLocal({ port: dynamoDbPort });
  let dynamoDbStop: Promise<void> | null = null;
  const stopDynamoDb = () => (dynamoDbStop ??= dynamoDb.stop());
  onCleanup('DynamoDB Local', stopDynamoDb);

  progress('creating a test CA and the HTTPS receiver');
  const ca = await createCertificateAuthority({ commonName: 'membership-bench CA' });
  const receiver = await startReceiver(ca);
  onCleanup('receiver', () => receiver.close());

  // The service trusts the CA the way `npm start` does: a PEM file named by WEBHOOK_EXTRA_CA_FILE.
  const caDirectory = mkdtempSync(join(tmpdir(), 'membership-bench-ca-'));
  onCleanup('CA file', () => rmSync(caDirectory, { recursive: true, force: true }));
  writeFileSync(join(caDirectory, 'ca.pem'), ca.certPem);
  const extraCaPem = extraCaFromEnvironment({ WEBHOOK_EXTRA_CA_FILE: join(caDirectory, 'ca.pem') });

  // The front door's checkout calls reach Stripe: here the loopback fake of the tests (no real provider).
  const stripeApi = await startFakeStripeApi();
  onCleanup('fake Stripe API', () => stripeApi.stop());

  const deliveryLog = createDeliveryLog();
  const tableName = `bench-${randomBytes(4).toString('hex')}`;
  progress(`starting the local service (tables ${tableName}, ${tableName}-dead)`);
  const service = await startLocalService({
    host: '127.0.0.1',
    port: 0,
    dynamoDbEndpoint: dynamoDb.endpoint,
    dynamoDbLocalPort: dynamoDbPort,
    tableName,
    deadLetterTableName: `${tableName}-dead`,
    timeScale: 1,
    extraCaPem,
    allowPrivateTargets: true,
    log: deliveryLog.log,
    integrations: { stripeApiBaseUrl: stripeApi.url },
  });
  let serviceStop: Promise<void> | null = null;
  const stopService = () => (serviceStop ??= service.stop());
  onCleanup('local service', stopService);
  const { counter, pipeline } = instrumentService(service);

  // 1. Requests per call and latency.
  let calls: CallScenarioResult[] = [];
  let refusals: RefusalSeries[] = [];
  if (PARTS.has('calls')) {
    calls = await runRequestBenchmarks({
      service,
      counter,
      pipeline,
      warmup: WARMUP_CALLS,
      calls: MEASURED_CALLS,
      progress,
    });
    const frontDoor = await measureFrontDoor({
      service,
      counter,
      pipeline,
      stripeApi,
      warmup: WARMUP_CALLS,
      calls: MEASURED_CALLS,
      progress,
    });
    calls.push(...frontDoor.results);
    for (const result of calls) {
      if (result.errors) failures.push(`${result.name}: ${result.errors} non-2xx answers`);
      if (result.aim && !result.aim.met)
        failures.push(
          `${result.name}: ${result.requestsPerCall.max} DynamoDB requests per call, aim ≤ ${result.aim.maxRequests}`,
        );
    }
    printRequests(calls);

    // 1b. Refused authentication: unknown token id vs wrong secret.
    refusals = await measureRefusals({
      service,
      counter,
      existingToken: service.demoToken,
      warmup: WARMUP_CALLS,
      calls: REFUSAL_CALLS,
      progress,
    });
    for (const entry of refusals)
      if (entry.unexpected)
        failures.push(`${entry.surface}, ${entry.kind}: ${entry.unexpected} answers other than 401`);
    for (const surface of new Set(refusals.map((entry) => entry.surface))) {
      const [unknown, wrong] = refusals.filter((entry) => entry.surface === surface);
      if (unknown && wrong && unknown.requestsPerCall.typical !== wrong.requestsPerCall.typical) {
        failures.push(
          `${surface}: an unknown token id typically costs ${unknown.requestsPerCall.typical} DynamoDB requests, a wrong secret ${wrong.requestsPerCall.typical}`,
        );
      }
    }
    printRefusals(refusals);

    // 1e. Refused Stripe hook requests: a connected project beside an unknown one.
    progress(`refused Stripe hook requests: ${WARMUP_CALLS} warm-up + ${REFUSAL_CALLS} calls per project`);
    const hookRefusals = await measureHookRefusals({
      service,
      counter,
      connectedProjectId: frontDoor.projectId,
      warmup: WARMUP_CALLS,
      calls: REFUSAL_CALLS,
    });
    for (const entry of hookRefusals)
      if (entry.unexpected)
        failures.push(`Stripe hook, ${entry.project} project: ${entry.unexpected} answers other than 400`);
    printHookRefusals(hookRefusals);
  }

  // 1c. The store's own figures: each raw request kind's p50 and the write ceiling.
  progress(
    `store: ${SIZE.rawSamples} raw requests of each kind, then ${SIZE.ceilingUpdates} concurrent conditional UpdateItems`,
  );
  const raw = await measureRawRequests(service.store, SIZE.rawSamples);
  const storeCeiling = await measureWriteCeiling(service.store, {
    updates: SIZE.ceilingUpdates,
    concurrency: CONCURRENCY,
  });
  printBaseline(raw, storeCeiling, calls);

  // 4a, 4b. Subscriber side through the service: transitions, page 1 vs page 100.
  let transitions: TransitionFigures[] = [];
  let listing: ListingFigures | null = null;
  if (PARTS.has('subscribers')) {
    transitions = await measureTransitions({ service, counter, count: SIZE.transitions, progress });
    for (const entry of transitions) {
      if (entry.errors.length) failures.push(`${entry.name}: ${entry.errors.length} non-200 answers`);
      if (entry.beyondAuthentication.max > TRANSITION_AIM)
        failures.push(
          `${entry.name}: ${entry.beyondAuthentication.max} DynamoDB requests beyond authentication, aim ≤ ${TRANSITION_AIM}`,
        );
    }
    listing = await measureListing({
      service,
      counter,
      subscribers: SIZE.subscribers,
      pageSize: SIZE.pageSize,
      pages: LISTING_PAGES,
      progress,
    });
    if (listing.errors.length) failures.push(`subscriber listing: ${listing.errors.join(' | ')}`);
    if (listing.last.page !== LISTING_PAGES)
      failures.push(`subscriber listing: read ${listing.last.page} pages, expected ${LISTING_PAGES}`);
    if (listing.first.requests !== listing.last.requests)
      failures.push(
        `subscriber listing: page 1 took ${listing.first.requests} requests, page ${listing.last.page} ${listing.last.requests}`,
      );
    printTransitionsAndListing(transitions, listing, raw);
  }

  // 5. GET /v1/metrics with few and many subscribers: the same requests.
  let metrics: MetricsFigures[] = [];
  if (PARTS.has('metrics')) {
    metrics = await measureMetrics({ service, counter, sizes: SIZE.metricsSizes, calls: MEASURED_CALLS, progress });
    for (const entry of metrics) {
      if (entry.errors.length)
        failures.push(`GET /v1/metrics with ${entry.subscribers} subscribers: ${entry.errors.join(' | ')}`);
      if (entry.active !== entry.subscribers)
        failures.push(`GET /v1/metrics: ${entry.active} active subscriptions, ${entry.subscribers} seeded`);
    }
    const requests = new Set(metrics.flatMap((entry) => [entry.requests.min, entry.requests.max]));
    if (requests.size > 1)
      failures.push(
        `GET /v1/metrics: ${[...requests].join(', ')} DynamoDB requests per call across sizes, expected one figure`,
      );
    printMetrics(metrics);
  }

  // 6. A broadcast: messages per second through the queue and the message worker, by e-mail and by Telegram DM.
  const broadcasts: BroadcastFigures[] = [];
  if (PARTS.has('messages')) {
    for (const channel of ['email', 'telegram'] as const) {
      const broadcast = await measureBroadcast({
        store: service.store,
        channel,
        recipients: SIZE.broadcastRecipients,
        concurrency: CONCURRENCY,
        progress,
      });
      // A retried attempt (an SMTP timeout) may have reached the server before: at most one extra message per retry.
      if (
        broadcast.counts.sent !== broadcast.recipients ||
        broadcast.accepted < broadcast.recipients ||
        broadcast.accepted > broadcast.recipients + broadcast.retries
      )
        failures.push(
          `broadcast by ${channel}: ${broadcast.counts.sent} sent and ${broadcast.accepted} accepted of ${broadcast.recipients} (${broadcast.retries} retries)`,
        );
      broadcasts.push(broadcast);
    }
    printBroadcasts(broadcasts);
  }

  // 7. The Stripe import (subscriptions per second) and an access audit (requests per audited subscription).
  let imported: Awaited<ReturnType<typeof measureImportAndAudit>> | null = null;
  if (PARTS.has('import') || PARTS.has('audit')) {
    const customers = Number(process.env.BENCH_IMPORT_CUSTOMERS ?? SIZE.importCustomers);
    imported = await measureImportAndAudit({ store: service.store, customers, progress });
    if (imported.audit.findings !== 2)
      failures.push(`access audit: ${imported.audit.findings} findings, expected the 2 drifts made`);
    printImportAndAudit(imported.importing, imported.audit);
  }
  let auditScale: AuditScaleFigures | null = null;
  if (PARTS.has('audit-scale')) {
    const subscriptions = Number(process.env.BENCH_AUDIT_SUBSCRIPTIONS ?? SIZE.auditSubscriptions);
    auditScale = await measureAuditAtScale({ store: service.store, subscriptions, progress });
    if (!auditScale.allFound)
      failures.push(
        `access audit at size: findings ${JSON.stringify(auditScale.findings)}, expected the planted drifts`,
      );
    if (!auditScale.secondAudit.startsWith('CONFLICT'))
      failures.push(`access audit at size: a second audit while one ran was ${auditScale.secondAudit}`);
    if (auditScale.longestChunkShare > 1 / 3)
      failures.push(`access audit at size: a chunk took ${round(auditScale.longestChunkSeconds, 1)} s`);
    printAuditAtScale(auditScale);
  }

  // 2. Webhook drain over 1, 10 and 100 endpoints, each beside the raw HTTPS ceiling.
  const drainRows: DrainRow[] = [];
  let latency: PipelineResult | null = null;
  let neighbour: NoisyNeighbourResult | null = null;
  let transactionCeiling: WriteCeiling | null = null;
  if (PARTS.has('webhooks')) {
    progress(
      `store: ${SIZE.ceilingUpdates} concurrent TransactWriteItems of 2 conditional updates (the dispatcher's request mix)`,
    );
    transactionCeiling = await measureWriteCeiling(service.store, {
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
    latency = await measurePipeline({
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
      failures.push(
        `commit → attempt: ${latency.outcomes.succeeded ?? 0} of ${latency.deliveries} deliveries succeeded`,
      );
    // 2c. The noisy neighbour (last with the service: A's dead deliveries stay queued for retries).
    neighbour = await measureNoisyNeighbour({
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
  }

  // The service is no longer needed; stop it before the replay so its sweeper does not compete.
  await stopService();

  // DynamoDB Local slows down markedly once it holds the service run's data (seen: GetItem from ~1 ms to
  // hundreds of ms), so the parts on fresh tables each get a fresh DynamoDB Local of their own.
  await stopDynamoDb();

  // 3. replay-dead of 10,000 dead deliveries.
  let replay: ReplayResult | null = null;
  if (PARTS.has('replay')) {
    replay = await withFreshDynamoDb('replay', (endpoint) =>
      measureReplay({ endpoint, deliveries: REPLAY_DELIVERIES, sinceHours: REPLAY_SINCE_HOURS, progress }),
    );
    if (replay.replayed !== REPLAY_DELIVERIES)
      failures.push(`replay-dead returned ${replay.replayed}, expected ${REPLAY_DELIVERIES}`);
    if (replay.queueMessages !== REPLAY_DELIVERIES || replay.distinctQueuedDeliveries !== REPLAY_DELIVERIES)
      failures.push(
        `replay-dead queued ${replay.queueMessages} messages (${replay.distinctQueuedDeliveries} distinct), expected ${REPLAY_DELIVERIES}`,
      );
    if (replay.deadLetterLeft !== 0) failures.push(`replay-dead left ${replay.deadLetterLeft} dead-letter copies`);
    if (replay.pendingAfter !== REPLAY_DELIVERIES)
      failures.push(`replay-dead: ${replay.pendingAfter} rows pending afterwards, expected ${REPLAY_DELIVERIES}`);
    printReplay(replay);
  }

  // 4c. The deadline worker applying due renewals, in fresh tables, beside the write ceiling there.
  let renewals: RenewalFigures | null = null;
  if (PARTS.has('subscribers') && listing) {
    renewals = await withFreshDynamoDb('renewals', (endpoint) =>
      measureRenewals({
        endpoint,
        renewals: SIZE.renewals,
        ceilingUpdates: SIZE.ceilingUpdates,
        ceilingConcurrency: CONCURRENCY,
        progress,
      }),
    );
    if (renewals.applied !== SIZE.renewals || renewals.failed)
      failures.push(`renewals: ${renewals.applied} applied, ${renewals.failed} failed, expected ${SIZE.renewals}`);
    if (renewals.renewedInSample !== renewals.sample)
      failures.push(`renewals: ${renewals.renewedInSample} of ${renewals.sample} sampled subscriptions renewed`);
    printRenewals(renewals);
  }

  const durationSeconds = (performance.now() - started) / 1000;
  console.log(
    `\nchecks: ${failures.length ? `FAILED\n${failures.map((failure) => `  - ${failure}`).join('\n')}` : 'all passed'}; total ${round(durationSeconds, 1)} s\n`,
  );
  console.log(
    JSON.stringify({
      bench: 'membership-service',
      at: new Date().toISOString(),
      node: process.version,
      duration_s: round(durationSeconds, 1),
      requests: calls.map((result) => ({
        call: result.name,
        calls: result.calls,
        warmup: result.warmup,
        p50_ms: round(result.latency.p50, 3),
        p99_ms: round(result.latency.p99, 3),
        ddb_ms: round(result.dynamoDbMs, 3),
        latency_ratio: round(result.latency.p50 / result.dynamoDbMs, 2),
        non_ddb_ms: round(result.outsideDynamoDbMs, 3),
        ratio_at_raw_prices: round(
          result.latency.p50 / roundTripsMs(perCall(result.commandTotals, result.calls), raw),
          2,
        ),
        ratio_at_get_update_prices: round(
          result.latency.p50 / getUpdateRoundTripsMs(perCall(result.commandTotals, result.calls), raw),
          2,
        ),
        calls_per_s: round(result.throughputPerSecond, 1),
        ddb_requests_per_call: { min: result.requestsPerCall.min, max: result.requestsPerCall.max },
        ddb_command_mix: result.commandMixes,
        background_ddb_requests_per_call: round(result.backgroundPerCall, 3),
        aim_max: result.aim?.maxRequests ?? null,
        aim_met: result.aim?.met ?? null,
        errors: result.errors,
      })),
      refused_authentication: refusals.map((entry) => ({
        surface: entry.surface,
        token: entry.kind,
        p50_ms: round(entry.latency.p50, 3),
        p99_ms: round(entry.latency.p99, 3),
        ddb_requests_per_call: entry.requestsPerCall,
        not_401: entry.unexpected,
      })),
      scale: SCALE,
      store: {
        get_item_p50_ms: round(raw.getItem.p50, 3),
        update_item_p50_ms: round(raw.updateItem.p50, 3),
        batch_get_item_p50_ms: round(raw.batchGetItem.p50, 3),
        query_p50_ms: round(raw.query.p50, 3),
        put_item_p50_ms: round(raw.putItem.p50, 3),
        transact_write_items_p50_ms: round(raw.transactWriteItems.p50, 3),
        write_ceiling_per_s: round(storeCeiling.updatesPerSecond, 1),
        write_ceiling_concurrency: storeCeiling.concurrency,
        transaction_ceiling_per_s: transactionCeiling && round(transactionCeiling.updatesPerSecond, 1),
      },
      webhook_drain: drainRows.map(({ drain, https }) => ({
        endpoints: drain.endpoints,
        teams: drain.teams,
        deliveries: drain.deliveries,
        drain_s: round(drain.seconds, 3),
        deliveries_per_s: round(drain.deliveriesPerSecond, 1),
        https_ceiling_per_s: round(https.sendsPerSecond, 1),
        ddb_requests_per_delivery: round(drain.dynamoDbRequestsPerDelivery, 2),
        outcomes: drain.outcomes,
      })),
      commit_to_first_attempt_ms: latency && {
        p50: round(latency.commitToAttempt.p50, 1),
        p99: round(latency.commitToAttempt.p99, 1),
        deliveries: latency.deliveries,
      },
      noisy_neighbour_b_ms: neighbour && {
        p50: round(neighbour.commitToAttemptB.p50, 1),
        p99: round(neighbour.commitToAttemptB.p99, 1),
        events: neighbour.eventsB,
      },
      transitions: transitions.map((entry) => ({
        name: entry.name,
        p50_ms: round(entry.latency.p50, 2),
        ddb_requests: entry.total,
        authentication: entry.authentication,
        beyond_authentication: entry.beyondAuthentication,
      })),
      subscriber_listing: listing && {
        subscribers: listing.subscribers,
        page_size: listing.pageSize,
        page_1_requests: listing.first.requests,
        last_page: listing.last.page,
        last_page_requests: listing.last.requests,
        page_1_ms: round(listing.first.ms, 1),
        last_page_ms: round(listing.last.ms, 1),
      },
      metrics: metrics.map((entry) => ({
        subscribers: entry.subscribers,
        calls: entry.calls,
        p50_ms: round(entry.latency.p50, 3),
        p99_ms: round(entry.latency.p99, 3),
        ddb_requests_per_call: entry.requests,
      })),
      renewals: renewals && {
        renewals: renewals.renewals,
        applied: renewals.applied,
        seconds: round(renewals.seconds, 2),
        transitions_per_s: round(renewals.transitionsPerSecond, 1),
        ddb_requests_per_transition: round(renewals.requestsPerTransition, 2),
        write_ceiling_per_s: round(renewals.ceiling.updatesPerSecond, 1),
      },
      replay_dead: replay && {
        deliveries: replay.seeded,
        since_hours: replay.sinceHours,
        seconds_to_202: round(replay.secondsTo202, 3),
        seconds: round(replay.seconds, 3),
        matched: replay.matched,
        ddb_requests: replay.dynamoDbRequests,
        ddb_by_command: replay.byCommand,
        replayed: replay.replayed,
        queue_messages: replay.queueMessages,
        queue_sends: replay.queueSends,
      },
      broadcasts: broadcasts.map((broadcast) => ({
        channel: broadcast.channel,
        recipients: broadcast.recipients,
        seconds: round(broadcast.seconds, 3),
        messages_per_s: round(broadcast.messagesPerSecond, 1),
        counts: broadcast.counts,
        accepted: broadcast.accepted,
        retries: broadcast.retries,
        deferred: broadcast.deferred,
      })),
      import: imported && {
        customers: imported.importing.customers,
        subscriptions: imported.importing.subscriptions,
        seconds: round(imported.importing.seconds, 3),
        subscriptions_per_s: round(imported.importing.subscriptionsPerSecond, 1),
        stripe_requests: imported.importing.stripeRequests,
        ddb_requests: imported.importing.dynamoDbRequests,
        ddb_per_subscription: round(imported.importing.dynamoDbPerSubscription, 2),
        stripe_per_subscription: round(imported.importing.stripePerSubscription, 3),
      },
      audit: imported && {
        stripe_subscriptions: imported.audit.stripeSubscriptions,
        subscriptions: imported.audit.subscriptions,
        findings: imported.audit.findings,
        pages: imported.audit.pages,
        seconds: round(imported.audit.seconds, 3),
        ddb_requests: imported.audit.dynamoDbRequests,
        stripe_requests: imported.audit.stripeRequests,
        ddb_per_stripe_subscription: round(imported.audit.dynamoDbPerStripeSubscription, 2),
        stripe_per_stripe_subscription: round(imported.audit.stripePerStripeSubscription, 3),
      },
      audit_scale: auditScale && {
        subscriptions: auditScale.subscriptions,
        stripe_subscriptions: auditScale.stripeSubscriptions,
        seed_seconds: round(auditScale.seedSeconds, 1),
        seconds: round(auditScale.seconds, 1),
        chunks: auditScale.chunks,
        longest_chunk_seconds: round(auditScale.longestChunkSeconds, 3),
        ddb_requests: auditScale.dynamoDbRequests,
        stripe_requests: auditScale.stripeRequests,
        ddb_per_subscription: round(auditScale.dynamoDbPerSubscription, 3),
        stripe_per_subscription: round(auditScale.stripePerSubscription, 4),
        findings: auditScale.findings,
        all_found: auditScale.allFound,
        second_audit: auditScale.secondAudit,
      },
      checks_failed: failures,
    }),
  );
  const written = writeResults(
    figures.markdown({ startedAt, scale: SCALE, parts: [...PARTS], loadAtStart, durationSeconds, failures }),
  );
  progress(`figures written to ${written}`);
  if (failures.length) process.exitCode = 1;
}

main()
  .catch((error: unknown) => {
    if (isStopping()) return;
    process.stderr.write(`bench failed: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => runCleanups());
