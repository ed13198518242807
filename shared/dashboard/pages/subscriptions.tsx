/** @jsx h */
/** @jsxFrag Fragment */
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { Ability } from '../../catalogues/abilities.js';
import { SUBSCRIPTION_STATUSES } from '../../catalogues/subscription-statuses.js';
import { ruleFor, type SubscriptionTrigger } from '../../domain/subscriptions/state-machine.js';
import type { Plan } from '../../domain/plans/schema.js';
import type { Subscriber } from '../../domain/subscribers/schema.js';
import type { Subscription } from '../../domain/subscriptions/schema.js';
import {
  DataTable,
  Listing,
  Notice,
  ProblemView,
  SubscriptionStatusBadge,
  When,
  type Column,
  type Viewer,
} from '../components.js';
import { ActionForm, ActionLink } from '../form-controls.js';
import { Page } from '../layout.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import type { OperationOutcome } from '../../web/run-operation.js';
import { pageOperations, type ListPage } from './kit.js';
import {
  listSubscriptions,
  cancelSubscription,
  pauseSubscription,
  resumeSubscription,
  suspendSubscription,
  unsuspendSubscription,
} from '../../domain/subscriptions/handlers.js';
import { listSubscribers } from '../../domain/subscribers/handlers.js';
import { listPlans } from '../../domain/plans/handlers.js';
import { ProjectTabs, projectOr, projectProblemPage } from './projects.js';

const { read, write } = pageOperations({
  listSubscriptions,
  cancelSubscription,
  pauseSubscription,
  resumeSubscription,
  suspendSubscription,
  unsuspendSubscription,
  listSubscribers,
  listPlans,
});

/**
 * A project's subscriptions (DESIGN D15, D21): statuses with the catalogue's label and colour, and the actions each
 * status allows.
 */

/**
 * `GET /dashboard/projects/{id}/subscriptions`: statuses with the catalogue's label and colour; cancel, pause, resume.
 */
export async function subscriptionsPage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra?: { notice?: Html; problem?: OperationOutcome },
): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  const status = SUBSCRIPTION_STATUSES.find((known) => known.value === request.query.get('status'))?.value;
  const [subscriptions, subscribers, plans] = await Promise.all([
    read<ListPage<Subscription>>(request, 'listSubscriptions', {
      project_id: params.id,
      limit: 100,
      ...(status ? { status } : {}),
    }),
    read<ListPage<Subscriber>>(request, 'listSubscribers', { project_id: params.id, limit: 100 }),
    read<ListPage<Plan>>(request, 'listPlans', { project_id: params.id, limit: 100 }),
  ]);
  const subscriberNames = new Map(
    subscribers.ok ? subscribers.result.data.map((subscriber) => [subscriber.id, subscriber.display_name]) : [],
  );
  const planNames = new Map(plans.ok ? plans.result.data.map((plan) => [plan.id, plan.name]) : []);
  const problem = extra?.problem && !extra.problem.ok ? extra.problem.problem : null;
  return htmlResult(
    problem ? problem.status : 200,
    <Page title={`${project.result.name}: subscriptions`} viewer={viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={`/dashboard/projects/${params.id}/subscriptions`} />
      {problem ? <ProblemView problem={problem} /> : ''}
      {extra?.notice ?? ''}
      <form method="get" action={`/dashboard/projects/${params.id}/subscriptions`} class="card filters">
        <div>
          <label for="filter-status">Status</label>
          <select id="filter-status" name="status">
            <option value="">Any status</option>
            {SUBSCRIPTION_STATUSES.map((known) => (
              <option value={known.value} selected={known.value === status}>
                {known.label}
              </option>
            ))}
          </select>
        </div>
        <div>
          <button type="submit">Filter</button>
        </div>
      </form>
      <Listing
        outcome={subscriptions}
        what="subscriptions"
        ability="project-subscription:view-any"
        render={(items) => (
          <DataTable
            id="subscriptions"
            rows={items}
            empty={status ? 'No subscriptions with this status.' : 'No subscriptions yet.'}
            columns={[
              {
                label: 'Subscriber',
                cell: (subscription) => (
                  <>
                    <a href={`/dashboard/projects/${params.id}/subscribers/${subscription.subscriber_id}`}>
                      {subscriberNames.get(subscription.subscriber_id) ?? (
                        <span class="mono">{subscription.subscriber_id}</span>
                      )}
                    </a>
                    <div class="mono hint">{subscription.id}</div>
                  </>
                ),
              },
              {
                label: 'Plan',
                cell: (subscription) =>
                  planNames.get(subscription.plan_id) ?? <span class="mono">{subscription.plan_id}</span>,
              },
              ...subscriptionStateColumns({ viewer, projectId: params.id }),
            ]}
          />
        )}
      />
    </Page>,
  );
}

/**
 * The columns every subscriptions table ends with (the project's list, a subscriber's page), for a
 * {@link DataTable} of subscriptions: Status (badge), Period ends, Source and Actions (the actions its status
 * allows, {@link SubscriptionActions}; `returnTo` is where they lead back to).
 */
export function subscriptionStateColumns(props: {
  viewer: Viewer;
  projectId: string;
  returnTo?: string;
}): Column<Subscription>[] {
  return [
    { label: 'Status', cell: (subscription) => <SubscriptionStatusBadge status={subscription.status} /> },
    { label: 'Period ends', cell: (subscription) => <When at={subscription.current_period_end} /> },
    { label: 'Source', cell: (subscription) => subscription.source.replace('_', ' ') },
    {
      label: 'Actions',
      cell: (subscription) => (
        <SubscriptionActions
          viewer={props.viewer}
          projectId={props.projectId}
          subscription={subscription}
          returnTo={props.returnTo}
        />
      ),
    },
  ];
}

/** A button of a subscription's row: the state machine's triggers that allow it, its ability and label (DESIGN D15). */
interface SubscriptionButton {
  triggers: readonly SubscriptionTrigger[];
  ability: Ability;
  label: string;
  /** A form posted to `{subscription}/{path}` with `fields`, or (absent) the change-plan page's link. */
  form?: { path: SubscriptionAction; fields?: Record<string, string> };
}

/** The buttons of a subscription, in the order the dashboard shows them. */
const SUBSCRIPTION_BUTTONS: readonly SubscriptionButton[] = [
  {
    triggers: ['cancel_at_period_end'],
    ability: 'project-subscription:cancel',
    label: 'Cancel at period end',
    form: { path: 'cancel', fields: { at_period_end: 'true' } },
  },
  {
    triggers: ['cancel'],
    ability: 'project-subscription:cancel',
    label: 'Cancel now',
    form: { path: 'cancel', fields: { at_period_end: 'false' } },
  },
  { triggers: ['pause'], ability: 'project-subscription:pause', label: 'Pause', form: { path: 'pause' } },
  { triggers: ['resume'], ability: 'project-subscription:pause', label: 'Resume', form: { path: 'resume' } },
  { triggers: ['upgrade', 'downgrade'], ability: 'project-subscription:update', label: 'Change plan' },
  { triggers: ['suspend'], ability: 'project-subscription:update', label: 'Suspend', form: { path: 'suspend' } },
  { triggers: ['unsuspend'], ability: 'project-subscription:update', label: 'Unsuspend', form: { path: 'unsuspend' } },
];

/**
 * The actions a subscription's status allows (the state machine's table, `ruleFor`, DESIGN D15): cancel at
 * period end, cancel now, pause, resume, change plan (upgrade / downgrade), suspend, unsuspend. `returnTo`
 * (a subscriber's page) is where the action leads back to.
 */
function SubscriptionActions(props: {
  viewer: Viewer;
  projectId: string;
  subscription: Subscription;
  returnTo?: string;
}): Html {
  const { viewer, subscription } = props;
  const base = subscriptionPath(props.projectId, subscription.id);
  const back: Record<string, string> = props.returnTo ? { return_to: props.returnTo } : {};
  const allowed = SUBSCRIPTION_BUTTONS.filter((action) =>
    action.triggers.some((trigger) => ruleFor(subscription.status, trigger) !== undefined),
  );
  return (
    <div class="actions">
      {allowed.map(({ ability, label, form }) =>
        form ? (
          <ActionForm
            viewer={viewer}
            action={`${base}/${form.path}`}
            ability={ability}
            label={label}
            secondary
            fields={{ ...back, ...form.fields }}
          />
        ) : (
          <ActionLink
            viewer={viewer}
            href={`${base}/change-plan${props.returnTo ? `?return_to=${encodeURIComponent(props.returnTo)}` : ''}`}
            ability={ability}
            label={label}
            secondary
          />
        ),
      )}
    </div>
  );
}

/** The dashboard path of a subscription's actions: `/dashboard/projects/{projectId}/subscriptions/{subscriptionId}`. */
export function subscriptionPath(projectId: string, subscriptionId: string): string {
  return `/dashboard/projects/${projectId}/subscriptions/${subscriptionId}`;
}

/**
 * `returnTo` (a form's or query's `return_to`) when it is one of project `projectId`'s subscriber pages
 * (where a subscription action started), else null: never an arbitrary address from the request.
 */
export function subscriberReturnTo(projectId: string, returnTo: string | null | undefined): string | null {
  return returnTo && new RegExp(`^/dashboard/projects/${projectId}/subscribers/[A-Za-z0-9-]{1,80}$`).test(returnTo)
    ? returnTo
    : null;
}

const SUBSCRIPTION_ACTION_OPERATIONS = {
  cancel: 'cancelSubscription',
  pause: 'pauseSubscription',
  resume: 'resumeSubscription',
  suspend: 'suspendSubscription',
  unsuspend: 'unsuspendSubscription',
} as const;

/** A subscription action of the dashboard (`POST .../subscriptions/{subscription}/{action}`). */
export type SubscriptionAction = keyof typeof SUBSCRIPTION_ACTION_OPERATIONS;

/** Every {@link SubscriptionAction}, for the router. */
export const SUBSCRIPTION_ACTIONS = Object.keys(SUBSCRIPTION_ACTION_OPERATIONS) as SubscriptionAction[];

/**
 * `POST .../subscriptions/{subscription}/cancel|pause|resume|suspend|unsuspend`: the subscription
 * operations (cancel takes the form's `at_period_end`, true unless `false`). With a `return_to` of this
 * project's subscriber pages, the answer leads back there; otherwise the subscriptions page shows the
 * outcome (a refusal, e.g. CONFLICT naming the current status, as a readable problem).
 */
export function subscriptionAction(action: SubscriptionAction) {
  const operation = SUBSCRIPTION_ACTION_OPERATIONS[action];
  return async (request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> => {
    const input =
      action === 'cancel'
        ? { id: params.subscription, at_period_end: request.form.get('at_period_end') !== 'false' }
        : { id: params.subscription };
    const outcome = await write<Subscription>(request, operation, input);
    const returnTo = subscriberReturnTo(params.id, request.form.get('return_to'));
    if (outcome.ok && returnTo) {
      return redirectResult(
        `${returnTo}?subscription=${encodeURIComponent(SUBSCRIPTION_STATUSES.find((status) => status.value === outcome.result.status)?.label ?? outcome.result.status)}`,
      );
    }
    if (!outcome.ok) return subscriptionsPage(request, params, { problem: outcome });
    return subscriptionsPage(request, params, {
      notice: (
        <Notice>
          The subscription is now <SubscriptionStatusBadge status={outcome.result.status} />.
        </Notice>
      ),
    });
  };
}
