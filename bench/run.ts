/**
 * `npm run bench` (DESIGN §6: benchmarks are separate from tests and print figures). Starts its own
 * DynamoDB Local on a free port, the local service in-process (port 0, unique tables) and an HTTPS
 * receiver, then runs:
 *   1. DynamoDB requests per call and latency: `GET /v1/teams/current`, `POST /v1/projects`, MCP
 *      `tools/call list_projects` (1,000 sequential calls each after 50 warm-up calls); then refused
 *      authentication, an unknown token id beside a wrong secret on both surfaces (issue 12 #10);
 *   2. webhook delivery throughput for 1 and 50 endpoints, beside a direct-send ceiling;
 *   3. replay-dead of 10,000 dead deliveries.
 * Prints readable tables on stdout, progress on stderr, and one JSON line last. Everything it started
 * is stopped at the end, on error and on Ctrl-C. Exits 1 when a check fails (an error during
 * measurement, a lost delivery, a replay count that does not match).
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { createCertificateAuthority } from '../bin/certificates.js';
import { startLocalService, type LocalService } from '../shared/local/service.js';
import { keys } from '../shared/store/keys.js';
import { startDynamoDbLocal } from '../shared/store/dynamodb-local.js';
import { measureRefusals, type RefusalSeries } from './authentication.js';
import { measureReplay, type ReplayResult } from './replay.js';
import { runRequestBenchmarks, type CallScenarioResult } from './requests.js';
import { attachRequestCounter, formatTable, freePort, installSignalHandlers, isStopping, onCleanup, round, runAsBackground, runCleanups, type RequestCounter } from './support.js';
import { createDeliveryLog, measureCeiling, measurePipeline, startReceiver, type CeilingResult, type PipelineResult } from './webhooks.js';

const WARMUP_CALLS = 50;
const MEASURED_CALLS = 1_000;
/** Calls per kind of refused token and surface (4 series; fewer than MEASURED_CALLS to keep the run short). */
const REFUSAL_CALLS = 500;
const CONCURRENCY = 32;
const REPLAY_DELIVERIES = 10_000;
const REPLAY_SINCE_HOURS = 24;

const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/**
 * Labels the local service's own background reads: the sweeper's pending-deliveries query, its outbox
 * relay query and the deadline worker's shard queries (the relay woken after a commit is labelled
 * through its async context instead).
 */
function classifyServiceBackground(commandName: string, input: unknown): string | null {
  if (commandName !== 'QueryCommand' || !input || typeof input !== 'object') return null;
  const query = input as { IndexName?: string; ExpressionAttributeValues?: Record<string, unknown> };
  if (query.IndexName !== 'gsi1') return null;
  const values = query.ExpressionAttributeValues ?? {};
  if (typeof values[':index'] === 'string' && values[':index'].startsWith(keys.pendingDeliveriesIndex(0).slice(0, -2))) return 'sweeper';
  if (typeof values[':outbox'] === 'string' && values[':outbox'].startsWith(keys.outboxIndex(0).slice(0, -2))) return 'sweeper outbox relay';
  if (typeof values[':pk'] === 'string' && values[':pk'].startsWith(keys.deadlineIndex(0).slice(0, -2))) return 'deadline worker';
  return null;
}

/**
 * Counts every DynamoDB request of the service through its document client's middleware stack (the
 * same stack as its DynamoDB client), and runs the local outbox relay (woken after each commit; on AWS
 * the stream-driven fan-out Lambda) as labelled background work, so it is not charged to the call.
 */
function instrumentService(service: LocalService): RequestCounter {
  const counter = attachRequestCounter(service.store.document.middlewareStack, classifyServiceBackground);
  const wake = service.runtime.eventsCommitted;
  service.runtime.eventsCommitted = (events) => runAsBackground('outbox relay, fan-out and dispatch', () => wake(events));
  return counter;
}

function printRequests(results: CallScenarioResult[]): void {
  console.log(`\n1. DynamoDB requests per call and latency (${MEASURED_CALLS} sequential calls after ${WARMUP_CALLS} warm-up calls each)\n`);
  console.log(
    formatTable(
      ['call', 'p50 ms', 'p99 ms', 'calls/s', 'DDB req/call min', 'max', 'aim', 'errors'],
      results.map((result) => [
        result.name,
        round(result.latency.p50),
        round(result.latency.p99),
        round(result.throughputPerSecond, 1),
        result.requestsPerCall.min,
        result.requestsPerCall.max,
        result.aim ? `≤ ${result.aim.maxRequests} ${result.aim.met ? 'met' : 'NOT MET'}` : '-',
        result.errors,
      ]),
    ),
  );
  console.log('');
  for (const result of results) {
    const mixes = Object.entries(result.commandMixes)
      .sort((a, b) => b[1] - a[1])
      .map(([mix, count]) => `${mix} (${count})`)
      .join('; ');
    console.log(`   ${result.name}: ${mixes}; attempts/call ${result.attemptsPerCall.min}–${result.attemptsPerCall.max}; tokens ${result.tokens}`);
    if (result.backgroundPerCall > 0) {
      const labels = Object.entries(result.background).map(([label, count]) => `${label} ${count}`).join(', ');
      console.log(`      + background ${round(result.backgroundPerCall, 2)} DDB req/call (${labels})`);
    }
    if (result.errorSamples.length) console.log(`      errors: ${result.errorSamples.join(' | ')}`);
  }
}

function printRefusals(series: RefusalSeries[]): void {
  console.log(`\n1b. Refused authentication: an unknown token id beside a wrong secret (${REFUSAL_CALLS} calls each after ${WARMUP_CALLS} warm-up calls, alternating; the same work on both paths)\n`);
  console.log(
    formatTable(
      ['surface', 'token', 'p50 ms', 'p99 ms', 'DDB req/call typical', 'min', 'max', 'not 401'],
      series.map((entry) => [entry.surface, entry.kind, round(entry.latency.p50, 3), round(entry.latency.p99, 3), entry.requestsPerCall.typical, entry.requestsPerCall.min, entry.requestsPerCall.max, entry.unexpected]),
    ),
  );
  for (const entry of series) if (entry.unexpectedSamples.length) console.log(`   ${entry.surface}, ${entry.kind}: ${entry.unexpectedSamples.join(' | ')}`);
}

interface WebhookRow {
  pipeline: PipelineResult;
  ceiling: CeilingResult;
}

function printWebhooks(rows: WebhookRow[]): void {
  console.log(`\n2. Webhook delivery throughput (local pipeline, dispatcher concurrency ${CONCURRENCY}; ceiling = direct signed POSTs, same transport, concurrency ${CONCURRENCY})\n`);
  console.log(
    formatTable(
      ['endpoints', 'projects', 'deliveries', 'pipeline s', 'deliveries/s', 'ceiling s', 'ceiling/s', 'pipeline/ceiling', 'DDB req/delivery'],
      rows.map(({ pipeline, ceiling }) => [
        pipeline.endpoints,
        pipeline.projects,
        pipeline.deliveries,
        round(pipeline.seconds, 3),
        round(pipeline.deliveriesPerSecond, 1),
        round(ceiling.seconds, 3),
        round(ceiling.sendsPerSecond, 1),
        `${round((pipeline.deliveriesPerSecond / ceiling.sendsPerSecond) * 100, 1)} %`,
        round(pipeline.dynamoDbRequestsPerDelivery, 2),
      ]),
    ),
  );
  console.log('');
  for (const { pipeline, ceiling } of rows) {
    const outcomes = Object.entries(pipeline.outcomes).map(([outcome, count]) => `${outcome} ${count}`).join(', ');
    console.log(
      `   ${pipeline.endpoints} endpoint(s): projects created in ${round(pipeline.createSeconds, 3)} s; outcomes: ${outcomes || 'none'}; unsigned ${pipeline.unsigned}; ceiling failures ${ceiling.failures}` +
        (pipeline.errors.length ? `; errors: ${pipeline.errors.join(' | ')}` : ''),
    );
  }
}

function printReplay(result: ReplayResult): void {
  console.log(`\n3. replay-dead of ${result.seeded.toLocaleString('en-US')} dead deliveries (since_hours ${result.sinceHours})\n`);
  const byCommand = Object.entries(result.byCommand).map(([name, count]) => `${name.replace(/Command$/, '')} ${count}`).join(', ');
  console.log(
    formatTable(
      ['figure', 'value'],
      [
        ['seconds to the 202 (job, matched counted; aim < 1 s)', String(round(result.secondsTo202, 3))],
        ['seconds until the job replayed everything (aim < 60 s)', String(round(result.seconds, 2))],
        ['matched', String(result.matched)],
        ['deliveries replayed per second', String(round(result.replayed / result.seconds, 1))],
        ['DynamoDB requests', `${result.dynamoDbRequests} (${byCommand}); HTTP attempts ${result.dynamoDbAttempts}`],
        ['returned count', `${result.replayed} ${result.replayed === result.seeded ? '= seeded' : '≠ seeded'}`],
        ['queue messages', `${result.queueMessages} in ${result.queueSends} send calls, ${result.distinctQueuedDeliveries} distinct deliveries ${result.queueMessages === result.seeded ? '= seeded' : '≠ seeded'}`],
        ['after: dead-letter copies left', String(result.deadLetterLeft)],
        ['after: rows pending, attempts 0', String(result.pendingAfter)],
        ['seeding (BatchWriteItem, not measured)', `${round(result.seedSeconds, 2)} s`],
      ],
    ),
  );
}

async function main(): Promise<void> {
  installSignalHandlers();
  const started = performance.now();
  const failures: string[] = [];

  const dynamoDbPort = await freePort();
  progress(`starting DynamoDB Local on 127.0.0.1:${dynamoDbPort}`);
  const dynamoDb = await startDynamoDbLocal({ port: dynamoDbPort });
  onCleanup('DynamoDB Local', () => dynamoDb.stop());

  progress('creating a test CA and the HTTPS receiver');
  const ca = await createCertificateAuthority({ commonName: 'membership-bench CA' });
  const receiver = await startReceiver(ca);
  onCleanup('receiver', () => receiver.close());

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
    extraCaPem: [ca.certPem],
    allowPrivateTargets: true,
    log: deliveryLog.log,
  });
  let serviceStop: Promise<void> | null = null;
  const stopService = () => (serviceStop ??= service.stop());
  onCleanup('local service', stopService);
  const counter = instrumentService(service);

  // 1. Requests per call and latency.
  const calls = await runRequestBenchmarks({ service, counter, warmup: WARMUP_CALLS, calls: MEASURED_CALLS, progress });
  for (const result of calls) {
    if (result.errors) failures.push(`${result.name}: ${result.errors} non-2xx answers`);
    if (result.aim && !result.aim.met) failures.push(`${result.name}: ${result.requestsPerCall.max} DynamoDB requests per call, aim ≤ ${result.aim.maxRequests}`);
  }
  printRequests(calls);

  // 1b. Refused authentication: unknown token id vs wrong secret.
  const refusals = await measureRefusals({ service, counter, existingToken: service.demoToken, warmup: WARMUP_CALLS, calls: REFUSAL_CALLS, progress });
  for (const entry of refusals) if (entry.unexpected) failures.push(`${entry.surface}, ${entry.kind}: ${entry.unexpected} answers other than 401`);
  for (const surface of new Set(refusals.map((entry) => entry.surface))) {
    const [unknown, wrong] = refusals.filter((entry) => entry.surface === surface);
    if (unknown && wrong && unknown.requestsPerCall.typical !== wrong.requestsPerCall.typical) {
      failures.push(`${surface}: an unknown token id typically costs ${unknown.requestsPerCall.typical} DynamoDB requests, a wrong secret ${wrong.requestsPerCall.typical}`);
    }
  }
  printRefusals(refusals);

  // 2. Webhook throughput: 1 endpoint × 200 projects, 50 endpoints × 20 projects.
  const webhookRows: WebhookRow[] = [];
  for (const { endpoints, projects } of [
    { endpoints: 1, projects: 200 },
    { endpoints: 50, projects: 20 },
  ]) {
    const pipeline = await measurePipeline({ service, receiver, deliveryLog, counter, endpoints, projects, progress });
    progress(`ceiling: ${pipeline.deliveries} direct signed POSTs, concurrency ${CONCURRENCY}`);
    const urls = Array.from({ length: endpoints }, (_, index) => receiver.url(`/hooks/${endpoints}/${index + 1}`));
    const ceiling = await measureCeiling({ receiver, caPem: ca.certPem, urls, count: pipeline.deliveries, concurrency: CONCURRENCY });
    webhookRows.push({ pipeline, ceiling });
    if ((pipeline.outcomes.succeeded ?? 0) !== pipeline.deliveries) failures.push(`webhooks ×${endpoints}: ${pipeline.outcomes.succeeded ?? 0} of ${pipeline.deliveries} deliveries succeeded`);
    if (pipeline.unsigned) failures.push(`webhooks ×${endpoints}: ${pipeline.unsigned} unsigned deliveries`);
    if (ceiling.failures) failures.push(`ceiling ×${endpoints}: ${ceiling.failures} failed sends`);
  }
  printWebhooks(webhookRows);

  // The service is no longer needed; stop it before the replay so its sweeper does not compete.
  await stopService();

  // 3. replay-dead of 10,000 dead deliveries.
  const replay = await measureReplay({ endpoint: dynamoDb.endpoint, deliveries: REPLAY_DELIVERIES, sinceHours: REPLAY_SINCE_HOURS, progress });
  if (replay.replayed !== REPLAY_DELIVERIES) failures.push(`replay-dead returned ${replay.replayed}, expected ${REPLAY_DELIVERIES}`);
  if (replay.queueMessages !== REPLAY_DELIVERIES || replay.distinctQueuedDeliveries !== REPLAY_DELIVERIES) failures.push(`replay-dead queued ${replay.queueMessages} messages (${replay.distinctQueuedDeliveries} distinct), expected ${REPLAY_DELIVERIES}`);
  if (replay.deadLetterLeft !== 0) failures.push(`replay-dead left ${replay.deadLetterLeft} dead-letter copies`);
  if (replay.pendingAfter !== REPLAY_DELIVERIES) failures.push(`replay-dead: ${replay.pendingAfter} rows pending afterwards, expected ${REPLAY_DELIVERIES}`);
  printReplay(replay);

  const durationSeconds = (performance.now() - started) / 1000;
  console.log(`\nchecks: ${failures.length ? `FAILED\n${failures.map((failure) => `  - ${failure}`).join('\n')}` : 'all passed'}; total ${round(durationSeconds, 1)} s\n`);
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
      webhooks: webhookRows.map(({ pipeline, ceiling }) => ({
        endpoints: pipeline.endpoints,
        projects: pipeline.projects,
        deliveries: pipeline.deliveries,
        pipeline_s: round(pipeline.seconds, 3),
        deliveries_per_s: round(pipeline.deliveriesPerSecond, 1),
        ceiling_s: round(ceiling.seconds, 3),
        ceiling_per_s: round(ceiling.sendsPerSecond, 1),
        ratio: round(pipeline.deliveriesPerSecond / ceiling.sendsPerSecond, 3),
        ddb_requests_per_delivery: round(pipeline.dynamoDbRequestsPerDelivery, 2),
        outcomes: pipeline.outcomes,
      })),
      replay_dead: {
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
      checks_failed: failures,
    }),
  );
  if (failures.length) process.exitCode = 1;
}

main()
  .catch((error: unknown) => {
    if (isStopping()) return;
    process.stderr.write(`bench failed: ${(error as Error)?.stack ?? String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => runCleanups());
