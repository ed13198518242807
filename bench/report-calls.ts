/**
 * The report of part 1 (`calls`) and the store's own figures (1c): tables on stdout, kept for `bench/RESULTS.md`.
 *
 * @module
 */
import type { HookRefusalSeries } from './hook-refusals.js';
import type { RefusalSeries } from './authentication.js';
import { MEASURED_CALLS, REFUSAL_CALLS, WARMUP_CALLS } from './config.js';
import type { CallScenarioResult } from './measure-calls.js';
import type { PairedOwnRequests } from './own-requests.js';
import { round } from './measuring.js';
import { formatTable, out } from './output.js';
import {
  getUpdateRoundTripsMs,
  perCall,
  priceOfRequest,
  roundTripsBySizeMs,
  roundTripsMs,
  type RawRequestLatency,
  type WriteCeiling,
} from './store-baseline.js';

/** A call's p50 ÷ its round trips at the raw p50s of `raw`, each transaction priced at its own size. */
export function ratioWithTransactionsBySize(result: CallScenarioResult, raw: RawRequestLatency): number {
  return (
    result.latency.p50 /
    roundTripsBySizeMs(
      perCall(result.commandTotals, result.calls),
      perCall(result.transactionTotals, result.calls),
      raw,
    )
  );
}

/**
 * A call's paired p50 ÷ its round trips priced at the raw requests timed in the same rounds (each transaction at its
 * own size): the overhead ratio with the calls and the raw prices meeting the same moments of the machine.
 */
export function pairedRatioAtRawPrices(result: CallScenarioResult, own: PairedOwnRequests): number {
  return (
    own.pairedCallP50 /
    roundTripsBySizeMs(
      perCall(result.commandTotals, result.calls),
      perCall(result.transactionTotals, result.calls),
      own.pairedRawPrices,
    )
  );
}

/** Prints 1: each call scenario's latency (ms), DynamoDB time and requests per call, with where they go. */
export function printRequests(results: CallScenarioResult[]): void {
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

/** Prints 1b: refused authentication, an unknown token id beside a wrong secret, per surface (ms, requests). */
export function printRefusals(series: RefusalSeries[]): void {
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
export function printHookRefusals(series: HookRefusalSeries[]): void {
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
 * Prints 1c: the raw requests' latency (ms), the write ceiling (requests/s) and each call's p50 beside its round trips
 * priced at the raw p50s.
 */
export function printBaseline(raw: RawRequestLatency, ceiling: WriteCeiling, calls: CallScenarioResult[]): void {
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
          ...Object.entries(raw.transactWriteItemsBySize).map(
            ([size, latency]) => [`TransactWriteItems (${size} conditional updates)`, latency] as const,
          ),
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
        'p50 ÷ round trips at raw p50, transactions by size',
        'p50 ÷ round trips at GetItem/UpdateItem p50',
        'own requests sent raw, ms',
        'p50 ÷ own requests sent raw',
        'paired calls p50 ms',
        'paired p50 ÷ own requests sent raw',
        'paired p50 ÷ round trips at paired raw p50, transactions by size',
      ],
      calls.map((result) => {
        const requests = perCall(result.commandTotals, result.calls);
        const trips = roundTripsMs(requests, raw);
        const own = result.ownRequests;
        return [
          result.name,
          round(result.latency.p50, 2),
          round(result.requestsPerCall.mean, 2),
          round(trips, 2),
          round(result.latency.p50 / trips, 2),
          round(ratioWithTransactionsBySize(result, raw), 2),
          round(result.latency.p50 / getUpdateRoundTripsMs(requests, raw), 2),
          own ? `${round(own.ms, 2)}${own.failures ? ` (${own.failures} failed)` : ''}` : '-',
          own ? round(result.latency.p50 / own.ms, 2) : '-',
          own ? round(own.pairedCallP50, 2) : '-',
          own ? round(own.pairedCallP50 / own.ms, 2) : '-',
          own ? round(pairedRatioAtRawPrices(result, own), 2) : '-',
        ];
      }),
    ),
  );
  out(
    "\n   own requests sent raw = one more call's DynamoDB requests, captured and sent again alone, back to back, each on\n" +
      '   the items as they were before the call (put back between rounds), summed p50s (bench/own-requests.ts); each\n' +
      '   round is followed by one more call, whose p50 is the paired calls p50, and one raw request of each kind (the\n' +
      '   paired raw p50s): all meet the same moments of the machine\n',
  );
  out('\n   each own request sent raw beside the paired raw request of its kind (p50 ms):\n');
  for (const result of calls) {
    const own = result.ownRequests;
    if (!own) continue;
    const requests = own.byRequest.map(({ command, items, p50 }) => {
      const kind = command.replace(/Command$/, '');
      const price = priceOfRequest(kind, items, own.pairedRawPrices);
      return `${kind}${items ? ` (${items} items)` : ''} ${round(p50, 2)} / ${round(price, 2)}`;
    });
    out(`   ${result.name}: ${requests.join(', ')}\n`);
  }
}
