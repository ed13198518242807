/** @jsx h */
/** @jsxFrag Fragment */
import type { Ability } from '../../catalogues/abilities.js';
import type { LatestAccessAudit } from '../../domain/access-audits/schema.js';
import type { BillingOverview } from '../../domain/billing/schema.js';
import type { Member } from '../../domain/members/schema.js';
import type { Payment } from '../../domain/payments/schema.js';
import type { Subscriber } from '../../domain/subscribers/schema.js';
import { formatMinorUnits } from '../../schemas/common.js';
import { METRICS_RECENT_DAYS, type Metrics } from '../../domain/metrics/schema.js';
import type { Project } from '../../domain/projects/schema.js';
import type { WebhookEndpoint } from '../../domain/webhook-endpoints/schema.js';
import { When } from '../components.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { subscriberPath, type SignedInRequest } from '../http.js';
import type { OperationOutcome } from '../../web/run-operation.js';
import { pageOperations, type ListPage } from './kit.js';
import { listWebhookEndpoints } from '../../domain/webhook-endpoints/handlers.js';
import { getBilling } from '../../domain/billing/handlers.js';
import { listMembers } from '../../domain/members/handlers.js';
import { getLatestAccessAudit } from '../../domain/access-audits/handlers.js';
import { listPayments } from '../../domain/payments/handlers.js';
import { getSubscriber } from '../../domain/subscribers/handlers.js';

const { read } = pageOperations({
  listWebhookEndpoints,
  getBilling,
  listMembers,
  getLatestAccessAudit,
  listPayments,
  getSubscriber,
});

/**
 * "Needs attention" on the home and project pages (DESIGN D21): past-due subscriptions and failed payments
 * (from the metrics), disabled webhook endpoints (`listWebhookEndpoints` with `is_active=false`), members
 * whose last platform call failed (`platform_error`, read from the first page of each project's members:
 * there is no team-wide index of them), payments flagged because they do not match their plan's price (read from the
 * newest 100 payments of each project), the open findings of each project's latest access audit, and the team's
 * billing grace period or lock (`getBilling`). Each check runs
 * only when the reader holds its ability; the ones skipped are named.
 */

/** Projects whose members are read for platform errors on the home page (one page of 100 members each). */
const PLATFORM_ERROR_PROJECTS = 10;

/** One thing to look at: a sentence, and where to go about it. */
export interface AttentionItem {
  id: string;
  text: Html | string;
  href?: string;
}

/** What the checks found; `skipped` names the checks the reader may not run, with the ability each needs. */
export interface AttentionFacts {
  items: AttentionItem[];
  skipped: { what: string; ability: Ability }[];
}

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/**
 * The items of the metrics: past-due subscriptions (linking to `pastDueHref`) and failed payments in the recent window.
 */
export function metricsItems(metrics: Metrics, pastDueHref: string): AttentionItem[] {
  const items: AttentionItem[] = [];
  const pastDue = metrics.subscriptions.past_due;
  if (pastDue > 0)
    items.push({
      id: 'attention-past-due',
      text: `${plural(pastDue, 'subscription is', 'subscriptions are')} past due (a renewal failed).`,
      href: pastDueHref,
    });
  const failed = metrics.last_30_days.failed_payments;
  if (failed > 0)
    items.push({
      id: 'attention-failed-payments',
      text: `${plural(failed, 'payment', 'payments')} failed in the last ${METRICS_RECENT_DAYS} days.`,
    });
  return items;
}

/**
 * The item of the team's billing state: the grace period with its end, or the lock with its start; none in good
 * standing.
 */
export function billingItem(billing: BillingOverview): AttentionItem | null {
  if (billing.status === 'grace_period') {
    return {
      id: 'attention-billing',
      text: (
        <>
          Billing is in its grace period until <When at={billing.grace_period_ends_at} />: pay the open invoice or the
          team is locked.
        </>
      ),
      href: '/dashboard/billing',
    };
  }
  if (billing.status === 'locked') {
    return {
      id: 'attention-billing',
      text: (
        <>
          The team is locked since <When at={billing.locked_at} />: creator writes are refused until the open invoice is
          paid.
        </>
      ),
      href: '/dashboard/billing',
    };
  }
  return null;
}

const isMissingAbility = (outcome: OperationOutcome) => !outcome.ok && outcome.problem.code === 'TOKEN_MISSING_ABILITY';

/** Disabled webhook endpoints and the billing state, the checks of the team. */
async function teamChecks(request: SignedInRequest, facts: AttentionFacts): Promise<void> {
  const [endpoints, billing] = await Promise.all([
    read<ListPage<WebhookEndpoint>>(request, 'listWebhookEndpoints', { is_active: false, limit: 100 }),
    read<BillingOverview>(request, 'getBilling'),
  ]);
  if (endpoints.ok && endpoints.result.data.length > 0) {
    const count = endpoints.result.data.length;
    const more = endpoints.result.next_cursor ? ' or more' : '';
    facts.items.push({
      id: 'attention-webhooks',
      text: `${plural(count, 'webhook endpoint is', 'webhook endpoints are')}${more} disabled: ${count === 1 ? 'its' : 'their'} events are not delivered.`,
      href: '/dashboard/webhooks',
    });
  } else if (isMissingAbility(endpoints))
    facts.skipped.push({ what: 'disabled webhook endpoints', ability: 'webhook-endpoint:manage' });
  if (billing.ok) {
    const item = billingItem(billing.result);
    if (item) facts.items.push(item);
  } else if (isMissingAbility(billing)) facts.skipped.push({ what: 'billing', ability: 'billing:view' });
}

/**
 * Members of `projects` whose last platform call failed, one item per project with any (first page of 100 members
 * each).
 */
async function platformChecks(
  request: SignedInRequest,
  projects: readonly Pick<Project, 'id' | 'name'>[],
  facts: AttentionFacts,
): Promise<void> {
  const outcomes = await Promise.all(
    projects.map((project) => read<ListPage<Member>>(request, 'listMembers', { project_id: project.id, limit: 100 })),
  );
  outcomes.forEach((outcome, index) => {
    const project = projects[index];
    if (!outcome.ok) return;
    const failing = outcome.result.data.filter((member) => member.platform_error !== null).length;
    if (failing === 0) return;
    const more = outcome.result.next_cursor ? ' (in its first 100 members)' : '';
    facts.items.push({
      id: `attention-platform-${project.id}`,
      text: `${project.name}: ${plural(failing, 'member has', 'members have')} a failed platform call${more}; the service retries it.`,
      href: `/dashboard/projects/${project.id}/subscribers`,
    });
  });
  if (outcomes.some(isMissingAbility))
    facts.skipped.push({ what: 'platform errors', ability: 'project-user:view-any' });
}

/** Each project's open findings of its latest access audit (DESIGN D34), linking to its audit page. */
async function auditChecks(
  request: SignedInRequest,
  projects: readonly Pick<Project, 'id' | 'name'>[],
  facts: AttentionFacts,
): Promise<void> {
  const outcomes = await Promise.all(
    projects.map((project) =>
      read<LatestAccessAudit>(request, 'getLatestAccessAudit', { project_id: project.id, limit: 1 }),
    ),
  );
  outcomes.forEach((outcome, index) => {
    const project = projects[index];
    if (!outcome.ok || outcome.result.open_findings === 0) return;
    facts.items.push({
      id: `attention-audit-${project.id}`,
      text: `${project.name}: ${plural(outcome.result.open_findings, 'open finding', 'open findings')} of the access audit (payments, access and the platform differ).`,
      href: `/dashboard/projects/${project.id}/access-audit`,
    });
  });
  if (outcomes.some(isMissingAbility))
    facts.skipped.push({ what: 'access audit findings', ability: 'project-subscription:view-any' });
}

/** Flagged payments listed per project, at most (the rest are counted in one sentence). */
const FLAGGED_PAYMENTS_SHOWN = 5;

/**
 * The item of one flagged payment: the project, the subscriber (their name when the reader may read it), what was
 * paid against what the plan's price asks, linking to the subscriber's page, which lists the subscription.
 */
export function flaggedPaymentItem(
  project: Pick<Project, 'id' | 'name'>,
  payment: Payment,
  subscriberName: string | null,
): AttentionItem | null {
  if (!payment.mismatch) return null;
  const expected = formatMinorUnits(payment.mismatch.expected_amount, payment.mismatch.expected_currency);
  const paid = formatMinorUnits(payment.amount, payment.currency);
  const why = payment.mismatch.reason === 'currency' ? 'in another currency' : 'less than the price';
  return {
    id: `attention-mismatch-${payment.id}`,
    text: `${project.name}: ${subscriberName ?? `subscriber ${payment.subscriber_id}`} paid ${paid} (${why}), the plan asks ${expected}; subscription ${payment.subscription_id} waits until payment ${payment.id} is accepted (POST /v1/payments/${payment.id}/accept) or refunded.`,
    href: subscriberPath(project.id, payment.subscriber_id),
  };
}

/**
 * Succeeded payments of `projects` flagged as not matching their plan's price (the newest 100 payments of each
 * project), at most {@link FLAGGED_PAYMENTS_SHOWN} items per project with their subscribers' names.
 */
async function flaggedPaymentChecks(
  request: SignedInRequest,
  projects: readonly Pick<Project, 'id' | 'name'>[],
  facts: AttentionFacts,
): Promise<void> {
  const outcomes = await Promise.all(
    projects.map((project) =>
      read<ListPage<Payment>>(request, 'listPayments', { project_id: project.id, status: 'succeeded', limit: 100 }),
    ),
  );
  await Promise.all(
    outcomes.map(async (outcome, index) => {
      if (!outcome.ok) return;
      const project = projects[index];
      const flagged = outcome.result.data.filter((payment) => payment.mismatch !== null);
      const shown = flagged.slice(0, FLAGGED_PAYMENTS_SHOWN);
      const subscribers = await Promise.all(
        shown.map((payment) => read<Subscriber>(request, 'getSubscriber', { id: payment.subscriber_id })),
      );
      shown.forEach((payment, position) => {
        const subscriber = subscribers[position];
        const item = flaggedPaymentItem(project, payment, subscriber.ok ? subscriber.result.display_name : null);
        if (item) facts.items.push(item);
      });
      if (flagged.length > shown.length)
        facts.items.push({
          id: `attention-mismatch-more-${project.id}`,
          text: `${project.name}: ${plural(flagged.length - shown.length, 'more payment does', 'more payments do')} not match the plan's price.`,
        });
    }),
  );
  if (outcomes.some(isMissingAbility))
    facts.skipped.push({ what: 'payments that do not match their price', ability: 'project-payment:view-any' });
}

/** The facts of a metrics read: its items, or the check skipped when the reader may not see subscriptions. */
function metricsFacts(metrics: OperationOutcome<Metrics>, pastDueHref: string): AttentionFacts {
  if (metrics.ok) return { items: metricsItems(metrics.result, pastDueHref), skipped: [] };
  return {
    items: [],
    skipped: isMissingAbility(metrics)
      ? [{ what: 'past-due subscriptions and failed payments', ability: 'project-subscription:view-any' }]
      : [],
  };
}

/** Where a project's past-due subscriptions are listed (its subscriptions filtered by status). */
const pastDueOf = (projectId: string) => `/dashboard/projects/${projectId}/subscriptions?status=past_due`;

/**
 * The home page's checks: the team metrics' items (when read; past-due subscriptions lead to the only
 * project's filtered list, else to the projects), disabled endpoints, billing, and platform errors and flagged
 * payments of the first {@link PLATFORM_ERROR_PROJECTS} active projects.
 */
export async function teamAttention(
  request: SignedInRequest,
  projects: readonly Project[],
  metrics: OperationOutcome<Metrics>,
): Promise<AttentionFacts> {
  const facts = metricsFacts(metrics, projects.length === 1 ? pastDueOf(projects[0].id) : '/dashboard/projects');
  const active = projects.filter((project) => project.status === 'active').slice(0, PLATFORM_ERROR_PROJECTS);
  await Promise.all([
    teamChecks(request, facts),
    platformChecks(request, active, facts),
    flaggedPaymentChecks(request, active, facts),
    auditChecks(request, active, facts),
  ]);
  return facts;
}

/**
 * A project page's checks: its metrics' items (past due linking to its filtered subscriptions), its members'
 * platform errors and its flagged payments.
 */
export async function projectAttention(
  request: SignedInRequest,
  project: Project,
  metrics: OperationOutcome<Metrics>,
): Promise<AttentionFacts> {
  const facts = metricsFacts(metrics, pastDueOf(project.id));
  await Promise.all([platformChecks(request, [project], facts), flaggedPaymentChecks(request, [project], facts)]);
  return facts;
}

/**
 * The "Needs attention" card: the items with their links, "Nothing needs your attention" when none, and the checks
 * skipped.
 */
export function NeedsAttention(props: { facts: AttentionFacts }): Html {
  const { items, skipped } = props.facts;
  return (
    <section class="card" aria-labelledby="attention-heading" id="attention">
      <h2 id="attention-heading">Needs attention</h2>
      {items.length === 0 ? (
        <p>Nothing needs your attention.</p>
      ) : (
        <ul class="attention">
          {items.map((item) => (
            <li id={item.id}>{item.href ? <a href={item.href}>{item.text}</a> : item.text}</li>
          ))}
        </ul>
      )}
      {skipped.length > 0 ? (
        <p class="hint">
          Not checked:{' '}
          {skipped.map((check, index) => (
            <>
              {index > 0 ? '; ' : ''}
              {check.what} (needs <code>{check.ability}</code>)
            </>
          ))}
          .
        </p>
      ) : (
        ''
      )}
    </section>
  );
}
