/**
 * The reports of the parts that measure jobs and reads at size: replay-dead (3), `GET /v1/metrics` (5), broadcasts (6),
 * the Stripe import and access audits (7, 7b); on stdout and kept for `bench/RESULTS.md`.
 *
 * @module
 */
import type { AuditFigures, ImportFigures } from './audit.js';
import { WORKER_TIMEOUT_SECONDS, type AuditScaleFigures } from './audit-scale.js';
import { MEASURED_CALLS } from './config.js';
import { round } from './measuring.js';
import type { BroadcastFigures } from './messages.js';
import type { MetricsFigures } from './metrics.js';
import { formatTable, out } from './output.js';
import type { ReplayResult } from './replay.js';
import { formatDescribed } from './support.js';

/** Prints 3: replay-dead's seconds to the 202 and to the end, its requests and what it queued. */
export function printReplay(result: ReplayResult): void {
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

/** Prints 5: `GET /v1/metrics` per team size, latency (ms) and requests per call. */
export function printMetrics(metrics: MetricsFigures[]): void {
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

/** Prints 6: each broadcast's messages per second and its counts, per channel. */
export function printBroadcasts(broadcasts: readonly BroadcastFigures[]): void {
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

/** Prints 7: the Stripe import (subscriptions/s) and the access audit (requests per audited Stripe subscription). */
export function printImportAndAudit(importing: ImportFigures, audit: AuditFigures): void {
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

/** Prints 7b: the access audit at size, its chunks (s) against the worker's timeout, phases and findings. */
export function printAuditAtScale(audit: AuditScaleFigures): void {
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
