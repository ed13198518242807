/** @jsx h */
/** @jsxFrag Fragment */
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { formatMinorUnits } from '../../schemas/common.js';
import type { Metrics } from '../../domain/metrics/schema.js';
import type { Plan } from '../../domain/plans/schema.js';
import type { Project } from '../../domain/projects/schema.js';
import { Badge, DataTable, Listing, Notice, ProblemView, When } from '../components.js';
import { ActionLink } from '../form-controls.js';
import { Page } from '../layout.js';
import { FiguresCard } from '../figures.js';
import { h, type Html } from '../../web/html.js';
import { htmlResult, type SignedInRequest } from '../http.js';
import type { OperationOutcome } from '../../web/run-operation.js';
import { NeedsAttention, projectAttention } from './attention.js';
import { pageOperations, type ListPage } from './kit.js';
import { listProjects, getProject } from '../../domain/projects/handlers.js';
import { listPlans } from '../../domain/plans/handlers.js';
import { getProjectMetrics } from '../../domain/metrics/handlers.js';

const { read } = pageOperations({ listProjects, getProject, listPlans, getProjectMetrics });

/**
 * The projects screens (DESIGN D21): the list with bot and payment provider state (and "New project"), and a project
 * with its plans and tabs.
 */

/** `GET /dashboard/projects`: projects with their bot and payment provider connection state. */
export async function projectsPage(request: SignedInRequest): Promise<ApiGatewayResult> {
  const projects = await read<ListPage<Project>>(request, 'listProjects', { limit: 100 });
  return htmlResult(
    200,
    <Page title="Projects" viewer={request.viewer} current="/dashboard/projects">
      {request.query.get('deleted') ? <Notice>The project is deleted.</Notice> : ''}
      <div class="actions">
        <ActionLink
          viewer={request.viewer}
          href="/dashboard/projects/new"
          ability="project:create"
          label="New project"
        />
      </div>
      <Listing
        outcome={projects}
        what="projects"
        ability="project:view-any"
        render={(items) => (
          <DataTable
            id="projects"
            rows={items}
            empty="No projects yet."
            columns={[
              { label: 'Project', cell: (project) => <a href={`/dashboard/projects/${project.id}`}>{project.name}</a> },
              { label: 'Platform', cell: (project) => project.platform_type },
              {
                label: 'Status',
                cell: (project) => (
                  <Badge color={project.status === 'active' ? 'green' : 'gray'}>{project.status}</Badge>
                ),
              },
              {
                label: 'Bot',
                cell: (project) =>
                  project.bot ? <Badge color="green">connected</Badge> : <Badge color="gray">not connected</Badge>,
              },
              {
                label: 'Payment provider',
                cell: (project) =>
                  project.payment_provider ? (
                    <Badge color="green">{project.payment_provider.provider}</Badge>
                  ) : (
                    <Badge color="gray">none</Badge>
                  ),
              },
              { label: 'Created', cell: (project) => <When at={project.created_at} /> },
            ]}
          />
        )}
      />
    </Page>,
  );
}

/** The project's tabs (plans, subscribers, subscriptions, access codes, settings); `current` marks the open one. */
export function ProjectTabs(props: { project: Project; current: string }): Html {
  const base = `/dashboard/projects/${props.project.id}`;
  const tabs = [
    [base, 'Plans'],
    [`${base}/subscribers`, 'Subscribers'],
    [`${base}/subscriptions`, 'Subscriptions'],
    [`${base}/access-codes`, 'Access codes'],
    [`${base}/messages`, 'Messages'],
    [`${base}/broadcasts`, 'Broadcasts'],
    [`${base}/access-audit`, 'Access audit'],
    [`${base}/settings`, 'Settings'],
  ];
  return (
    <nav aria-label="Project" class="actions">
      {tabs.map(([href, label]) => (
        <a
          href={href}
          aria-current={href === props.current ? 'page' : undefined}
          class={href === props.current ? 'button' : 'button secondary'}
        >
          {label}
        </a>
      ))}
    </nav>
  );
}

/** The project of a project page (`getProject`), or its problem. */
export async function projectOr(request: SignedInRequest, projectId: string): Promise<OperationOutcome<Project>> {
  return read<Project>(request, 'getProject', { project_id: projectId });
}

/** A project page whose project could not be read: the problem, with its status. */
export function projectProblemPage(
  request: SignedInRequest,
  outcome: Extract<OperationOutcome, { ok: false }>,
): ApiGatewayResult {
  return htmlResult(
    outcome.problem.status,
    <Page title="Project" viewer={request.viewer} current="/dashboard/projects">
      <ProblemView problem={outcome.problem} />
    </Page>,
  );
}

/** A plan's billing interval as text: `month`, `3 × month`, `one_time`. */
export function planInterval(plan: Plan): string {
  return `${plan.interval_count > 1 ? `${plan.interval_count} × ` : ''}${plan.interval}`;
}

/**
 * `GET /dashboard/projects/{id}`: the project, what needs attention in it, its figures with their charts, and its
 * plans.
 */
export async function projectPage(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  const [plans, metrics] = await Promise.all([
    read<ListPage<Plan>>(request, 'listPlans', { project_id: params.id, limit: 100 }),
    read<Metrics>(request, 'getProjectMetrics', { project_id: params.id }),
  ]);
  const attention = await projectAttention(request, project.result, metrics);
  return htmlResult(
    200,
    <Page title={project.result.name} viewer={request.viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={`/dashboard/projects/${params.id}`} />
      <p>{project.result.description ?? ''}</p>
      {request.query.get('plan_saved') ? <Notice>The plan is created.</Notice> : ''}
      <NeedsAttention facts={attention} />
      <FiguresCard outcome={metrics} idPrefix="project" heading="Figures" />
      <h2>Plans</h2>
      <div class="actions">
        <ActionLink
          viewer={request.viewer}
          href={`/dashboard/projects/${params.id}/plans/new`}
          ability="project-subscription-plan:create"
          label="New plan"
        />
      </div>
      <Listing
        outcome={plans}
        what="plans"
        ability="project-subscription-plan:view-any"
        render={(items) => (
          <DataTable
            id="plans"
            rows={items}
            empty="No plans yet."
            columns={[
              {
                label: 'Plan',
                cell: (plan) => <a href={`/dashboard/projects/${params.id}/plans/${plan.id}`}>{plan.name}</a>,
              },
              { label: 'Price', cell: (plan) => formatMinorUnits(plan.amount, plan.currency) },
              { label: 'Interval', cell: (plan) => planInterval(plan) },
              { label: 'Trial', cell: (plan) => (plan.trial_days ? `${plan.trial_days} days` : '—') },
              {
                label: 'Status',
                cell: (plan) => <Badge color={plan.status === 'active' ? 'green' : 'gray'}>{plan.status}</Badge>,
              },
              { label: 'Provider sync', cell: (plan) => plan.sync_status },
            ]}
          />
        )}
      />
    </Page>,
  );
}
