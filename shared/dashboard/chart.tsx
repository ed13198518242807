/** @jsx h */
/** @jsxFrag Fragment */
import type { MetricsDay } from '../domain/metrics/schema.js';
import { formatPrice } from '../schemas/common.js';
import { Fragment, h, type Html } from '../web/html.js';

/**
 * Dashboard charts of the daily metrics (D21: server-rendered SVG, no script): active subscriptions as an area,
 * per-currency revenue as bars; labels are HTML so they stay readable at 375 px. Each SVG is `role="img"` with
 * `<title>` and `<desc>`.
 */

/** The plot's coordinate space: one slot of {@link SLOT_WIDTH} units per day, {@link PLOT_HEIGHT} units tall. */
const SLOT_WIDTH = 10;
const PLOT_HEIGHT = 100;
/** Units left free above the largest value so the line's stroke is not clipped. */
const HEADROOM = 4;

/**
 * The geometry of one series in the plot's coordinates: the points of a line, the bars, and the largest value (the top
 * of the scale).
 */
export interface SeriesGeometry {
  /** `x,y` per day at the middle of its slot; y grows downwards, the largest value at {@link HEADROOM}. */
  points: { x: number; y: number }[];
  /** One bar per day with a value above zero: its slot's left edge plus a gap, width, top and height. */
  bars: { x: number; y: number; width: number; height: number; value: number; index: number }[];
  /** The largest value of the series (0 when every value is 0 or the series is empty). */
  max: number;
  /** Width of the whole plot (days × slot width). */
  width: number;
}

const round = (value: number) => Math.round(value * 100) / 100;

/**
 * The geometry of `values` (one per day, non-negative) in a plot of {@link PLOT_HEIGHT} units; an all-zero series lies
 * on the baseline.
 */
export function seriesGeometry(values: readonly number[]): SeriesGeometry {
  const max = values.reduce((largest, value) => Math.max(largest, value), 0);
  const scale = max > 0 ? (PLOT_HEIGHT - HEADROOM) / max : 0;
  const points = values.map((value, index) => ({
    x: round(index * SLOT_WIDTH + SLOT_WIDTH / 2),
    y: round(PLOT_HEIGHT - value * scale),
  }));
  const bars = values.flatMap((value, index) => {
    if (value <= 0) return [];
    const height = round(value * scale);
    return [{ x: index * SLOT_WIDTH + 1, y: round(PLOT_HEIGHT - height), width: SLOT_WIDTH - 2, height, value, index }];
  });
  return { points, bars, max, width: values.length * SLOT_WIDTH };
}

/** The currencies that have revenue on some day of `daily`, sorted by code (none when money is hidden). */
export function revenueCurrencies(daily: readonly MetricsDay[]): string[] {
  const currencies = new Set<string>();
  for (const day of daily)
    for (const amount of day.revenue ?? []) if (amount.amount > 0) currencies.add(amount.currency);
  return [...currencies].sort();
}

/** Each day's revenue in `currency` (minor units; 0 on a day without any). */
function revenueOf(daily: readonly MetricsDay[], currency: string): number[] {
  return daily.map((day) => day.revenue?.find((amount) => amount.currency === currency)?.amount ?? 0);
}

/**
 * The frame shared by every chart: caption, the largest value, the SVG with title and description, first and last day.
 */
function ChartFrame(props: {
  id: string;
  caption: string;
  maxLabel: string;
  description: string;
  daily: readonly MetricsDay[];
  width: number;
  children: Html;
}): Html {
  const first = props.daily[0]?.date ?? '';
  const last = props.daily[props.daily.length - 1]?.date ?? '';
  return (
    <figure class="chart" id={props.id}>
      <figcaption>{props.caption}</figcaption>
      <div class="chart-max" aria-hidden="true">
        {props.maxLabel}
      </div>
      <svg
        xmlns="http://www.w3.org/2000/svg"
        viewBox={`0 0 ${props.width} ${PLOT_HEIGHT}`}
        preserveAspectRatio="none"
        role="img"
        aria-labelledby={`${props.id}-title ${props.id}-desc`}
        focusable="false"
      >
        <title id={`${props.id}-title`}>{props.caption}</title>
        <desc id={`${props.id}-desc`}>{props.description}</desc>
        <line
          class="chart-grid"
          x1="0"
          y1={String(HEADROOM)}
          x2={String(props.width)}
          y2={String(HEADROOM)}
          vector-effect="non-scaling-stroke"
        />
        <line
          class="chart-axis-line"
          x1="0"
          y1={String(PLOT_HEIGHT)}
          x2={String(props.width)}
          y2={String(PLOT_HEIGHT)}
          vector-effect="non-scaling-stroke"
        />
        {props.children}
      </svg>
      <div class="chart-dates" aria-hidden="true">
        <span>{first}</span>
        <span>{last}</span>
      </div>
    </figure>
  );
}

/** Active subscriptions over the series as an area under a line; "no data" text when the series is empty. */
export function ActiveSubscriptionsChart(props: { id: string; daily: readonly MetricsDay[] }): Html {
  const { daily } = props;
  if (daily.length === 0) return <p class="hint">No daily figures yet.</p>;
  const geometry = seriesGeometry(daily.map((day) => day.active));
  const line = geometry.points.map((point) => `${point.x},${point.y}`).join(' ');
  const firstX = geometry.points[0].x;
  const lastX = geometry.points[geometry.points.length - 1].x;
  const area = `M${firstX},${PLOT_HEIGHT} L${line.replaceAll(' ', ' L')} L${lastX},${PLOT_HEIGHT} Z`;
  const first = daily[0];
  const last = daily[daily.length - 1];
  const description = `Active subscriptions each day from ${first.date} to ${last.date}: ${first.active} on the first day, ${last.active} on the last, at most ${geometry.max}.`;
  return (
    <ChartFrame
      id={props.id}
      caption={`Active subscriptions, last ${daily.length} days`}
      maxLabel={String(geometry.max)}
      description={description}
      daily={daily}
      width={geometry.width}
    >
      <>
        <path class="chart-area" d={area} />
        <polyline class="chart-line" points={line} vector-effect="non-scaling-stroke" />
      </>
    </ChartFrame>
  );
}

/** Daily revenue in one currency as bars (amounts in minor units, labels in the currency's main unit). */
export function RevenueChart(props: { id: string; daily: readonly MetricsDay[]; currency: string }): Html {
  const { daily, currency } = props;
  if (daily.length === 0) return <p class="hint">No daily figures yet.</p>;
  const values = revenueOf(daily, currency);
  const geometry = seriesGeometry(values);
  const total = values.reduce((sum, value) => sum + value, 0);
  const days = geometry.bars.length;
  const description =
    `Revenue in ${currency} each day from ${daily[0].date} to ${daily[daily.length - 1].date}: ${formatPrice(total, currency)} in all over ${days} ${days === 1 ? 'day' : 'days'} with payments, ` +
    `at most ${formatPrice(geometry.max, currency)} in a day.`;
  return (
    <ChartFrame
      id={props.id}
      caption={`Revenue per day in ${currency}, last ${daily.length} days`}
      maxLabel={formatPrice(geometry.max, currency)}
      description={description}
      daily={daily}
      width={geometry.width}
    >
      <>
        {geometry.bars.map((bar) => (
          <rect
            class="chart-bar"
            x={String(bar.x)}
            y={String(bar.y)}
            width={String(bar.width)}
            height={String(bar.height)}
          >
            <title>{`${daily[bar.index].date}: ${formatPrice(bar.value, currency)}`}</title>
          </rect>
        ))}
      </>
    </ChartFrame>
  );
}
