import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { parseItem } from '../../store/records.js';
import type { Item } from '../../store/requests.js';
import type { Counters } from './decisions.js';

/** Counter attributes of the metrics items (everything else is a key or a fixed attribute). */
const COUNTER =
  /^(active|trialing|past_due|active_change|new|churned|failed_payments|(mrr|revenue|refunds|discounts)_[A-Z]{3})$/;

/**
 * What names a gauges or day item as stored (`keys.metricsGaugesSortKey`, `keys.metricsDaySortKey`, DESIGN D14): its
 * partition and sort key and, on a day item, its UTC day.
 */
const StoredMetricsItem = z.object({ pk: z.string(), sk: z.string(), date: z.optional(z.iso.date()) });

/** A metrics item's counters as stored (written with `ADD`): each a number. */
const StoredCounters = z.record(z.string().check(z.regex(COUNTER)), z.number());

/** The item types a metrics partition holds, as a parse error names them. */
const METRICS_ENTITY = `${entity.metricsGauges} or ${entity.metricsDay}`;

/**
 * A stored gauges or day item of a metrics partition: its sort key, its UTC day (`YYYY-MM-DD`, day items
 * only) and its counter attributes. Throws StoredRecordError naming its key when it does not match.
 */
export function parseStoredMetricsItem(item: Item): { sk: string; date?: string; counters: Counters } {
  const { pk, sk, date } = parseItem(METRICS_ENTITY, StoredMetricsItem, item);
  const counterAttributes = Object.fromEntries(Object.entries(item).filter(([name]) => COUNTER.test(name)));
  const counters = parseItem(METRICS_ENTITY, StoredCounters, counterAttributes, () => `${pk} / ${sk}`);
  return { sk, date, counters };
}
