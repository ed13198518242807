/** @jsx h */
/** @jsxFrag Fragment */
import type { ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { Plan } from '../../domain/plans/schema.js';
import type { Subscriber, SubscriberModeration } from '../../domain/subscribers/schema.js';
import type { Subscription } from '../../domain/subscriptions/schema.js';
import { formatMinorUnits } from '../../schemas/common.js';
import {
  Badge,
  CsrfField,
  DataTable,
  Forbidden,
  IdempotencyField,
  Listing,
  Notice,
  ProblemView,
  When,
  type Viewer,
} from '../components.js';
import { ActionButton } from '../form-controls.js';
import { Page } from '../layout.js';
import { h, type Html } from '../../web/html.js';
import { formText, htmlResult, redirectResult, subscriberPath, type SignedInRequest } from '../http.js';
import { pageOperations, type ListPage } from './kit.js';
import {
  getSubscriber,
  listSubscribers,
  banSubscriber,
  unbanSubscriber,
  kickSubscriber,
} from '../../domain/subscribers/handlers.js';
import { listSubscriptions, createSubscription } from '../../domain/subscriptions/handlers.js';
import { listPlans } from '../../domain/plans/handlers.js';
import { ProjectTabs, projectOr, projectProblemPage } from './projects.js';
import { subscriptionStateColumns } from './subscriptions.js';

const { collect, read, write } = pageOperations({
  getSubscriber,
  listSubscribers,
  banSubscriber,
  unbanSubscriber,
  kickSubscriber,
  listSubscriptions,
  createSubscription,
  listPlans,
});

/**
 * A project's subscribers (DESIGN D15, D17, D21): the list, and one subscriber's details, their subscriptions with the
 * actions their status allows (cancel, pause, resume, change plan, suspend, unsuspend), granting a subscription
 * (`createSubscription`: a creator grant or a free plan), and moderation — ban (suspends their live subscriptions),
 * unban, kick — through the same operations as REST and MCP.
 */

/** A form with an optional reason and one button (ban, kick). */
function ReasonForm(props: {
  viewer: Viewer;
  action: string;
  ability: 'project-user:ban' | 'project-user:kick';
  label: string;
  reasonLabel: string;
  id: string;
  danger?: boolean;
}): Html {
  return (
    <form method="post" action={props.action} class="inline-form">
      <CsrfField viewer={props.viewer} />
      <IdempotencyField />
      <label for={props.id}>{props.reasonLabel}</label>
      <input type="text" id={props.id} name="reason" maxlength="500" />
      <ActionButton
        viewer={props.viewer}
        ability={props.ability}
        label={props.label}
        danger={props.danger}
        secondary={!props.danger}
      />
    </form>
  );
}

/**
 * `GET /dashboard/projects/{id}/subscribers/{subscriber}`: the subscriber, their subscriptions, grant, ban, unban,
 * kick.
 */
export async function subscriberPage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra?: { problem?: ProblemDocument; notice?: Html },
): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  let subscriber = await read<Subscriber>(request, 'getSubscriber', { id: params.subscriber });
  // Without `project-user:view` the list's entry (identifiers only, no contact details) stands in.
  const listedOnly = !subscriber.ok && subscriber.problem.code === 'TOKEN_MISSING_ABILITY';
  if (listedOnly) {
    const found = await collect<Subscriber>(
      request,
      'listSubscribers',
      { project_id: params.id },
      (item) => item.id === params.subscriber,
      { wanted: 1, maxPages: 20 },
    );
    if (found.ok && found.result.items[0]) subscriber = { ok: true, result: found.result.items[0], replayed: false };
  }
  if (!subscriber.ok || subscriber.result.project_id !== params.id) {
    const problem = subscriber.ok ? null : subscriber.problem;
    return htmlResult(
      problem?.status ?? 404,
      <Page title="Subscriber" viewer={viewer} current="/dashboard/projects">
        {problem ? <ProblemView problem={problem} /> : <p>This project has no such subscriber.</p>}
      </Page>,
    );
  }
  const [subscriptions, plans] = await Promise.all([
    read<ListPage<Subscription>>(request, 'listSubscriptions', {
      project_id: params.id,
      subscriber_id: params.subscriber,
      limit: 100,
    }),
    read<ListPage<Plan>>(request, 'listPlans', { project_id: params.id, limit: 100 }),
  ]);
  const planById = new Map(plans.ok ? plans.result.data.map((plan) => [plan.id, plan]) : []);
  const current = subscriber.result;
  const base = subscriberPath(params.id, params.subscriber);
  const notice =
    extra?.notice ??
    (request.query.get('subscription') ? (
      <Notice>The subscription is now {request.query.get('subscription')}.</Notice>
    ) : request.query.get('plan') ? (
      <Notice>The subscription is now on the plan {request.query.get('plan')}.</Notice>
    ) : (
      ''
    ));
  return htmlResult(
    extra?.problem?.status ?? 200,
    <Page title={current.display_name ?? `Subscriber ${current.id}`} viewer={viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={`/dashboard/projects/${params.id}/subscribers`} />
      {notice}
      {extra?.problem ? <ProblemView problem={extra.problem} /> : ''}
      <div class="card">
        <dl class="facts" id="subscriber-facts">
          <dt>Status</dt>
          <dd>
            <Badge color={current.status === 'banned' ? 'red' : 'green'}>{current.status}</Badge>{' '}
            {current.banned_at ? <When at={current.banned_at} /> : ''}
          </dd>
          <dt>E-mail</dt>
          <dd>
            {current.email ?? (
              <span class="hint">
                {listedOnly ? 'needs project-user:view' : current.consent ? 'none' : 'hidden (no consent)'}
              </span>
            )}
          </dd>
          <dt>Phone</dt>
          <dd>
            {current.phone ?? (
              <span class="hint">
                {listedOnly ? 'needs project-user:view' : current.consent ? 'none' : 'hidden (no consent)'}
              </span>
            )}
          </dd>
          <dt>Platform user</dt>
          <dd class="mono">{current.platform_user_id ?? '—'}</dd>
          <dt>Id</dt>
          <dd class="mono">{current.id}</dd>
          <dt>Since</dt>
          <dd>
            <When at={current.created_at} />
          </dd>
        </dl>
      </div>
      <h2>Subscriptions</h2>
      {subscriptions.ok ? (
        <DataTable
          id="subscriber-subscriptions"
          rows={subscriptions.result.data}
          empty="No subscriptions."
          columns={[
            {
              label: 'Plan',
              cell: (subscription) =>
                planById.get(subscription.plan_id)?.name ?? <span class="mono">{subscription.plan_id}</span>,
            },
            ...subscriptionStateColumns({ viewer, projectId: params.id, returnTo: base }),
          ]}
        />
      ) : subscriptions.problem.code === 'TOKEN_MISSING_ABILITY' ? (
        <Forbidden ability="project-subscription:view-any" what="the subscriptions" />
      ) : (
        <ProblemView problem={subscriptions.problem} />
      )}
      <h2>Grant a subscription</h2>
      <form method="post" action={`${base}/grant`} class="stack card">
        <CsrfField viewer={viewer} />
        <IdempotencyField />
        <div>
          <label for="grant-plan">Plan</label>
          <select id="grant-plan" name="plan_id" required>
            {(plans.ok ? plans.result.data : [])
              .filter((plan) => plan.status === 'active')
              .map((plan) => (
                <option value={plan.id}>
                  {plan.name} ({formatMinorUnits(plan.amount, plan.currency)})
                </option>
              ))}
          </select>
          <span class="hint">No payment is taken: a priced plan becomes a creator grant.</span>
        </div>
        <div class="checks">
          <label>
            <input type="checkbox" name="trial" value="true" /> Start with the plan’s free trial
          </label>
        </div>
        <div>
          <ActionButton viewer={viewer} ability="project-subscription:create" label="Grant subscription" />
        </div>
      </form>
      <h2>Moderation</h2>
      <div class="card stack">
        {current.status === 'banned' ? (
          <form method="post" action={`${base}/unban`} class="inline-form">
            <CsrfField viewer={viewer} />
            <IdempotencyField />
            <ActionButton viewer={viewer} ability="project-user:ban" label="Unban" secondary />
            <span class="hint">Suspended subscriptions stay suspended until unsuspended.</span>
          </form>
        ) : (
          <ReasonForm
            viewer={viewer}
            action={`${base}/ban`}
            ability="project-user:ban"
            label="Ban"
            reasonLabel="Reason for the ban (optional)"
            id="ban-reason"
            danger
          />
        )}
        <ReasonForm
          viewer={viewer}
          action={`${base}/kick`}
          ability="project-user:kick"
          label="Kick"
          reasonLabel="Reason for the kick (optional)"
          id="kick-reason"
        />
        <p class="hint">
          Ban removes them from the community and suspends their live subscriptions; kick only removes them from the
          community.
        </p>
      </div>
    </Page>,
  );
}

/** `POST .../subscribers/{subscriber}/ban|unban|kick`: `banSubscriber`, `unbanSubscriber`, `kickSubscriber`. */
export function moderateSubscriber(action: 'ban' | 'unban' | 'kick') {
  const operation = action === 'ban' ? 'banSubscriber' : action === 'unban' ? 'unbanSubscriber' : 'kickSubscriber';
  const done = action === 'ban' ? 'banned' : action === 'unban' ? 'unbanned' : 'kicked';
  return async (request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> => {
    const reason = formText(request.form, 'reason');
    const outcome = await write<SubscriberModeration>(request, operation, {
      id: params.subscriber,
      ...(action !== 'unban' && reason ? { reason } : {}),
    });
    if (!outcome.ok) return subscriberPage(request, params, { problem: outcome.problem });
    const platformError = outcome.result.member?.platform_error?.message ?? null;
    return subscriberPage(request, params, {
      notice: (
        <Notice>
          The subscriber is {done}.{platformError ? ` The platform reported: ${platformError}` : ''}
        </Notice>
      ),
    });
  };
}

/** `POST .../subscribers/{subscriber}/grant`: `createSubscription` for this subscriber. */
export async function grantSubscription(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await write<Subscription>(request, 'createSubscription', {
    project_id: params.id,
    subscriber_id: params.subscriber,
    plan_id: formText(request.form, 'plan_id'),
    ...(request.form.get('trial') === 'true' ? { trial: true } : {}),
  });
  if (!outcome.ok) return subscriberPage(request, params, { problem: outcome.problem });
  return redirectResult(
    `${subscriberPath(params.id, params.subscriber)}?subscription=${encodeURIComponent(outcome.result.status)}`,
  );
}

/** `GET /dashboard/projects/{id}/subscribers`. */
export async function subscribersPage(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  const subscribers = await read<ListPage<Subscriber>>(request, 'listSubscribers', {
    project_id: params.id,
    limit: 100,
  });
  return htmlResult(
    200,
    <Page title={`${project.result.name}: subscribers`} viewer={request.viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={`/dashboard/projects/${params.id}/subscribers`} />
      <Listing
        outcome={subscribers}
        what="subscribers"
        ability="project-user:view-any"
        render={(items) => (
          <DataTable
            rows={items}
            empty="No subscribers yet."
            columns={[
              {
                label: 'Subscriber',
                cell: (subscriber) => (
                  <a href={`/dashboard/projects/${params.id}/subscribers/${subscriber.id}`}>
                    {subscriber.display_name ?? <span class="mono">{subscriber.id}</span>}
                  </a>
                ),
              },
              { label: 'E-mail', cell: (subscriber) => subscriber.email ?? <span class="hint">hidden</span> },
              { label: 'Platform user', cell: (subscriber) => subscriber.platform_user_id ?? '—', class: 'mono' },
              {
                label: 'Status',
                cell: (subscriber) => (
                  <Badge color={subscriber.status === 'banned' ? 'red' : 'green'}>{subscriber.status}</Badge>
                ),
              },
              { label: 'Joined', cell: (subscriber) => <When at={subscriber.created_at} /> },
            ]}
          />
        )}
      />
    </Page>,
  );
}
