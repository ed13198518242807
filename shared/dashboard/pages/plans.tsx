/** @jsx h */
/** @jsxFrag Fragment */
import { ProblemError, toProblem, type ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import {
  DEFAULT_GRACE_DAYS,
  MAX_ACCESS_DAYS,
  MAX_GRACE_DAYS,
  MAX_TRIAL_DAYS,
  PLAN_INTERVALS,
  type Plan,
} from '../../domain/plans/schema.js';
import { currencyExponent, formatMinorUnits, minorToMajor, toMinorUnits } from '../../schemas/common.js';
import { Badge, CsrfField, IdempotencyField, Notice, ProblemView, When, type Viewer } from '../components.js';
import { ActionButton, ActionForm } from '../form-controls.js';
import { Page } from '../layout.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { formText, htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import { read, write } from './kit.js';
import { ProjectTabs, projectOr, projectProblemPage } from './projects.js';

/**
 * Plans of a project (DESIGN D16, D21, D22): create a plan, change it, activate or deactivate (archive)
 * it, and sync it to the project's payment provider. The price is typed in the currency's MAJOR unit
 * (`19.90 EUR`, `500 JPY`) and converted exactly to the minor units the operations take by the ISO 4217
 * exponent of `shared/schemas/common.ts` (`toMinorUnits`), never by a table of the dashboard's own.
 */

const plansOf = (projectId: string) => `/dashboard/projects/${projectId}`;

/** What the plan form holds: the text as typed (amount in the major unit). */
interface PlanValues {
  name?: string;
  description?: string;
  amount?: string;
  currency?: string;
  interval?: string;
  interval_count?: string;
  access_days?: string;
  trial_days?: string;
  grace_days?: string;
}

function valuesOfPlan(plan: Plan): PlanValues {
  return {
    name: plan.name,
    description: plan.description ?? '',
    amount: minorToMajor(plan.amount, plan.currency),
    currency: plan.currency,
    interval: plan.interval,
    interval_count: String(plan.interval_count),
    access_days: plan.access_days === null ? '' : String(plan.access_days),
    trial_days: String(plan.trial_days),
    grace_days: String(plan.grace_days),
  };
}

function valuesOfForm(form: URLSearchParams): PlanValues {
  const field = (name: keyof PlanValues) => formText(form, name);
  return {
    name: field('name'),
    description: field('description'),
    amount: field('amount'),
    currency: field('currency')?.toUpperCase(),
    interval: field('interval'),
    interval_count: field('interval_count'),
    access_days: field('access_days'),
    trial_days: field('trial_days'),
    grace_days: field('grace_days'),
  };
}

/**
 * The operation's fields from the form: the amount converted to minor units of the currency, numbers as
 * numbers, empty fields left out. A price that is not an amount of the currency is VALIDATION_FAILED
 * (field `form.amount`) before anything runs.
 */
function planInputOf(
  values: PlanValues,
): { ok: true; input: Record<string, unknown> } | { ok: false; error: ProblemError } {
  const currency = values.currency ?? '';
  const amount = values.amount === undefined ? null : toMinorUnits(values.amount, currency || 'USD');
  if (amount === null) {
    const exponent = currencyExponent(currency || 'USD');
    return {
      ok: false,
      error: new ProblemError('VALIDATION_FAILED', 'The price is not an amount of the currency.', {
        errors: [
          {
            path: 'form.amount',
            message: `${exponent === 0 ? `must be a whole number of ${currency} (it has no minor unit)` : `must be a number in ${currency || 'the currency'} with at most ${exponent} decimals`}, e.g. ${minorToMajor(990 * 10 ** Math.max(0, exponent - 2), currency || 'USD')}`,
          },
        ],
      }),
    };
  }
  const number = (text: string | undefined) => (text === undefined ? undefined : Number(text));
  return {
    ok: true,
    input: {
      name: values.name,
      ...(values.description ? { description: values.description } : {}),
      amount,
      currency,
      interval: values.interval,
      ...(values.interval_count ? { interval_count: number(values.interval_count) } : {}),
      ...(values.interval === 'one_time' && values.access_days ? { access_days: number(values.access_days) } : {}),
      ...(values.interval !== 'one_time' && values.trial_days ? { trial_days: number(values.trial_days) } : {}),
      ...(values.grace_days ? { grace_days: number(values.grace_days) } : {}),
    },
  };
}

/** The plan form (create and edit). */
function PlanForm(props: {
  viewer: Viewer;
  action: string;
  values?: PlanValues;
  submit: string;
  ability: 'project-subscription-plan:create' | 'project-subscription-plan:update';
  cancel: string;
}): Html {
  const values = props.values ?? {};
  return (
    <form method="post" action={props.action} class="stack" id="plan-form">
      <CsrfField viewer={props.viewer} />
      <IdempotencyField />
      <div>
        <label for="plan-name">Name</label>
        <input type="text" id="plan-name" name="name" required maxlength="100" value={values.name ?? ''} />
      </div>
      <div>
        <label for="plan-description">Description (optional)</label>
        <input type="text" id="plan-description" name="description" maxlength="1000" value={values.description ?? ''} />
      </div>
      <div class="row">
        <div>
          <label for="plan-amount">Price</label>
          <input
            type="text"
            id="plan-amount"
            name="amount"
            required
            inputmode="decimal"
            pattern="[0-9]+([.,][0-9]+)?"
            placeholder="19.90"
            value={values.amount ?? ''}
          />
          <span class="hint">In the currency’s main unit, e.g. 19.90 EUR or 500 JPY.</span>
        </div>
        <div>
          <label for="plan-currency">Currency</label>
          <input
            type="text"
            id="plan-currency"
            name="currency"
            required
            maxlength="3"
            pattern="[A-Za-z]{3}"
            placeholder="EUR"
            value={values.currency ?? 'EUR'}
          />
          <span class="hint">ISO 4217 code.</span>
        </div>
      </div>
      <div class="row">
        <div>
          <label for="plan-interval">Billing interval</label>
          <select id="plan-interval" name="interval">
            {PLAN_INTERVALS.map((interval) => (
              <option value={interval} selected={(values.interval ?? 'month') === interval}>
                {interval === 'one_time' ? 'one time (a pass)' : interval}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="plan-interval-count">Intervals per period</label>
          <input
            type="number"
            id="plan-interval-count"
            name="interval_count"
            min="1"
            max="52"
            value={values.interval_count ?? '1'}
          />
        </div>
      </div>
      <div class="row">
        <div>
          <label for="plan-access-days">Access days (one-time passes)</label>
          <input
            type="number"
            id="plan-access-days"
            name="access_days"
            min="1"
            max={String(MAX_ACCESS_DAYS)}
            value={values.access_days ?? ''}
          />
        </div>
        <div>
          <label for="plan-trial-days">Free trial days (recurring plans)</label>
          <input
            type="number"
            id="plan-trial-days"
            name="trial_days"
            min="0"
            max={String(MAX_TRIAL_DAYS)}
            value={values.trial_days ?? '0'}
          />
        </div>
      </div>
      <div>
        <label for="plan-grace-days">Grace period (days)</label>
        <input
          type="number"
          id="plan-grace-days"
          name="grace_days"
          min="0"
          max={String(MAX_GRACE_DAYS)}
          aria-describedby="plan-grace-days-hint"
          value={values.grace_days ?? String(DEFAULT_GRACE_DAYS)}
        />
        <span class="hint" id="plan-grace-days-hint">
          How long a member whose renewal failed keeps access while the payment is retried.
        </span>
      </div>
      <div class="actions">
        <ActionButton viewer={props.viewer} ability={props.ability} label={props.submit} />
        <a href={props.cancel}>Cancel</a>
      </div>
    </form>
  );
}

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
