/** @jsx h */
/** @jsxFrag Fragment */
import type { ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { Plan } from '../../domain/plans/schema.js';
import { planChangeTrigger } from '../../domain/subscriptions/transition-decisions.js';
import type { Subscription } from '../../domain/subscriptions/schema.js';
import { ruleFor } from '../../domain/subscriptions/state-machine.js';
import { formatMinorUnits } from '../../schemas/common.js';
import { Badge, CsrfField, IdempotencyField, Notice, ProblemView, SubscriptionStatusBadge } from '../components.js';
import { ActionButton } from '../form-controls.js';
import { Page } from '../layout.js';
import { h } from '../../web/html.js';
import { formText, htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import { pageOperations, type ListPage } from './kit.js';
import { getSubscription, changeSubscriptionPlan } from '../../domain/subscriptions/handlers.js';
import { listPlans, getPlan } from '../../domain/plans/handlers.js';
import { ProjectTabs, planInterval, projectOr, projectProblemPage } from './projects.js';
import { subscriberReturnTo, subscriptionPath, subscriptionsPage } from './subscriptions.js';

const { read, write } = pageOperations({ getSubscription, changeSubscriptionPlan, listPlans, getPlan });

/**
 * Changing a subscription's plan from the dashboard (DESIGN D15, D21): the project's other active plans in
 * the subscription's currency, each with its price and whether moving to it is an upgrade or a downgrade
 * (`planChangeTrigger`: price per day), offered only where the state machine allows `upgrade` /
 * `downgrade`. The change runs `changeSubscriptionPlan` (`POST /v1/subscriptions/{id}/change-plan`) with
 * the member as principal; a refusal is shown as its problem on the same page.
 */

/** A plan's price and interval as text: `9.00 EUR / month`. */
function priceText(plan: Plan): string {
  return `${formatMinorUnits(plan.amount, plan.currency)} / ${planInterval(plan)}`;
}

/**
 * `GET /dashboard/projects/{id}/subscriptions/{subscription}/change-plan` (query `return_to`: a subscriber
 * page of the project): the subscription's plan and the plans it may move to. `extra.problem` is a refused
 * change, shown above the form with its status.
 */
export async function changePlanPage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra?: { problem?: ProblemDocument },
): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  const [subscription, plans] = await Promise.all([
    read<Subscription>(request, 'getSubscription', { id: params.subscription }),
    read<ListPage<Plan>>(request, 'listPlans', { project_id: params.id, limit: 100 }),
  ]);
  const returnTo = subscriberReturnTo(params.id, request.form.get('return_to') ?? request.query.get('return_to'));
  const back = returnTo ?? `/dashboard/projects/${params.id}/subscriptions`;
  const title = 'Change plan';
  if (!subscription.ok || subscription.result.project_id !== params.id || !plans.ok) {
    const problem = !subscription.ok ? subscription.problem : !plans.ok ? plans.problem : null;
    return htmlResult(
      problem?.status ?? 404,
      <Page title={title} viewer={viewer} current="/dashboard/projects">
        {problem ? <ProblemView problem={problem} /> : <p>This project has no such subscription.</p>}
      </Page>,
    );
  }
  const current = subscription.result;
  const currentPlan = plans.result.data.find((plan) => plan.id === current.plan_id);
  const others = plans.result.data.filter((plan) => plan.status === 'active' && plan.id !== current.plan_id);
  const offered = currentPlan ? others.filter((plan) => plan.currency === currentPlan.currency) : [];
  const otherCurrencies = others.length - offered.length;
  const allowed =
    ruleFor(current.status, 'upgrade') !== undefined || ruleFor(current.status, 'downgrade') !== undefined;
  return htmlResult(
    extra?.problem?.status ?? 200,
    <Page title={title} viewer={viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={`/dashboard/projects/${params.id}/subscriptions`} />
      {extra?.problem ? <ProblemView problem={extra.problem} /> : ''}
      <div class="card">
        <dl class="facts" id="subscription-facts">
          <dt>Subscription</dt>
          <dd class="mono">{current.id}</dd>
          <dt>Status</dt>
          <dd>
            <SubscriptionStatusBadge status={current.status} />
          </dd>
          <dt>Current plan</dt>
          <dd id="current-plan">
            {currentPlan ? (
              `${currentPlan.name} (${priceText(currentPlan)})`
            ) : (
              <span class="mono">{current.plan_id}</span>
            )}
          </dd>
        </dl>
      </div>
      {!allowed ? (
        <p id="change-plan-not-allowed">
          A subscription that is <SubscriptionStatusBadge status={current.status} /> cannot change plan (DESIGN D15
          allows it while trialing, active, cancelling at period end or past due).
        </p>
      ) : offered.length === 0 ? (
        <p class="hint" id="no-other-plans">
          There is no other active plan {currentPlan ? `in ${currentPlan.currency}` : ''} to move to. Create or activate
          one on the <a href={`/dashboard/projects/${params.id}`}>project’s plans</a>.
        </p>
      ) : (
        <form method="post" action={`${subscriptionPath(params.id, current.id)}/change-plan`} class="stack card">
          <CsrfField viewer={viewer} />
          <IdempotencyField />
          {returnTo ? <input type="hidden" name="return_to" value={returnTo} /> : ''}
          <fieldset>
            <legend>New plan</legend>
            <p class="hint">
              Status and current period stay as they are; the new plan’s price applies from the next renewal.
            </p>
            <div class="checks" id="plan-choices">
              {offered.map((plan, index) => {
                const trigger = planChangeTrigger(currentPlan!, plan);
                return (
                  <label>
                    <input type="radio" name="plan_id" value={plan.id} required checked={index === 0} />
                    <span>
                      {plan.name} <span class="hint">{priceText(plan)}</span>{' '}
                      <Badge color={trigger === 'upgrade' ? 'blue' : 'yellow'}>
                        {trigger === 'upgrade' ? 'Upgrade' : 'Downgrade'}
                      </Badge>
                    </span>
                  </label>
                );
              })}
            </div>
          </fieldset>
          {otherCurrencies > 0 ? (
            <p class="hint">
              {otherCurrencies === 1 ? 'One plan' : `${otherCurrencies} plans`} in another currency{' '}
              {otherCurrencies === 1 ? 'is' : 'are'} not offered: a plan change keeps the currency.
            </p>
          ) : (
            ''
          )}
          <div class="actions">
            <ActionButton viewer={viewer} ability="project-subscription:update" label="Change plan" />
            <a href={back}>Back</a>
          </div>
        </form>
      )}
    </Page>,
  );
}

/**
 * `POST .../subscriptions/{subscription}/change-plan` (form: `plan_id`, optional `return_to`):
 * `changeSubscriptionPlan`. Leads back to the subscriber page it started from (or shows the project's
 * subscriptions) with the new plan named; a refusal (CONFLICT, VALIDATION_FAILED, NOT_FOUND) is shown on
 * the change-plan page.
 */
export async function changePlan(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const outcome = await write<Subscription>(request, 'changeSubscriptionPlan', {
    id: params.subscription,
    plan_id: formText(request.form, 'plan_id'),
  });
  if (!outcome.ok) return changePlanPage(request, params, { problem: outcome.problem });
  const plan = await read<Plan>(request, 'getPlan', { id: outcome.result.plan_id });
  const planName = plan.ok ? plan.result.name : outcome.result.plan_id;
  const returnTo = subscriberReturnTo(params.id, request.form.get('return_to'));
  if (returnTo) return redirectResult(`${returnTo}?plan=${encodeURIComponent(planName)}`);
  return subscriptionsPage(request, params, {
    notice: <Notice>The subscription is now on the plan {planName}.</Notice>,
  });
}
