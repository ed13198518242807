/**
 * The report of part 2 (`webhooks`): the drain beside the HTTPS, store and transaction ceilings, commit → first
 * attempt and the noisy neighbour, on stdout and kept for `bench/RESULTS.md`.
 *
 * @module
 */
import { CONCURRENCY, DELIVERY_AIM } from './config.js';
import type { CeilingResult, DrainResult } from './drain.js';
import { round } from './measuring.js';
import { formatTable, out } from './output.js';
import type { WriteCeiling } from './store-baseline.js';
import { formatDescribed } from './support.js';
import type { NoisyNeighbourResult, PipelineResult } from './webhook-latency.js';

/** One drain beside the HTTPS ceiling of as many sends to as many endpoints. */
export interface DrainRow {
  drain: DrainResult;
  https: CeilingResult;
}

/** Prints 2, 2b and 2c: the drains (deliveries/s beside the ceilings), commit → first attempt (ms), the neighbour. */
export function printWebhooks(
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
