import type { Counters, MetricsDelta } from '../domain/metrics/decisions.js';
import { parseStoredMetricsItem } from '../domain/metrics/record.js';
import { entity, keys, sortKeyPrefix } from './keys.js';
import type { Key } from './requests.js';
import type { Store } from './store.js';
import type { Transaction } from './unit-of-work.js';

/**
 * The store of metrics (DESIGN D14): per scope (a project, or the whole team) one partition of gauges items and
 * day items, each sharded so that concurrent transactions of one busy project rarely update the same item; deltas
 * are added with `ADD` in the transaction of the change itself, unconditionally (the counted item's own write
 * carries the conditions).
 */

/** Shards per scope. */
const METRICS_SHARDS = 4;
/** How long a day item is kept after its day (TTL housekeeping; reads cover 90 days). */
const DAY_RETENTION_SECONDS = 400 * 86_400;

/** The shard of a subscription's changes and its payments': from its id's last hexadecimal digit. */
const shardOf = (subscriptionId: string) => Number.parseInt(subscriptionId.slice(-1), 16) % METRICS_SHARDS || 0;

/** Adds `counters` to one item with `ADD` (creating it), setting `fixed` attributes. */
function addCounters(
  tx: Transaction,
  key: { pk: string; sk: string },
  counters: Counters,
  fixed: Record<string, unknown>,
): void {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const sets = Object.entries(fixed).map(([name, value], index) => {
    names[`#f${index}`] = name;
    values[`:f${index}`] = value;
    return `#f${index} = :f${index}`;
  });
  const additions = Object.entries(counters).map(([name, value], index) => {
    names[`#c${index}`] = name;
    values[`:c${index}`] = value;
    return `#c${index} :c${index}`;
  });
  tx.update(key, { expression: `SET ${sets.join(', ')} ADD ${additions.join(', ')}`, names, values });
}

/**
 * Adds a change's deltas to the project's and the team's items of the subscription's shard (`kind` keeps a
 * payment's and its subscription's day items apart).
 */
export function addMetricsDelta(
  tx: Transaction,
  teamId: string,
  projectId: string,
  subscriptionId: string,
  delta: MetricsDelta,
  kind: 'S' | 'P',
): void {
  const shard = shardOf(subscriptionId);
  const expiresAt = Math.floor(Date.parse(`${delta.date}T00:00:00Z`) / 1000) + DAY_RETENTION_SECONDS;
  for (const scope of [projectId, null]) {
    const pk = keys.metricsPartition(teamId, scope);
    if (Object.keys(delta.gauges).length)
      addCounters(tx, { pk, sk: keys.metricsGaugesSortKey(shard) }, delta.gauges, {
        entity: entity.metricsGauges,
        team_id: teamId,
      });
    if (Object.keys(delta.day).length) {
      addCounters(tx, { pk, sk: keys.metricsDaySortKey(delta.date, shard, kind) }, delta.day, {
        entity: entity.metricsDay,
        team_id: teamId,
        date: delta.date,
        expires_at: expiresAt,
      });
    }
  }
}

/** One counted item of a scope: a gauges item (`date` undefined) or a day item of `date` (YYYY-MM-DD). */
export interface MetricsItem {
  gauges: boolean;
  date?: string;
  counters: Counters;
}

/**
 * Every gauges item of a scope (`projectId`, or null for the whole team) and its day items from `fromDay`
 * (YYYY-MM-DD) on, every shard: one paged Query of its partition.
 */
export async function readMetricsItems(
  store: Store,
  teamId: string,
  projectId: string | null,
  fromDay: string,
): Promise<MetricsItem[]> {
  const found: MetricsItem[] = [];
  let start: Key | undefined;
  do {
    const page = await store.query({
      KeyConditionExpression: 'pk = :pk AND sk >= :from',
      ExpressionAttributeValues: {
        ':pk': keys.metricsPartition(teamId, projectId),
        ':from': `${sortKeyPrefix.metricsDay}${fromDay}`,
      },
      ExclusiveStartKey: start,
    });
    for (const { sk, date, counters } of page.items.map(parseStoredMetricsItem)) {
      if (sk.startsWith(sortKeyPrefix.metricsGauges)) found.push({ gauges: true, counters });
      else if (sk.startsWith(sortKeyPrefix.metricsDay)) found.push({ gauges: false, date, counters });
    }
    start = page.lastEvaluatedKey;
  } while (start);
  return found;
}
