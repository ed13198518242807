/**
 * The JSON figures line `npm run bench` prints last on stdout: every figure of the run, keyed in snake case, with
 * units in the keys (`_ms`, `_s`, `_per_s`).
 *
 * @module
 */
import type { AuditFigures, ImportFigures } from './audit.js';
import type { AuditScaleFigures } from './audit-scale.js';
import type { RefusalSeries } from './authentication.js';
import { SCALE } from './config.js';
import type { CallScenarioResult } from './measure-calls.js';
import { round } from './measuring.js';
import { pairedRatioAtRawPrices, ratioWithTransactionsBySize } from './report-calls.js';
import type { BroadcastFigures } from './messages.js';
import type { MetricsFigures } from './metrics.js';
import type { WebhookFigures } from './part-webhooks.js';
import type { RenewalFigures } from './renewals.js';
import type { ReplayResult } from './replay.js';
import {
  getUpdateRoundTripsMs,
  perCall,
  roundTripsMs,
  type RawRequestLatency,
  type WriteCeiling,
} from './store-baseline.js';
import type { ListingFigures, TransitionFigures } from './subscriptions.js';

/** What a run measured (a part not run: empty or null), its duration (s) and the checks that failed. */
interface RunFigures {
  durationSeconds: number;
  calls: CallScenarioResult[];
  refusals: RefusalSeries[];
  raw: RawRequestLatency;
  storeCeiling: WriteCeiling;
  webhooks: WebhookFigures | null;
  transitions: TransitionFigures[];
  listing: ListingFigures | null;
  metrics: MetricsFigures[];
  renewals: RenewalFigures | null;
  replay: ReplayResult | null;
  broadcasts: BroadcastFigures[];
  imported: { importing: ImportFigures; audit: AuditFigures } | null;
  auditScale: AuditScaleFigures | null;
  failures: string[];
}

/** The JSON figures line of `run` (one line, no trailing newline), stamped with the time now and Node's version. */
export function figuresLine(run: RunFigures): string {
  const { durationSeconds, calls, refusals, raw, storeCeiling, transitions, listing, metrics, renewals } = run;
  const { replay, broadcasts, imported, auditScale, failures } = run;
  const drainRows = run.webhooks?.drainRows ?? [];
  const transactionCeiling = run.webhooks?.transactionCeiling ?? null;
  const latency = run.webhooks?.latency ?? null;
  const neighbour = run.webhooks?.neighbour ?? null;
  return JSON.stringify({
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
      ratio_at_raw_prices_transactions_by_size: round(ratioWithTransactionsBySize(result, raw), 2),
      ratio_at_get_update_prices: round(
        result.latency.p50 / getUpdateRoundTripsMs(perCall(result.commandTotals, result.calls), raw),
        2,
      ),
      own_requests_raw_ms: result.ownRequests ? round(result.ownRequests.ms, 3) : null,
      paired_calls_p50_ms: result.ownRequests ? round(result.ownRequests.pairedCallP50, 3) : null,
      ratio_to_own_requests_raw: result.ownRequests ? round(result.latency.p50 / result.ownRequests.ms, 2) : null,
      paired_ratio_at_paired_raw_prices: result.ownRequests
        ? round(pairedRatioAtRawPrices(result, result.ownRequests), 2)
        : null,
      paired_ratio_to_own_requests_raw: result.ownRequests
        ? round(result.ownRequests.pairedCallP50 / result.ownRequests.ms, 2)
        : null,
      own_requests_raw_failures: result.ownRequests?.failures ?? null,
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
      transact_write_items_by_size_p50_ms: Object.fromEntries(
        Object.entries(raw.transactWriteItemsBySize).map(([size, latency]) => [size, round(latency.p50, 3)]),
      ),
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
  });
}
