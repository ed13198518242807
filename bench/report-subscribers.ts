/**
 * The report of part 4 (`subscribers`): one transition's requests, page 1 beside page 100 and the deadline worker's
 * renewals, on stdout and kept for `bench/RESULTS.md`.
 *
 * @module
 */
import { TRANSITION_AIM } from './config.js';
import { round } from './measuring.js';
import { formatTable, out } from './output.js';
import type { RenewalFigures } from './renewals.js';
import { perCall, roundTripsMs, type RawRequestLatency } from './store-baseline.js';
import type { ListingFigures, TransitionFigures } from './subscriptions.js';
import { formatDescribed } from './support.js';

/**
 * Prints 4, 4a and 4b: each transition's latency (ms) and requests (authentication and beyond), then page 1 beside the
 * last page read.
 */
export function printTransitionsAndListing(
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

/** Prints 4c: the deadline worker's renewals per second beside the write ceiling, and requests per renewal. */
export function printRenewals(renewals: RenewalFigures): void {
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
