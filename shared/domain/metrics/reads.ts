import { requireProjectAccess } from '../../auth/authorize.js';
import type { Principal } from '../../auth/principal.js';
import { DAY_MS, isoTime } from '../../clock.js';
import { readMetricsItems, type MetricsItem } from '../../store/metrics.js';
import type { Store } from '../../store/store.js';
import { loadProject } from '../projects/repository.js';
import { utcDay, type Counters, type MoneyCounter } from './decisions.js';
import {
  METRICS_RECENT_DAYS,
  METRICS_SERIES_DAYS,
  type CurrencyAmount,
  type Metrics,
  type MetricsDay,
} from './schema.js';

/**
 * The metrics reads (DESIGN D14): a scope's gauges items and the day items of the last
 * {@link METRICS_SERIES_DAYS} days, every shard (one Query, `readMetricsItems`), summed into {@link Metrics}:
 * O(days), never O(subscribers).
 */

/** Adds `counters` (of one item) into `into`. */
function sumInto(into: Counters, counters: Counters): void {
  for (const [name, value] of Object.entries(counters)) into[name] = (into[name] ?? 0) + value;
}

/** The amounts of counters `<prefix>_<CURRENCY>`, sorted by currency, zero amounts left out. */
function amounts(counters: Counters, prefix: MoneyCounter): CurrencyAmount[] {
  return Object.entries(counters)
    .filter(([name, amount]) => name.startsWith(`${prefix}_`) && amount !== 0)
    .map(([name, amount]) => ({ currency: name.slice(prefix.length + 1), amount }))
    .sort((a, b) => (a.currency < b.currency ? -1 : 1));
}

/** Sums a scope's items into {@link Metrics} as of `nowMs`; money fields null without `withMoney`. */
function toMetrics(items: MetricsItem[], projectId: string | null, nowMs: number, withMoney: boolean): Metrics {
  const dates = Array.from({ length: METRICS_SERIES_DAYS }, (_, index) =>
    utcDay(nowMs - (METRICS_SERIES_DAYS - 1 - index) * DAY_MS),
  );
  const gauges: Counters = {};
  const days = new Map<string, Counters>(dates.map((date) => [date, {}]));
  for (const { gauges: isGauges, date, counters } of items) {
    if (isGauges) sumInto(gauges, counters);
    else {
      const day = date === undefined ? undefined : days.get(date);
      if (day) sumInto(day, counters);
    }
  }
  const money = (list: CurrencyAmount[]) => (withMoney ? list : null);
  const recent: Counters = {};
  for (const date of dates.slice(-METRICS_RECENT_DAYS))
    for (const [name, value] of Object.entries(days.get(date) ?? {})) recent[name] = (recent[name] ?? 0) + value;
  // The series runs backwards from the gauge: active at the end of a day = the next day's minus that day's net change.
  let active = gauges.active ?? 0;
  const daily = dates
    .toReversed()
    .map((date): MetricsDay => {
      const day = days.get(date) ?? {};
      const entry = { date, active, revenue: money(amounts(day, 'revenue')) };
      active -= day.active_change ?? 0;
      return entry;
    })
    .toReversed();
  return {
    object: 'metrics',
    project_id: projectId,
    as_of: isoTime(nowMs),
    subscriptions: { active: gauges.active ?? 0, trialing: gauges.trialing ?? 0, past_due: gauges.past_due ?? 0 },
    mrr: money(amounts(gauges, 'mrr')),
    last_30_days: {
      new: recent.new ?? 0,
      churned: recent.churned ?? 0,
      revenue: money(amounts(recent, 'revenue')),
      refunds: money(amounts(recent, 'refunds')),
      discounts: money(amounts(recent, 'discounts')),
      failed_payments: recent.failed_payments ?? 0,
    },
    daily,
  };
}

/** Whether the principal sees the money fields (`project-payment:view-any`). */
const seesMoney = (principal: Principal) => principal.abilities.has('project-payment:view-any');

/**
 * The metrics of one project of the principal's team (`GET /v1/projects/{project_id}/metrics`): the scope
 * check first, then the project read and the scope's Query in parallel. Errors: NOT_FOUND when the
 * project is absent, of another team or outside the token's project scope.
 */
export async function getProjectMetrics(
  store: Store,
  principal: Principal,
  projectId: string,
  nowMs: number,
): Promise<Metrics> {
  requireProjectAccess(principal, projectId);
  const from = utcDay(nowMs - (METRICS_SERIES_DAYS - 1) * DAY_MS);
  const [, items] = await Promise.all([
    loadProject(store, principal, projectId),
    readMetricsItems(store, principal.teamId, projectId, from),
  ]);
  return toMetrics(items, projectId, nowMs, seesMoney(principal));
}

/** The metrics of the principal's whole team, every project summed (`GET /v1/metrics`). */
export async function getTeamMetrics(store: Store, principal: Principal, nowMs: number): Promise<Metrics> {
  const from = utcDay(nowMs - (METRICS_SERIES_DAYS - 1) * DAY_MS);
  return toMetrics(await readMetricsItems(store, principal.teamId, null, from), null, nowMs, seesMoney(principal));
}
