/**
 * The parts of `npm run bench` that measure jobs and reads at size, each checked and printed: replay-dead (3, part
 * `replay`, in a fresh DynamoDB Local), `GET /v1/metrics` (5, `metrics`), broadcasts (6, `messages`), the Stripe import
 * and an access audit (7, `import` and `audit`) and the access audit at size (7b, `audit-scale`).
 *
 * @module
 */
import type { LocalService } from '../shared/local/service.js';
import type { Store } from '../shared/store/store.js';
import { measureImportAndAudit, type AuditFigures, type ImportFigures } from './audit.js';
import { measureAuditAtScale, type AuditScaleFigures } from './audit-scale.js';
import { CONCURRENCY, MEASURED_CALLS, REPLAY_DELIVERIES, REPLAY_SINCE_HOURS, SIZE } from './config.js';
import { withFreshDynamoDb } from './lifecycle.js';
import { round } from './measuring.js';
import { measureBroadcast, type BroadcastFigures } from './messages.js';
import { measureMetrics, type MetricsFigures } from './metrics.js';
import { progress } from './output.js';
import { measureReplay, type ReplayResult } from './replay.js';
import { printAuditAtScale, printBroadcasts, printImportAndAudit, printMetrics, printReplay } from './report-jobs.js';
import type { RequestCounter } from './support.js';

/** 3. replay-dead of dead deliveries in a fresh DynamoDB Local; pushes each failed check onto `failures`. */
export async function runReplay(failures: string[]): Promise<ReplayResult> {
  const replay = await withFreshDynamoDb('replay', (endpoint) =>
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
  return replay;
}

/**
 * 5. `GET /v1/metrics` of a team with few and with many subscribers on the instrumented `service` (the same requests
 * expected); pushes each failed check onto `failures`.
 */
export async function runMetrics(
  { service, counter }: { service: LocalService; counter: RequestCounter },
  failures: string[],
): Promise<MetricsFigures[]> {
  const metrics = await measureMetrics({ service, counter, sizes: SIZE.metricsSizes, calls: MEASURED_CALLS, progress });
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
  return metrics;
}

/**
 * 6. A broadcast by e-mail and one by Telegram DM through the queue and the message worker on `store` (messages/s);
 * pushes each failed check onto `failures`.
 */
export async function runBroadcasts(store: Store, failures: string[]): Promise<BroadcastFigures[]> {
  const broadcasts: BroadcastFigures[] = [];
  for (const channel of ['email', 'telegram'] as const) {
    const broadcast = await measureBroadcast({
      store,
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
  return broadcasts;
}

/**
 * 7. The Stripe import (subscriptions/s) of `BENCH_IMPORT_CUSTOMERS` customers into `store`, then an access audit of
 * them; pushes each failed check onto `failures`.
 */
export async function runImportAndAudit(
  store: Store,
  failures: string[],
): Promise<{ importing: ImportFigures; audit: AuditFigures }> {
  const customers = Number(process.env.BENCH_IMPORT_CUSTOMERS ?? SIZE.importCustomers);
  const imported = await measureImportAndAudit({ store, customers, progress });
  if (imported.audit.findings !== 2)
    failures.push(`access audit: ${imported.audit.findings} findings, expected the 2 drifts made`);
  printImportAndAudit(imported.importing, imported.audit);
  return imported;
}

/**
 * 7b. An access audit at size (`BENCH_AUDIT_SUBSCRIPTIONS` subscriptions in `store`); pushes each failed check onto
 * `failures`.
 */
export async function runAuditAtScale(store: Store, failures: string[]): Promise<AuditScaleFigures> {
  const subscriptions = Number(process.env.BENCH_AUDIT_SUBSCRIPTIONS ?? SIZE.auditSubscriptions);
  const auditScale = await measureAuditAtScale({ store, subscriptions, progress });
  if (!auditScale.allFound)
    failures.push(`access audit at size: findings ${JSON.stringify(auditScale.findings)}, expected the planted drifts`);
  if (!auditScale.secondAudit.startsWith('CONFLICT'))
    failures.push(`access audit at size: a second audit while one ran was ${auditScale.secondAudit}`);
  if (auditScale.longestChunkShare > 1 / 3)
    failures.push(`access audit at size: a chunk took ${round(auditScale.longestChunkSeconds, 1)} s`);
  printAuditAtScale(auditScale);
  return auditScale;
}
