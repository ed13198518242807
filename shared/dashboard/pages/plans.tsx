/** @jsx h */
/** @jsxFrag Fragment */
import { ProblemError, toProblem, type ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { Plan } from '../../domain/plans/schema.js';
import { formatMinorUnits } from '../../schemas/common.js';
import { Badge, Notice, ProblemView, When } from '../components.js';
import { ActionForm } from '../form-controls.js';
import { Page } from '../layout.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import { pageOperations } from './kit.js';
import {
  createPlan as createPlanHandler,
  getPlan,
  updatePlan as updatePlanHandler,
  activatePlan,
  deactivatePlan,
  syncPlan,
} from '../../domain/plans/handlers.js';
import { PlanForm, planInputOf, valuesOfForm, valuesOfPlan, type PlanValues } from './plan-form.js';
import { ProjectTabs, projectOr, projectProblemPage } from './projects.js';

const { read, write } = pageOperations({
  createPlan: createPlanHandler,
  getPlan,
  updatePlan: updatePlanHandler,
  activatePlan,
  deactivatePlan,
  syncPlan,
});

/**
 * Plans of a project (DESIGN D16, D21, D22): create a plan, change it, activate or deactivate (archive)
 * it, and sync it to the project's payment provider. The price is typed in the currency's MAJOR unit
 * (`19.90 EUR`, `500 JPY`) and converted exactly to the minor units the operations take by the ISO 4217
 * exponent of `shared/schemas/common.ts` (`toMinorUnits`), never by a table of the dashboard's own.
 */

const plansOf = (projectId: string) => `/dashboard/projects/${projectId}`;

/** `GET /dashboard/projects/{id}/plans/new` (and the form again after a refused create). */
export async function newPlanPage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra?: { problem: ProblemDocument; values: PlanValues },
): Promise<ApiGatewayResult> {
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  return htmlResult(
    extra?.problem.status ?? 200,
    <Page title={`${project.result.name}: new plan`} viewer={request.viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={plansOf(params.id)} />
      {extra ? <ProblemView problem={extra.problem} /> : ''}
      <PlanForm
        viewer={request.viewer}
        action={`${plansOf(params.id)}/plans`}
        values={extra?.values}
        submit="Create plan"
        ability="project-subscription-plan:create"
        cancel={plansOf(params.id)}
      />
    </Page>,
  );
}

/** `POST /dashboard/projects/{id}/plans`: `createPlan` with the price in minor units; then the project's plans. */
export async function createPlan(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const values = valuesOfForm(request.form);
  const parsed = planInputOf(values);
  if (!parsed.ok)
    return newPlanPage(request, params, { problem: toProblem(parsed.error, request.requestId).problem, values });
  const outcome = await write<Plan>(request, 'createPlan', { project_id: params.id, ...parsed.input });
  if (!outcome.ok) return newPlanPage(request, params, { problem: outcome.problem, values });
  return redirectResult(`${plansOf(params.id)}?plan_saved=${outcome.result.id}`);
}

/**
 * `GET /dashboard/projects/{id}/plans/{plan}`: the plan's state (status, sync, price versions), its form, and
 * activate/deactivate/sync.
 */
export async function planPage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra?: { problem?: ProblemDocument; values?: PlanValues; notice?: Html },
): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  const plan = await read<Plan>(request, 'getPlan', { id: params.plan });
  const base = `${plansOf(params.id)}/plans/${params.plan}`;
  if (!plan.ok || plan.result.project_id !== params.id) {
    const problem = plan.ok
      ? toProblem(new ProblemError('NOT_FOUND', `Project ${params.id} has no plan ${params.plan}.`), request.requestId)
          .problem
      : plan.problem;
    return htmlResult(
      problem.status,
      <Page title="Plan" viewer={viewer} current="/dashboard/projects">
        <ProblemView problem={problem} />
      </Page>,
    );
  }
  const current = plan.result;
  return htmlResult(
    extra?.problem?.status ?? 200,
    <Page title={`Plan ${current.name}`} viewer={viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={plansOf(params.id)} />
      {extra?.notice ?? ''}
      {extra?.problem ? <ProblemView problem={extra.problem} /> : ''}
      <div class="card">
        <dl class="facts" id="plan-facts">
          <dt>Price</dt>
          <dd>{formatMinorUnits(current.amount, current.currency)}</dd>
          <dt>Status</dt>
          <dd>
            <Badge color={current.status === 'active' ? 'green' : 'gray'}>{current.status}</Badge>
          </dd>
          <dt>Provider sync</dt>
          <dd>
            {current.sync_status.replace('_', ' ')}
            {current.synced_at ? (
              <>
                {' '}
                (<When at={current.synced_at} />)
              </>
            ) : (
              ''
            )}
            {current.sync_error ? <div class="hint">{current.sync_error}</div> : ''}
          </dd>
          <dt>Price versions</dt>
          <dd>
            {current.price_history
              .map((version) => `v${version.version}: ${formatMinorUnits(version.amount, version.currency)}`)
              .join(' · ')}
          </dd>
        </dl>
      </div>
      <div class="actions">
        {current.status === 'active' ? (
          <ActionForm
            viewer={viewer}
            action={`${base}/deactivate`}
            ability="project-subscription-plan:update"
            label="Deactivate (archive)"
            secondary
          />
        ) : (
          <ActionForm
            viewer={viewer}
            action={`${base}/activate`}
            ability="project-subscription-plan:update"
            label="Activate"
            secondary
          />
        )}
        <ActionForm
          viewer={viewer}
          action={`${base}/sync`}
          ability="project-subscription-plan:sync"
          label="Sync to payment provider"
          secondary
        />
      </div>
      <h2>Change the plan</h2>
      <p class="hint">
        A price change on a plan with subscriptions adds a price version; existing subscriptions keep theirs until
        renewal.
      </p>
      <PlanForm
        viewer={viewer}
        action={base}
        values={extra?.values ?? valuesOfPlan(current)}
        submit="Save plan"
        ability="project-subscription-plan:update"
        cancel={plansOf(params.id)}
      />
    </Page>,
  );
}

/** `POST /dashboard/projects/{id}/plans/{plan}`: `updatePlan` with only the fields that changed. */
export async function updatePlan(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const values = valuesOfForm(request.form);
  const parsed = planInputOf(values);
  if (!parsed.ok)
    return planPage(request, params, { problem: toProblem(parsed.error, request.requestId).problem, values });
  const current = await read<Plan>(request, 'getPlan', { id: params.plan });
  if (!current.ok) return planPage(request, params, { problem: current.problem, values });
  const before = current.result as unknown as Record<string, unknown>;
  const changes = Object.fromEntries(
    Object.entries(parsed.input).filter(([field, value]) => JSON.stringify(before[field]) !== JSON.stringify(value)),
  );
  if (!values.description && current.result.description !== null) changes.description = null;
  if (values.interval !== 'one_time' && current.result.access_days !== null) changes.access_days = null;
  const outcome = await write<Plan>(request, 'updatePlan', { id: params.plan, ...changes });
  if (!outcome.ok) return planPage(request, params, { problem: outcome.problem, values });
  return planPage(request, params, { notice: <Notice>The plan is saved.</Notice> });
}

/**
 * `POST /dashboard/projects/{id}/plans/{plan}/activate|deactivate|sync`: `activatePlan`, `deactivatePlan`, `syncPlan`.
 */
export function planAction(action: 'activate' | 'deactivate' | 'sync') {
  const operation = action === 'activate' ? 'activatePlan' : action === 'deactivate' ? 'deactivatePlan' : 'syncPlan';
  return async (request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> => {
    const outcome = await write<Plan>(request, operation, { id: params.plan });
    if (!outcome.ok) return planPage(request, params, { problem: outcome.problem });
    const said =
      action === 'sync'
        ? `Sync: ${outcome.result.sync_status}${outcome.result.sync_error ? ` (${outcome.result.sync_error})` : ''}.`
        : `The plan is now ${outcome.result.status}.`;
    return planPage(request, params, { notice: <Notice>{said}</Notice> });
  };
}
