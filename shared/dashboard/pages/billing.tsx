/** @jsx h */
/** @jsxFrag Fragment */
import {
  BILLING_CURRENCY,
  BILLING_TIERS,
  TIER_LIMITS,
  TIER_PRICES,
  USAGE_METRICS,
  type BillingInvoice,
  type BillingOverview,
  type BillingStatus,
} from '../../domain/billing/schema.js';
import type { ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { formatMinorUnits } from '../../schemas/common.js';
import { Badge, CsrfField, DataTable, Forbidden, IdempotencyField, Notice, ProblemView, When } from '../components.js';
import { ActionButton } from '../form-controls.js';
import { Page } from '../layout.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { formText, htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import { pageOperations, type ListPage } from './kit.js';
import { getBilling, listBillingInvoices, changeBillingTier } from '../../domain/billing/handlers.js';

const { read, write } = pageOperations({ getBilling, listBillingInvoices, changeBillingTier });

/**
 * Billing (DESIGN D20, D21): the team's own tier with its limits and usage, the billing status and lock
 * state (grace period end, locked since), the invoices, and changing the tier (`changeBillingTier`, needs
 * `billing:update`; allowed while locked). Prices and limits come from the billing schema's one table.
 */

const BILLING = '/dashboard/billing';

const METRIC_LABELS: Record<(typeof USAGE_METRICS)[number], string> = {
  projects: 'Projects',
  subscribers: 'Subscribers',
  webhook_endpoints: 'Webhook endpoints',
  team_members: 'Team members',
};

function StatusBadge(props: { status: BillingStatus }): Html {
  if (props.status === 'ok') return <Badge color="green">In good standing</Badge>;
  if (props.status === 'grace_period') return <Badge color="yellow">Grace period</Badge>;
  return <Badge color="red">Locked</Badge>;
}

function tierPrice(tier: (typeof BILLING_TIERS)[number]): string {
  return TIER_PRICES[tier] === 0 ? 'free' : `${formatMinorUnits(TIER_PRICES[tier], BILLING_CURRENCY)} / month`;
}

/**
 * The status explained: what the grace period or the lock means and until when; in good standing, the open invoices.
 */
function LockState(props: { billing: BillingOverview; openInvoices: BillingInvoice[] }): Html {
  const { billing, openInvoices } = props;
  if (billing.status === 'grace_period') {
    return (
      <div class="problem" role="status" id="lock-state">
        <strong>An invoice payment failed.</strong>
        <p>
          Everything keeps working until <When at={billing.grace_period_ends_at} />; the team is locked then unless the
          open invoice is paid.
        </p>
      </div>
    );
  }
  if (billing.status === 'locked') {
    return (
      <div class="problem" role="status" id="lock-state">
        <strong>
          The team is locked since <When at={billing.locked_at} />.
        </strong>
        <p>
          Changes over the API, the tool server and this dashboard are refused (BILLING_LOCKED) until the open invoices
          are paid; your subscribers keep their access. Billing itself still works.
        </p>
      </div>
    );
  }
  if (openInvoices.length === 0) return <p id="lock-state">No payment is outstanding.</p>;
  const due = openInvoices
    .map(
      (invoice) =>
        `${invoice.number} (${formatMinorUnits(invoice.amount_due - invoice.amount_paid, invoice.currency)})`,
    )
    .join(', ');
  return <p id="lock-state">No payment has failed. Open: {due} — payable on issue.</p>;
}

/** `GET /dashboard/billing`: tier, limits and usage, status and lock state, change tier, invoices. */
export async function billingPage(
  request: SignedInRequest,
  _params: Record<string, string> = {},
  extra?: { problem?: ProblemDocument },
): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const [billing, invoices] = await Promise.all([
    read<BillingOverview>(request, 'getBilling'),
    read<ListPage<BillingInvoice>>(request, 'listBillingInvoices', { limit: 24 }),
  ]);
  return htmlResult(
    extra?.problem?.status ?? 200,
    <Page title="Billing" viewer={viewer} current={BILLING}>
      {request.query.get('changed') && !extra ? (
        <Notice>The team is now on the {request.query.get('changed')} tier.</Notice>
      ) : (
        ''
      )}
      {extra?.problem ? <ProblemView problem={extra.problem} /> : ''}
      {billing.ok ? (
        <>
          <div class="card">
            <dl class="facts" id="billing-facts">
              <dt>Tier</dt>
              <dd>
                <strong id="billing-tier">{billing.result.tier}</strong>{' '}
                <span class="hint">({tierPrice(billing.result.tier)})</span>
              </dd>
              <dt>Status</dt>
              <dd>
                <StatusBadge status={billing.result.status} />
              </dd>
              <dt>Current period</dt>
              <dd>
                <When at={billing.result.current_period_start} /> to <When at={billing.result.current_period_end} />
              </dd>
            </dl>
          </div>
          <LockState
            billing={billing.result}
            openInvoices={invoices.ok ? invoices.result.data.filter((invoice) => invoice.status === 'open') : []}
          />
          <h2>Usage</h2>
          <DataTable
            id="billing-usage"
            rows={USAGE_METRICS}
            empty="No limits."
            columns={[
              { label: 'Limit', cell: (metric) => METRIC_LABELS[metric] },
              { label: 'Used', cell: (metric) => billing.result.usage[metric] },
              { label: 'Of', cell: (metric) => billing.result.limits[metric]?.toLocaleString('en') ?? 'no limit' },
            ]}
          />
          <h2>Change tier</h2>
          <form method="post" action={`${BILLING}/tier`} class="stack card">
            <CsrfField viewer={viewer} />
            <IdempotencyField />
            <fieldset>
              <legend>Tier</legend>
              <div class="checks">
                {BILLING_TIERS.map((tier) => (
                  <label>
                    <input type="radio" name="tier" value={tier} checked={tier === billing.result.tier} />
                    <span>
                      <strong>{tier}</strong> — {tierPrice(tier)};{' '}
                      <span class="hint">
                        {USAGE_METRICS.map(
                          (metric) =>
                            `${TIER_LIMITS[tier][metric]?.toLocaleString('en') ?? 'unlimited'} ${METRIC_LABELS[metric].toLowerCase()}`,
                        ).join(', ')}
                      </span>
                    </span>
                  </label>
                ))}
              </div>
            </fieldset>
            <p class="hint">
              From free to a paid tier a new monthly period starts with its invoice at once; between paid tiers the next
              invoice uses the new price.
            </p>
            <div>
              <ActionButton viewer={viewer} ability="billing:update" label="Change tier" />
            </div>
          </form>
        </>
      ) : billing.problem.code === 'TOKEN_MISSING_ABILITY' ? (
        <Forbidden ability="billing:view" what="the team’s billing" />
      ) : (
        <ProblemView problem={billing.problem} />
      )}
      <h2>Invoices</h2>
      {invoices.ok ? (
        <DataTable
          id="invoices"
          rows={invoices.result.data}
          empty="No invoices yet (the free tier has none)."
          columns={[
            { label: 'Invoice', cell: (invoice) => invoice.number, class: 'mono' },
            { label: 'Tier', cell: (invoice) => invoice.tier },
            {
              label: 'Period',
              cell: (invoice) => (
                <>
                  <When at={invoice.period_start} /> – <When at={invoice.period_end} />
                </>
              ),
            },
            { label: 'Amount due', cell: (invoice) => formatMinorUnits(invoice.amount_due, invoice.currency) },
            {
              label: 'Paid',
              cell: (invoice) => (invoice.paid_at ? <When at={invoice.paid_at} /> : <span class="hint">—</span>),
            },
            {
              label: 'Status',
              cell: (invoice) =>
                invoice.status === 'paid' ? <Badge color="green">paid</Badge> : <Badge color="yellow">open</Badge>,
            },
            {
              label: 'Failed attempts',
              cell: (invoice) => (
                <>
                  {invoice.attempt_count}
                  {invoice.last_payment_error ? <div class="hint">{invoice.last_payment_error}</div> : ''}
                </>
              ),
            },
          ]}
        />
      ) : invoices.problem.code === 'TOKEN_MISSING_ABILITY' ? (
        <Forbidden ability="billing-invoice:view-any" what="the invoices" />
      ) : (
        <ProblemView problem={invoices.problem} />
      )}
    </Page>,
  );
}

/** `POST /dashboard/billing/tier`: `changeBillingTier`. */
export async function changeTier(request: SignedInRequest): Promise<ApiGatewayResult> {
  const tier = formText(request.form, 'tier');
  const outcome = await write<{ tier: string }>(request, 'changeBillingTier', { tier });
  if (!outcome.ok) return billingPage(request, {}, { problem: outcome.problem });
  return redirectResult(`${BILLING}?changed=${encodeURIComponent(outcome.result.tier)}`);
}
