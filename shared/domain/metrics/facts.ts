import { defineFacts } from '../define-facts.js';

/**
 * Metrics' keys (DESIGN D14): per scope (a project, or `TEAM` for every project of the team) one
 * partition holding, per shard, a gauges item (`GAUGES#<shard>`) and a day item per UTC day
 * (`DAY#<YYYY-MM-DD>#<shard>#<kind>`, kind `S` for subscription changes, `P` for payment changes, so a
 * transaction recording a payment and the transition it drives never writes one item twice). Written
 * with `ADD` in the transactions of the changes they count; read with ONE Query per scope.
 */
export const metricsFacts = defineFacts({
  keys: {
    /** The partition of a scope's metrics: a project's, or the team's (`projectId` null). */
    metricsPartition: (teamId: string, projectId: string | null) =>
      projectId ? `TEAM#${teamId}#PROJECT#${projectId}#METRICS` : `TEAM#${teamId}#METRICS`,
    /** Sort key of a scope's gauges item of one shard. */
    metricsGaugesSortKey: (shard: number) => `GAUGES#${shard}`,
    /**
     * Sort key of a scope's day item of one UTC day (`YYYY-MM-DD`), shard and kind (`S` subscriptions, `P` payments).
     */
    metricsDaySortKey: (date: string, shard: number, kind: 'S' | 'P') => `DAY#${date}#${shard}#${kind}`,
  },
  sortKeyPrefix: {
    /** Every day item sorts from `DAY#<date>`; gauges items (`GAUGES#…`) sort after every day item. */
    metricsDay: 'DAY#',
    metricsGauges: 'GAUGES#',
  },
  entity: { metricsGauges: 'metrics_gauges', metricsDay: 'metrics_day' },
});
