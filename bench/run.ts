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
 * Sizes and parts are read in `config.ts`; each part runs, checks and prints from a `part-*.ts` module, its tables
 * are in `report-*.ts` and the JSON line in `figures-line.ts`.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createCertificateAuthority } from '../bin/certificates.js';
import { startLocalService } from '../shared/local/service.js';
import { extraCaFromEnvironment } from '../shared/domain/webhook-deliveries/transport/trust.js';
import { startDynamoDbLocal } from '../shared/store/dynamodb-local.js';
import { startFakeStripeApi } from '../test/support/stripe-api.js';
import { PARTS, SCALE } from './config.js';
import { figuresLine } from './figures-line.js';
import { instrumentService } from './instrumentation.js';
import { freePort } from '../test/support/ports.js';
import { installSignalHandlers, isStopping, onCleanup, runCleanups } from './lifecycle.js';
import { round } from './measuring.js';
import { figures, progress } from './output.js';
import { runCalls, runStoreFigures } from './part-calls.js';
import { runAuditAtScale, runBroadcasts, runImportAndAudit, runMetrics, runReplay } from './part-jobs.js';
import { runRenewals, runTransitionsAndListing } from './part-subscribers.js';
import { runWebhooks } from './part-webhooks.js';
import { createDeliveryLog, startReceiver } from './receiver.js';
import { currentLoad, writeResults } from './results.js';

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

  // 1. Requests per call and latency; then 1c, the store's own figures (each raw request kind's p50 and the write
  // ceiling), which every run measures.
  const { calls, refusals } = PARTS.has('calls')
    ? await runCalls({ service, counter, pipeline, stripeApi }, failures)
    : { calls: [], refusals: [] };
  const { raw, storeCeiling } = await runStoreFigures(service.store, calls);

  // 4a, 4b. Subscriber side through the service: transitions, page 1 vs page 100.
  const subscribers = PARTS.has('subscribers')
    ? await runTransitionsAndListing({ service, counter }, raw, failures)
    : null;

  // 5. GET /v1/metrics with few and many subscribers: the same requests.
  const metrics = PARTS.has('metrics') ? await runMetrics({ service, counter }, failures) : [];

  // 6. A broadcast: messages per second through the queue and the message worker, by e-mail and by Telegram DM.
  const broadcasts = PARTS.has('messages') ? await runBroadcasts(service.store, failures) : [];

  // 7. The Stripe import (subscriptions per second) and an access audit (requests per audited subscription).
  const imported = PARTS.has('import') || PARTS.has('audit') ? await runImportAndAudit(service.store, failures) : null;
  const auditScale = PARTS.has('audit-scale') ? await runAuditAtScale(service.store, failures) : null;

  // 2. Webhook drain over 1, 10 and 100 endpoints, each beside the raw HTTPS ceiling.
  const webhooks = PARTS.has('webhooks')
    ? await runWebhooks({ service, receiver, deliveryLog, counter, ca }, storeCeiling, failures)
    : null;

  // The service is no longer needed; stop it before the replay so its sweeper does not compete.
  await stopService();

  // DynamoDB Local slows down markedly once it holds the service run's data (seen: GetItem from ~1 ms to
  // hundreds of ms), so the parts on fresh tables each get a fresh DynamoDB Local of their own.
  await stopDynamoDb();

  // 3. replay-dead of 10,000 dead deliveries.
  const replay = PARTS.has('replay') ? await runReplay(failures) : null;

  // 4c. The deadline worker applying due renewals, in fresh tables, beside the write ceiling there.
  const renewals = subscribers ? await runRenewals(failures) : null;

  const durationSeconds = (performance.now() - started) / 1000;
  console.log(
    `\nchecks: ${failures.length ? `FAILED\n${failures.map((failure) => `  - ${failure}`).join('\n')}` : 'all passed'}; total ${round(durationSeconds, 1)} s\n`,
  );
  console.log(
    figuresLine({
      durationSeconds,
      calls,
      refusals,
      raw,
      storeCeiling,
      webhooks,
      transitions: subscribers?.transitions ?? [],
      listing: subscribers?.listing ?? null,
      metrics,
      renewals,
      replay,
      broadcasts,
      imported,
      auditScale,
      failures,
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
