import { entity, keys } from '../../store/keys.js';
import type { Transaction } from '../../store/unit-of-work.js';
import type { Payment } from '../payments/schema.js';
import type { Plan } from '../plans/schema.js';
import type { Subscription } from '../subscriptions/schema.js';
import {
  paymentMetricsChange,
  priceOf,
  subscriptionMetricsChange,
  type Counters,
  type MetricsDelta,
} from './decisions.js';

/**
 * The metrics writes (DESIGN D14): a change's deltas ({@link subscriptionMetricsChange},
 * {@link paymentMetricsChange}) added with `ADD` to the project's and the team's items of the
 * subscription's shard, in the transaction of the change itself. Unconditional: the counted item's own
 * write carries the conditions, so the counters move exactly when the change commits.
 */

/** Shards per scope: concurrent transactions of one busy project rarely update the same item. */
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

/** Adds a change's deltas to the project's and the team's items (`kind` keeps a payment's and its subscription's day items apart). */
function writeDelta(
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

/** Adds to `tx` the metrics of a subscription's change (`before` null: created), each side counted at its plan's price version. */
export function writeSubscriptionMetrics(
  tx: Transaction,
  teamId: string,
  before: { subscription: Subscription; plan: Plan } | null,
  after: { subscription: Subscription; plan: Plan },
): void {
  const counted = ({ subscription, plan }: { subscription: Subscription; plan: Plan }) => ({
    subscription,
    price: priceOf(plan, subscription.price_version),
  });
  const delta = subscriptionMetricsChange(before && counted(before), counted(after));
  writeDelta(tx, teamId, after.subscription.project_id, after.subscription.id, delta, 'S');
}

/** Adds to `tx` the metrics of a payment's change (`before` null: recorded). */
export function writePaymentMetrics(tx: Transaction, teamId: string, before: Payment | null, after: Payment): void {
  writeDelta(tx, teamId, after.project_id, after.subscription_id, paymentMetricsChange(before, after), 'P');
}
