/**
 * The dashboard's figures (DESIGN D21): the server-rendered SVG charts of the 90-day series (geometry, empty
 * and all-zero series, one currency or several, escaping, accessible names), the money rows per currency
 * (hidden money), and the "needs attention" items of the metrics, the billing state and flagged payments.
 */
import { describe, expect, it } from 'vitest';
import {
  ActiveSubscriptionsChart,
  RevenueChart,
  revenueCurrencies,
  seriesGeometry,
} from '../../shared/dashboard/chart.js';
import { currencyRows, FiguresCard } from '../../shared/dashboard/figures.js';
import {
  billingItem,
  flaggedPaymentItem,
  metricsItems,
  NeedsAttention,
} from '../../shared/dashboard/pages/attention.js';
import type { BillingOverview } from '../../shared/domain/billing/schema.js';
import { Metrics, type MetricsDay } from '../../shared/domain/metrics/schema.js';
import { samplePayment } from '../support/payments.js';
import { DAY_MS } from '../../shared/clock.js';

/** `count` consecutive UTC days ending 2026-11-27, each from `make(index)`. */
function days(count: number, make: (index: number) => Omit<MetricsDay, 'date'>): MetricsDay[] {
  const last = Date.UTC(2026, 10, 27);
  return Array.from({ length: count }, (_, index) => ({
    date: new Date(last - (count - 1 - index) * DAY_MS).toISOString().slice(0, 10),
    ...make(index),
  }));
}

function metrics(overrides: Partial<Metrics> = {}): Metrics {
  return Metrics.parse({
    object: 'metrics',
    project_id: null,
    as_of: '2026-11-27T08:00:00.000Z',
    subscriptions: { active: 12, trialing: 2, past_due: 1 },
    mrr: [{ currency: 'EUR', amount: 12_000 }],
    last_30_days: {
      new: 5,
      churned: 1,
      revenue: [{ currency: 'EUR', amount: 4_500 }],
      refunds: [],
      discounts: [],
      failed_payments: 2,
    },
    daily: days(90, (index) => ({
      active: index % 10,
      revenue: index === 89 ? [{ currency: 'EUR', amount: 900 }] : [],
    })),
    ...overrides,
  });
}

describe('seriesGeometry', () => {
  it('puts each day in the middle of its 10-unit slot and the largest value 4 units below the top', () => {
    const geometry = seriesGeometry([0, 48, 96]);
    expect(geometry.max).toBe(96);
    expect(geometry.width).toBe(30);
    expect(geometry.points).toEqual([
      { x: 5, y: 100 },
      { x: 15, y: 52 },
      { x: 25, y: 4 },
    ]);
  });

  it('draws a bar per day above zero only, from the baseline up, 8 units wide', () => {
    const geometry = seriesGeometry([0, 48, 96]);
    expect(geometry.bars).toEqual([
      { x: 11, y: 52, width: 8, height: 48, value: 48, index: 1 },
      { x: 21, y: 4, width: 8, height: 96, value: 96, index: 2 },
    ]);
  });

  it('lays an all-zero series on the baseline with no bars, and an empty one has nothing', () => {
    expect(seriesGeometry([0, 0]).points.map((point) => point.y)).toEqual([100, 100]);
    expect(seriesGeometry([0, 0]).bars).toEqual([]);
    expect(seriesGeometry([0, 0]).max).toBe(0);
    expect(seriesGeometry([])).toEqual({ points: [], bars: [], max: 0, width: 0 });
  });
});

describe('charts', () => {
  it('draws active subscriptions as an area and a line over 90 days, with title, description and the axis labels', () => {
    const html = String(ActiveSubscriptionsChart({ id: 'team-chart-active', daily: metrics().daily }));
    expect(html).toContain('role="img"');
    expect(html).toContain('aria-labelledby="team-chart-active-title team-chart-active-desc"');
    expect(html).toContain('viewBox="0 0 900 100"');
    expect(html).toContain('<title id="team-chart-active-title">Active subscriptions, last 90 days</title>');
    expect(html).toContain('from 2026-08-30 to 2026-11-27: 0 on the first day, 9 on the last, at most 9.');
    expect(html).toMatch(/<polyline class="chart-line" points="5,100 15,89\.33 /);
    expect(html).toContain('<div class="chart-max" aria-hidden="true">9</div>');
    expect(html).toContain('<span>2026-08-30</span><span>2026-11-27</span>');
    expect(html).not.toContain('<script');
  });

  it('says there are no figures yet for an empty series', () => {
    expect(String(ActiveSubscriptionsChart({ id: 'x', daily: [] }))).toContain('No daily figures yet.');
    expect(String(RevenueChart({ id: 'x', daily: [], currency: 'EUR' }))).toContain('No daily figures yet.');
  });

  it('draws revenue bars in one currency with amounts in the main unit, and one chart per currency with revenue', () => {
    const daily = days(3, (index) => ({
      active: 1,
      revenue: [
        { currency: 'EUR', amount: index === 2 ? 1_050 : 0 },
        ...(index === 0 ? [{ currency: 'JPY', amount: 500 }] : []),
      ],
    }));
    expect(revenueCurrencies(daily)).toEqual(['EUR', 'JPY']);
    const euro = String(RevenueChart({ id: 'eur', daily, currency: 'EUR' }));
    expect(euro.match(/<rect /g)).toHaveLength(1);
    expect(euro).toContain(
      '<rect class="chart-bar" x="21" y="4" width="8" height="96"><title>2026-11-27: €10.50</title></rect>',
    );
    expect(euro).toContain('€10.50 in all over 1 day with payments, at most €10.50 in a day.');
    expect(String(RevenueChart({ id: 'jpy', daily, currency: 'JPY' }))).toContain('¥500');
    expect(revenueCurrencies(days(2, () => ({ active: 0, revenue: null })))).toEqual([]);
    expect(revenueCurrencies(days(2, () => ({ active: 0, revenue: [{ currency: 'USD', amount: 0 }] })))).toEqual([]);
  });

  it('escapes what it shows: quotes in attributes, markup in text', () => {
    const html = String(
      RevenueChart({
        id: 'x"><b',
        daily: [{ date: '<i>day</i>', active: 1, revenue: [{ currency: 'EUR', amount: 1 }] }],
        currency: 'EUR',
      }),
    );
    expect(html).not.toContain('id="x">');
    expect(html).toContain('id="x&#34;><b"');
    expect(html).not.toContain('<i>');
    expect(html).toContain('<span>&lt;i>day&lt;/i></span>');
  });
});

describe('figures', () => {
  it('lists money per currency across MRR, revenue and refunds, sorted, with zero where a currency has none', () => {
    const rows = currencyRows(
      metrics({
        mrr: [{ currency: 'USD', amount: 100 }],
        last_30_days: {
          new: 0,
          churned: 0,
          revenue: [{ currency: 'EUR', amount: 200 }],
          refunds: [{ currency: 'USD', amount: 50 }],
          discounts: [],
          failed_payments: 0,
        },
      }),
    );
    expect(rows).toEqual([
      { currency: 'EUR', mrr: 0, revenue: 200, refunds: 0 },
      { currency: 'USD', mrr: 100, revenue: 0, refunds: 50 },
    ]);
  });

  it('hides money when the money fields are null, and shows no revenue chart then', () => {
    const hidden = metrics({
      mrr: null,
      last_30_days: { new: 0, churned: 0, revenue: null, refunds: null, discounts: null, failed_payments: 0 },
      daily: days(90, () => ({ active: 3, revenue: null })),
    });
    expect(currencyRows(hidden)).toEqual([]);
    const html = String(
      FiguresCard({ outcome: { ok: true, result: hidden, replayed: false }, idPrefix: 'team', heading: 'Figures' }),
    );
    expect(html).toContain('Money is hidden');
    expect(html).not.toContain('chart-revenue');
    expect(html).toContain('team-chart-active');
  });

  it('shows the counts, the money in the main unit and the charts', () => {
    const html = String(
      FiguresCard({ outcome: { ok: true, result: metrics(), replayed: false }, idPrefix: 'team', heading: 'Figures' }),
    );
    expect(html).toContain('<div id="team-active"><dt>Active</dt><dd>12</dd></div>');
    expect(html).toContain('€120.00');
    expect(html).toContain('€45.00');
    expect(html).toContain('id="team-chart-revenue-eur"');
  });

  it('names the missing ability instead of the figures when the read is refused for it', () => {
    const html = String(
      FiguresCard({
        outcome: {
          ok: false,
          problem: {
            type: 'x',
            title: 'Forbidden',
            status: 403,
            code: 'TOKEN_MISSING_ABILITY',
            detail: 'no',
            hint: 'ask',
            request_id: 'r',
          } as never,
        },
        idPrefix: 'team',
        heading: 'Figures',
      }),
    );
    expect(html).toContain('You cannot see the figures');
    expect(html).not.toContain('role="alert"');
  });
});

describe('needs attention', () => {
  it('lists past-due subscriptions with their link and failed payments; nothing when both are zero', () => {
    expect(metricsItems(metrics(), '/dashboard/projects/p/subscriptions?status=past_due')).toEqual([
      {
        id: 'attention-past-due',
        text: '1 subscription is past due (a renewal failed).',
        href: '/dashboard/projects/p/subscriptions?status=past_due',
      },
      { id: 'attention-failed-payments', text: '2 payments failed in the last 30 days.' },
    ]);
    const calm = metrics({
      subscriptions: { active: 1, trialing: 0, past_due: 0 },
      last_30_days: { new: 0, churned: 0, revenue: [], refunds: [], discounts: [], failed_payments: 0 },
    });
    expect(metricsItems(calm, '/x')).toEqual([]);
    expect(String(NeedsAttention({ facts: { items: [], skipped: [] } }))).toContain('Nothing needs your attention.');
  });

  it('names the billing grace period or lock, and nothing in good standing', () => {
    const billing = { status: 'ok', grace_period_ends_at: null, locked_at: null } as unknown as BillingOverview;
    expect(billingItem(billing)).toBeNull();
    expect(
      String(
        billingItem({ ...billing, status: 'grace_period', grace_period_ends_at: '2026-12-01T00:00:00.000Z' })?.text,
      ),
    ).toContain('grace period until <time datetime="2026-12-01T00:00:00.000Z">');
    expect(
      String(billingItem({ ...billing, status: 'locked', locked_at: '2026-11-20T00:00:00.000Z' })?.text),
    ).toContain('locked since');
  });

  it('names a flagged payment with its project, subscriber, paid and expected amounts, linking to the subscriber', () => {
    const project = { id: 'p1', name: 'Book club' };
    const paid = samplePayment('2026-11-27T00:00:00.000Z', { status: 'succeeded', amount: 1, currency: 'JPY' });
    expect(flaggedPaymentItem(project, paid, 'Ada')).toBeNull();
    const flagged = {
      ...paid,
      mismatch: { expected_amount: 90_000, expected_currency: 'USD', reason: 'currency' as const },
    };
    const item = flaggedPaymentItem(project, flagged, 'Ada');
    expect(item).toMatchObject({
      id: `attention-mismatch-${paid.id}`,
      href: `/dashboard/projects/p1/subscribers/${paid.subscriber_id}`,
    });
    expect(item?.text).toContain('Book club: Ada paid 1 JPY (in another currency), the plan asks 900.00 USD');
    expect(flaggedPaymentItem(project, flagged, null)?.text).toContain(`subscriber ${paid.subscriber_id} paid`);
  });

  it('links each item and names the checks skipped for a missing ability', () => {
    const html = String(
      NeedsAttention({
        facts: {
          items: [{ id: 'attention-webhooks', text: '1 webhook endpoint is disabled', href: '/dashboard/webhooks' }],
          skipped: [{ what: 'billing', ability: 'billing:view' }],
        },
      }),
    );
    expect(html).toContain(
      '<li id="attention-webhooks"><a href="/dashboard/webhooks">1 webhook endpoint is disabled</a></li>',
    );
    expect(html).toContain('billing (needs <code>billing:view</code>)');
    expect(html).not.toContain('Nothing needs your attention');
  });
});
