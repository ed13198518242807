/**
 * Part 4 (`subscribers`) of `npm run bench`: one subscription transition's requests and page 1 beside page 100
 * through the service (4a, 4b), then the deadline worker's renewals in fresh tables (4c), each checked and printed.
 *
 * @module
 */
import type { LocalService } from '../shared/local/service.js';
import { CONCURRENCY, LISTING_PAGES, SIZE, TRANSITION_AIM } from './config.js';
import { withFreshDynamoDb } from './lifecycle.js';
import { progress } from './output.js';
import { measureRenewals, type RenewalFigures } from './renewals.js';
import { printRenewals, printTransitionsAndListing } from './report-subscribers.js';
import type { RawRequestLatency } from './store-baseline.js';
import { measureListing, measureTransitions, type ListingFigures, type TransitionFigures } from './subscriptions.js';
import type { RequestCounter } from './support.js';

/**
 * 4a, 4b on the instrumented `service`, printed beside round trips priced at `raw` (ms); pushes each failed check onto
 * `failures`.
 */
export async function runTransitionsAndListing(
  { service, counter }: { service: LocalService; counter: RequestCounter },
  raw: RawRequestLatency,
  failures: string[],
): Promise<{ transitions: TransitionFigures[]; listing: ListingFigures }> {
  const transitions = await measureTransitions({ service, counter, count: SIZE.transitions, progress });
  for (const entry of transitions) {
    if (entry.errors.length) failures.push(`${entry.name}: ${entry.errors.length} non-200 answers`);
    if (entry.beyondAuthentication.max > TRANSITION_AIM)
      failures.push(
        `${entry.name}: ${entry.beyondAuthentication.max} DynamoDB requests beyond authentication, aim ≤ ${TRANSITION_AIM}`,
      );
  }
  const listing = await measureListing({
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
  return { transitions, listing };
}

/** 4c in a fresh DynamoDB Local: the deadline worker applying due renewals; pushes failed checks onto `failures`. */
export async function runRenewals(failures: string[]): Promise<RenewalFigures> {
  const renewals = await withFreshDynamoDb('renewals', (endpoint) =>
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
  return renewals;
}
