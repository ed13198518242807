/** @jsx h */
/** @jsxFrag Fragment */
import { METRICS_RECENT_DAYS, type CurrencyAmount, type Metrics } from '../domain/metrics/schema.js';
import { formatPrice } from '../schemas/common.js';
import { ActiveSubscriptionsChart, RevenueChart, revenueCurrencies } from './chart.js';
import { DataTable, ProblemView, When } from './components.js';
import type { OperationOutcome } from '../web/run-operation.js';
import { Fragment, h, type Html } from '../web/html.js';

/**
 * A project's or the team's figures on the dashboard (DESIGN D21; `getProjectMetrics`, `getTeamMetrics`):
 * subscription counts, money per currency (hidden when the reader lacks `project-payment:view-any`, i.e.
 * the money fields are null) and the 90-day charts. A reader without `project-subscription:view-any` gets
 * a line saying so instead of an error page.
 */

/** The money figures of one currency: MRR and the last 30 days' revenue and refunds (minor units). */
interface CurrencyRow {
  currency: string;
  mrr: number;
  revenue: number;
  refunds: number;
}

/** The recent window as a label suffix, e.g. `30 days`. */
const RECENT = `${METRICS_RECENT_DAYS} days`;

const amountIn = (amounts: readonly CurrencyAmount[] | null, currency: string) =>
  amounts?.find((amount) => amount.currency === currency)?.amount ?? 0;

/** One row per currency that appears in MRR, revenue or refunds, sorted by code; none when money is hidden. */
export function currencyRows(metrics: Metrics): CurrencyRow[] {
  const { mrr, last_30_days: recent } = metrics;
  if (mrr === null || recent.revenue === null || recent.refunds === null) return [];
  const currencies = [
    ...new Set([...mrr, ...recent.revenue, ...recent.refunds].map((amount) => amount.currency)),
  ].sort();
  return currencies.map((currency) => ({
    currency,
    mrr: amountIn(mrr, currency),
    revenue: amountIn(recent.revenue, currency),
    refunds: amountIn(recent.refunds, currency),
  }));
}

/** A figure tile: its label and value. */
function Figure(props: { label: string; value: number | string; id?: string }): Html {
  return (
    <div id={props.id}>
      <dt>{props.label}</dt>
      <dd>{props.value}</dd>
    </div>
  );
}

/** The figures and charts of `metrics`; `idPrefix` keeps element ids unique on the page. */
function FiguresOf(props: { metrics: Metrics; idPrefix: string }): Html {
  const { metrics, idPrefix } = props;
  const moneyShown = metrics.mrr !== null;
  const rows = currencyRows(metrics);
  return (
    <>
      <dl class="figures" id={`${idPrefix}-counts`}>
        <Figure id={`${idPrefix}-active`} label="Active" value={metrics.subscriptions.active} />
        <Figure label="Trialing" value={metrics.subscriptions.trialing} />
        <Figure label="Past due" value={metrics.subscriptions.past_due} />
        <Figure label={`New (${RECENT})`} value={metrics.last_30_days.new} />
        <Figure label={`Churned (${RECENT})`} value={metrics.last_30_days.churned} />
        <Figure label={`Failed payments (${RECENT})`} value={metrics.last_30_days.failed_payments} />
      </dl>
      {moneyShown ? (
        <DataTable
          id={`${idPrefix}-money`}
          caption="Money per currency"
          rows={rows}
          empty="No revenue yet."
          columns={[
            { label: 'Currency', cell: (row) => row.currency },
            { label: 'MRR', cell: (row) => formatPrice(row.mrr, row.currency) },
            { label: `Revenue (${RECENT})`, cell: (row) => formatPrice(row.revenue, row.currency) },
            { label: `Refunds (${RECENT})`, cell: (row) => formatPrice(row.refunds, row.currency) },
          ]}
        />
      ) : (
        <p class="hint">
          Money is hidden: it needs the ability <code>project-payment:view-any</code>.
        </p>
      )}
      <div class="charts">
        <ActiveSubscriptionsChart id={`${idPrefix}-chart-active`} daily={metrics.daily} />
        {revenueCurrencies(metrics.daily).map((currency) => (
          <RevenueChart
            id={`${idPrefix}-chart-revenue-${currency.toLowerCase()}`}
            daily={metrics.daily}
            currency={currency}
          />
        ))}
      </div>
      <p class="hint">
        As of <When at={metrics.as_of} />.
      </p>
    </>
  );
}

/**
 * A card with the figures of a metrics read: the figures and charts, a line naming the missing ability when
 * the reader may not see them, or the problem otherwise (never an error page).
 */
export function FiguresCard(props: { outcome: OperationOutcome<Metrics>; idPrefix: string; heading: string }): Html {
  const { outcome } = props;
  return (
    <section class="card" aria-labelledby={`${props.idPrefix}-heading`} id={`${props.idPrefix}-figures`}>
      <h2 id={`${props.idPrefix}-heading`}>{props.heading}</h2>
      {outcome.ok ? (
        <FiguresOf metrics={outcome.result} idPrefix={props.idPrefix} />
      ) : outcome.problem.code === 'TOKEN_MISSING_ABILITY' ? (
        <p class="hint">
          You cannot see the figures: they need the ability <code>project-subscription:view-any</code>.
        </p>
      ) : (
        <ProblemView problem={outcome.problem} />
      )}
    </section>
  );
}
