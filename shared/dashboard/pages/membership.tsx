/** @jsx h */
/** @jsxFrag Fragment */
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { formatMinorUnits } from '../../schemas/common.js';
import { ABILITIES } from '../../catalogues/abilities.js';
import { SUBSCRIPTION_STATUSES } from '../../catalogues/subscription-statuses.js';
import { ruleFor, type SubscriptionTrigger } from '../../domain/subscriptions/state-machine.js';
import type { ActivityEntry } from '../../domain/activity/schema.js';
import type { AccessCode, GeneratedAccessCodes } from '../../domain/access-codes/schema.js';
import type { Plan } from '../../domain/plans/schema.js';
import type { Project } from '../../domain/projects/schema.js';
import type { Role } from '../../domain/roles/schema.js';
import type { Subscriber } from '../../domain/subscribers/schema.js';
import type { Subscription } from '../../domain/subscriptions/schema.js';
import type { TeamMember, TeamMemberWithInvitation } from '../../domain/team-members/schema.js';
import { ActionForm, ActionLink, Badge, CsrfField, DataTable, Forbidden, IdempotencyField, Notice, Page, ProblemView, SecretOnce, SubscriptionStatusBadge, When, type Column, type Viewer } from '../components.js';
import { Fragment, h, type Html } from '../html.js';
import { formText, formValues, htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import type { OperationOutcome } from '../run-operation.js';
import { read, write, type ListPage } from './kit.js';

/**
 * The membership screens (DESIGN D21): projects (bot and payment provider state), plans, subscribers,
 * subscriptions (status with the catalogue's label and colour; cancel, pause, resume), access codes
 * (generate a batch, download it as CSV, revoke), team members (invite, remove; roles in `roles.tsx`) and
 * the activity log (filter by token, member, operation). Each list is its operation's first page. Plans,
 * subscribers, roles and groups, and billing have their own files beside this one.
 */

/** A list outcome as a table, or the missing ability, or the problem. */
function Listing<T>(props: { outcome: OperationOutcome<ListPage<T>>; what: string; ability: Parameters<typeof Forbidden>[0]['ability']; render: (items: T[]) => Html }): Html {
  const { outcome } = props;
  if (outcome.ok) return props.render(outcome.result.data);
  if (outcome.problem.code === 'TOKEN_MISSING_ABILITY') return <Forbidden ability={props.ability} what={props.what} />;
  return <ProblemView problem={outcome.problem} />;
}

/** `GET /dashboard`: the team at a glance. */
export async function homePage(request: SignedInRequest): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const projects = await read<ListPage<Project>>(request, 'listProjects', { limit: 100 });
  return htmlResult(
    200,
    <Page title={`Welcome, ${viewer.member.name}`} viewer={viewer} current="/dashboard">
      <div class="card">
        <dl class="facts">
          <dt>Team</dt>
          <dd>
            {viewer.team.name} <span class="mono hint">{viewer.team.id}</span>
          </dd>
          <dt>Your abilities</dt>
          <dd>{viewer.principal.abilities.size} of {ABILITIES.length}</dd>
          <dt>Projects</dt>
          <dd>{projects.ok ? projects.result.data.length : '—'}</dd>
        </dl>
      </div>
      <div class="actions">
        <a class="button secondary" href="/dashboard/projects">
          Projects
        </a>
        <a class="button secondary" href="/dashboard/webhooks">
          Webhooks
        </a>
        <a class="button secondary" href="/dashboard/tokens">
          API tokens
        </a>
      </div>
    </Page>,
  );
}

/** `GET /dashboard/projects`: projects with their bot and payment provider connection state. */
export async function projectsPage(request: SignedInRequest): Promise<ApiGatewayResult> {
  const projects = await read<ListPage<Project>>(request, 'listProjects', { limit: 100 });
  return htmlResult(
    200,
    <Page title="Projects" viewer={request.viewer} current="/dashboard/projects">
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
              { label: 'Status', cell: (project) => <Badge color={project.status === 'active' ? 'green' : 'gray'}>{project.status}</Badge> },
              { label: 'Bot', cell: (project) => (project.bot ? <Badge color="green">connected</Badge> : <Badge color="gray">not connected</Badge>) },
              { label: 'Payment provider', cell: (project) => (project.payment_provider ? <Badge color="green">{project.payment_provider.provider}</Badge> : <Badge color="gray">none</Badge>) },
              { label: 'Created', cell: (project) => <When at={project.created_at} /> },
            ]}
          />
        )}
      />
    </Page>,
  );
}

/** The project's tabs (plans, subscribers, subscriptions, access codes); `current` marks the open one. */
export function ProjectTabs(props: { project: Project; current: string }): Html {
  const base = `/dashboard/projects/${props.project.id}`;
  const tabs = [
    [base, 'Plans'],
    [`${base}/subscribers`, 'Subscribers'],
    [`${base}/subscriptions`, 'Subscriptions'],
    [`${base}/access-codes`, 'Access codes'],
  ];
  return (
    <nav aria-label="Project" class="actions">
      {tabs.map(([href, label]) => (
        <a href={href} aria-current={href === props.current ? 'page' : undefined} class={href === props.current ? 'button' : 'button secondary'}>
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
export function projectProblemPage(request: SignedInRequest, outcome: Extract<OperationOutcome, { ok: false }>): ApiGatewayResult {
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

/** `GET /dashboard/projects/{id}`: the project and its plans. */
export async function projectPage(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  const plans = await read<ListPage<Plan>>(request, 'listPlans', { project_id: params.id, limit: 100 });
  return htmlResult(
    200,
    <Page title={project.result.name} viewer={request.viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={`/dashboard/projects/${params.id}`} />
      <p>{project.result.description ?? ''}</p>
      {request.query.get('plan_saved') ? <Notice>The plan is created.</Notice> : ''}
      <h2>Plans</h2>
      <div class="actions">
        <ActionLink viewer={request.viewer} href={`/dashboard/projects/${params.id}/plans/new`} ability="project-subscription-plan:create" label="New plan" />
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
              { label: 'Plan', cell: (plan) => <a href={`/dashboard/projects/${params.id}/plans/${plan.id}`}>{plan.name}</a> },
              { label: 'Price', cell: (plan) => formatMinorUnits(plan.amount, plan.currency) },
              { label: 'Interval', cell: (plan) => planInterval(plan) },
              { label: 'Trial', cell: (plan) => (plan.trial_days ? `${plan.trial_days} days` : '—') },
              { label: 'Status', cell: (plan) => <Badge color={plan.status === 'active' ? 'green' : 'gray'}>{plan.status}</Badge> },
              { label: 'Provider sync', cell: (plan) => plan.sync_status },
            ]}
          />
        )}
      />
    </Page>,
  );
}

/** `GET /dashboard/projects/{id}/subscribers`. */
export async function subscribersPage(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  const subscribers = await read<ListPage<Subscriber>>(request, 'listSubscribers', { project_id: params.id, limit: 100 });
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
                cell: (subscriber) => <a href={`/dashboard/projects/${params.id}/subscribers/${subscriber.id}`}>{subscriber.display_name ?? <span class="mono">{subscriber.id}</span>}</a>,
              },
              { label: 'E-mail', cell: (subscriber) => subscriber.email ?? <span class="hint">hidden</span> },
              { label: 'Platform user', cell: (subscriber) => subscriber.platform_user_id ?? '—', class: 'mono' },
              { label: 'Status', cell: (subscriber) => <Badge color={subscriber.status === 'banned' ? 'red' : 'green'}>{subscriber.status}</Badge> },
              { label: 'Joined', cell: (subscriber) => <When at={subscriber.created_at} /> },
            ]}
          />
        )}
      />
    </Page>,
  );
}

/** `GET /dashboard/projects/{id}/subscriptions`: statuses with the catalogue's label and colour; cancel, pause, resume. */
export async function subscriptionsPage(request: SignedInRequest, params: Record<string, string>, extra?: { notice?: Html; problem?: OperationOutcome }): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  const [subscriptions, subscribers, plans] = await Promise.all([
    read<ListPage<Subscription>>(request, 'listSubscriptions', { project_id: params.id, limit: 100 }),
    read<ListPage<Subscriber>>(request, 'listSubscribers', { project_id: params.id, limit: 100 }),
    read<ListPage<Plan>>(request, 'listPlans', { project_id: params.id, limit: 100 }),
  ]);
  const subscriberNames = new Map(subscribers.ok ? subscribers.result.data.map((subscriber) => [subscriber.id, subscriber.display_name]) : []);
  const planNames = new Map(plans.ok ? plans.result.data.map((plan) => [plan.id, plan.name]) : []);
  const problem = extra?.problem && !extra.problem.ok ? extra.problem.problem : null;
  return htmlResult(
    problem ? problem.status : 200,
    <Page title={`${project.result.name}: subscriptions`} viewer={viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={`/dashboard/projects/${params.id}/subscriptions`} />
      {problem ? <ProblemView problem={problem} /> : ''}
      {extra?.notice ?? ''}
      <Listing
        outcome={subscriptions}
        what="subscriptions"
        ability="project-subscription:view-any"
        render={(items) => (
          <DataTable
            id="subscriptions"
            rows={items}
            empty="No subscriptions yet."
            columns={[
              {
                label: 'Subscriber',
                cell: (subscription) => (
                  <>
                    <a href={`/dashboard/projects/${params.id}/subscribers/${subscription.subscriber_id}`}>{subscriberNames.get(subscription.subscriber_id) ?? <span class="mono">{subscription.subscriber_id}</span>}</a>
                    <div class="mono hint">{subscription.id}</div>
                  </>
                ),
              },
              { label: 'Plan', cell: (subscription) => planNames.get(subscription.plan_id) ?? <span class="mono">{subscription.plan_id}</span> },
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
export function subscriptionStateColumns(props: { viewer: Viewer; projectId: string; returnTo?: string }): Column<Subscription>[] {
  return [
    { label: 'Status', cell: (subscription) => <SubscriptionStatusBadge status={subscription.status} /> },
    { label: 'Period ends', cell: (subscription) => <When at={subscription.current_period_end} /> },
    { label: 'Source', cell: (subscription) => subscription.source.replace('_', ' ') },
    { label: 'Actions', cell: (subscription) => <SubscriptionActions viewer={props.viewer} projectId={props.projectId} subscription={subscription} returnTo={props.returnTo} /> },
  ];
}

/**
 * The actions a subscription's status allows (the state machine's table, `ruleFor`, DESIGN D15): cancel at
 * period end, cancel now, pause, resume, change plan (upgrade / downgrade), suspend, unsuspend. `returnTo`
 * (a subscriber's page) is where the action leads back to.
 */
function SubscriptionActions(props: { viewer: Viewer; projectId: string; subscription: Subscription; returnTo?: string }): Html {
  const { viewer, subscription } = props;
  const base = subscriptionPath(props.projectId, subscription.id);
  const back: Record<string, string> = props.returnTo ? { return_to: props.returnTo } : {};
  const allows = (trigger: SubscriptionTrigger) => ruleFor(subscription.status, trigger) !== undefined;
  return (
    <div class="actions">
      {allows('cancel_at_period_end') ? (
        <ActionForm viewer={viewer} action={`${base}/cancel`} ability="project-subscription:cancel" label="Cancel at period end" secondary fields={{ ...back, at_period_end: 'true' }} />
      ) : (
        ''
      )}
      {allows('cancel') ? <ActionForm viewer={viewer} action={`${base}/cancel`} ability="project-subscription:cancel" label="Cancel now" secondary fields={{ ...back, at_period_end: 'false' }} /> : ''}
      {allows('pause') ? <ActionForm viewer={viewer} action={`${base}/pause`} ability="project-subscription:pause" label="Pause" secondary fields={back} /> : ''}
      {allows('resume') ? <ActionForm viewer={viewer} action={`${base}/resume`} ability="project-subscription:pause" label="Resume" secondary fields={back} /> : ''}
      {allows('upgrade') || allows('downgrade') ? (
        <ActionLink
          viewer={viewer}
          href={`${base}/change-plan${props.returnTo ? `?return_to=${encodeURIComponent(props.returnTo)}` : ''}`}
          ability="project-subscription:update"
          label="Change plan"
          secondary
        />
      ) : (
        ''
      )}
      {allows('suspend') ? <ActionForm viewer={viewer} action={`${base}/suspend`} ability="project-subscription:update" label="Suspend" secondary fields={back} /> : ''}
      {allows('unsuspend') ? <ActionForm viewer={viewer} action={`${base}/unsuspend`} ability="project-subscription:update" label="Unsuspend" secondary fields={back} /> : ''}
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
  return returnTo && new RegExp(`^/dashboard/projects/${projectId}/subscribers/[A-Za-z0-9-]{1,80}$`).test(returnTo) ? returnTo : null;
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
    const input = action === 'cancel' ? { id: params.subscription, at_period_end: request.form.get('at_period_end') !== 'false' } : { id: params.subscription };
    const outcome = await write<Subscription>(request, operation, input);
    const returnTo = subscriberReturnTo(params.id, request.form.get('return_to'));
    if (outcome.ok && returnTo) {
      return redirectResult(`${returnTo}?subscription=${encodeURIComponent(SUBSCRIPTION_STATUSES.find((status) => status.value === outcome.result.status)?.label ?? outcome.result.status)}`);
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

function GenerateCodesForm(props: { viewer: Viewer; projectId: string; plans: Plan[] }): Html {
  return (
    <form method="post" action={`/dashboard/projects/${props.projectId}/access-codes`} class="stack card">
      <CsrfField viewer={props.viewer} />
      <IdempotencyField />
      <div>
        <label for="codes-plan">Plan</label>
        <select id="codes-plan" name="plan_id" required>
          {props.plans.map((plan) => (
            <option value={plan.id}>{plan.name}</option>
          ))}
        </select>
      </div>
      <div>
        <label for="codes-count">How many codes</label>
        <input type="number" id="codes-count" name="count" min="1" max="1000" value="10" required />
      </div>
      <div>
        <label for="codes-prefix">Prefix (optional)</label>
        <input type="text" id="codes-prefix" name="prefix" maxlength="12" pattern="[A-Za-z0-9]{1,12}" />
      </div>
      <div>
        <button type="submit" disabled={!props.viewer.principal.abilities.has('project-access-code:create')}>
          {props.viewer.principal.abilities.has('project-access-code:create') ? 'Generate batch' : 'Generate batch — needs project-access-code:create'}
        </button>
      </div>
    </form>
  );
}

/** `GET /dashboard/projects/{id}/access-codes`: the codes (suffixes only), revoke, and the batch generator. */
export async function accessCodesPage(request: SignedInRequest, params: Record<string, string>, extra?: { top?: Html; status?: number }): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  const [codes, plans] = await Promise.all([
    read<ListPage<AccessCode>>(request, 'listAccessCodes', { project_id: params.id, limit: 100 }),
    read<ListPage<Plan>>(request, 'listPlans', { project_id: params.id, limit: 100 }),
  ]);
  return htmlResult(
    extra?.status ?? 200,
    <Page title={`${project.result.name}: access codes`} viewer={viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={`/dashboard/projects/${params.id}/access-codes`} />
      {extra?.top ?? ''}
      <h2>Generate a batch</h2>
      {plans.ok ? <GenerateCodesForm viewer={viewer} projectId={params.id} plans={plans.result.data} /> : <ProblemView problem={plans.problem} />}
      <h2>Codes</h2>
      <Listing
        outcome={codes}
        what="access codes"
        ability="project-access-code:view-any"
        render={(items) => (
          <DataTable
            rows={items}
            empty="No codes yet."
            columns={[
              { label: 'Code ends with', cell: (code) => `…${code.code_suffix}`, class: 'mono' },
              { label: 'Status', cell: (code) => <Badge color={code.status === 'active' ? 'green' : 'gray'}>{code.status}</Badge> },
              {
                label: 'Redeemed',
                cell: (code) => (
                  <>
                    {code.times_redeemed}
                    {code.max_redemptions === null ? '' : ` / ${code.max_redemptions}`}
                  </>
                ),
              },
              { label: 'Expires', cell: (code) => <When at={code.expires_at} /> },
              {
                label: '',
                cell: (code) =>
                  code.status === 'active' ? (
                    <ActionForm viewer={viewer} action={`/dashboard/projects/${params.id}/access-codes/${code.id}/revoke`} ability="project-access-code:revoke" label="Revoke" secondary />
                  ) : (
                    ''
                  ),
              },
            ]}
          />
        )}
      />
    </Page>,
  );
}

/** `POST /dashboard/projects/{id}/access-codes`: `generateAccessCodes`; the codes are shown once, with a CSV download. */
export async function generateCodes(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const prefix = formText(request.form, 'prefix');
  const outcome = await write<GeneratedAccessCodes>(request, 'generateAccessCodes', {
    project_id: params.id,
    plan_id: formText(request.form, 'plan_id'),
    count: Number(formText(request.form, 'count') ?? '0'),
    ...(prefix ? { prefix } : {}),
  });
  if (!outcome.ok) return accessCodesPage(request, params, { top: <ProblemView problem={outcome.problem} />, status: outcome.problem.status });
  const csv = ['code,id', ...outcome.result.codes.map((code) => `${code.code},${code.id}`)].join('\r\n');
  return accessCodesPage(request, params, {
    status: 201,
    top: (
      <div class="card">
        <p>
          <strong>{outcome.result.codes.length} codes</strong> generated — shown only now. Download them before you leave this page.
        </p>
        <p>
          <a class="button" download={`access-codes-${outcome.result.batch.id}.csv`} href={`data:text/csv;charset=utf-8,${encodeURIComponent(csv)}`}>
            Download CSV
          </a>
        </p>
        <SecretOnce id="generated-codes" label="Codes" value={outcome.result.codes.map((code) => code.code).join(' ')} />
      </div>
    ),
  });
}

/** `POST .../access-codes/{code}/revoke`: `revokeAccessCode`. */
export async function revokeCode(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const outcome = await write(request, 'revokeAccessCode', { id: params.code });
  if (!outcome.ok) return accessCodesPage(request, params, { top: <ProblemView problem={outcome.problem} />, status: outcome.problem.status });
  return accessCodesPage(request, params, { top: <Notice>The code was revoked.</Notice> });
}

/** `GET /dashboard/team-members`: members with status and roles; invite; remove. */
export async function teamMembersPage(request: SignedInRequest, _params: Record<string, string> = {}, extra?: { top?: Html; status?: number }): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const [members, roles] = await Promise.all([read<ListPage<TeamMember>>(request, 'listTeamMembers', { limit: 100 }), read<ListPage<Role>>(request, 'listRoles', { limit: 100 })]);
  const roleNames = new Map(roles.ok ? roles.result.data.map((role) => [role.id, role.name]) : []);
  return htmlResult(
    extra?.status ?? 200,
    <Page title="Team members" viewer={viewer} current="/dashboard/team-members">
      {extra?.top ?? ''}
      <Listing
        outcome={members}
        what="team members"
        ability="team-member:view-any"
        render={(items) => (
          <DataTable
            rows={items}
            empty="No team members."
            columns={[
              {
                label: 'Member',
                cell: (member) => (
                  <>
                    {member.name} <div class="hint">{member.email}</div>
                  </>
                ),
              },
              { label: 'Status', cell: (member) => <Badge color={member.status === 'active' ? 'green' : member.status === 'invited' ? 'yellow' : 'gray'}>{member.status}</Badge> },
              {
                label: 'Roles',
                cell: (member) => (
                  <>
                    {member.role_ids.map((id) => roleNames.get(id) ?? id).join(', ') || '—'}
                    {member.status !== 'removed' ? (
                      <div>
                        <a href={`/dashboard/team-members/${member.id}`} aria-label={`Change the roles of ${member.name}`}>
                          Change roles
                        </a>
                      </div>
                    ) : (
                      ''
                    )}
                  </>
                ),
              },
              { label: 'Joined', cell: (member) => <When at={member.joined_at} /> },
              {
                label: '',
                cell: (member) =>
                  member.status !== 'removed' && member.id !== viewer.member.id ? (
                    <ActionForm viewer={viewer} action={`/dashboard/team-members/${member.id}/remove`} ability="team-member:remove" label={`Remove ${member.name}`} danger />
                  ) : (
                    ''
                  ),
              },
            ]}
          />
        )}
      />
      <h2>Invite a member</h2>
      <form method="post" action="/dashboard/team-members" class="stack card">
        <CsrfField viewer={viewer} />
        <IdempotencyField />
        <div>
          <label for="invite-email">E-mail</label>
          <input type="email" id="invite-email" name="email" required />
        </div>
        <div>
          <label for="invite-name">Name</label>
          <input type="text" id="invite-name" name="name" required maxlength="100" />
        </div>
        <div>
          <label for="invite-role">Role</label>
          <select id="invite-role" name="role_ids">
            {(roles.ok ? roles.result.data : []).map((role) => (
              <option value={role.id}>{role.name}</option>
            ))}
          </select>
        </div>
        <div>
          <button type="submit" disabled={!viewer.principal.abilities.has('team-member:invite')}>
            {viewer.principal.abilities.has('team-member:invite') ? 'Send invitation' : 'Send invitation — needs team-member:invite'}
          </button>
        </div>
      </form>
    </Page>,
  );
}

/** `POST /dashboard/team-members`: `inviteTeamMember`; the invitation link is shown once. */
export async function inviteMember(request: SignedInRequest): Promise<ApiGatewayResult> {
  const outcome = await write<TeamMemberWithInvitation>(request, 'inviteTeamMember', {
    email: formText(request.form, 'email'),
    name: formText(request.form, 'name'),
    role_ids: formValues(request.form, 'role_ids'),
  });
  if (!outcome.ok) return teamMembersPage(request, {}, { top: <ProblemView problem={outcome.problem} />, status: outcome.problem.status });
  const link = `${request.relyingParty.origin}${outcome.result.invitation_link}`;
  return teamMembersPage(request, {}, {
    status: 201,
    top: (
      <>
        <Notice>{outcome.result.name} is invited. Send them this link; it works for 7 days and signs them in once.</Notice>
        <SecretOnce id="invitation-link" label="Invitation link" value={link} />
      </>
    ),
  });
}

/** `POST /dashboard/team-members/{id}/remove`: `removeTeamMember`. */
export async function removeMember(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const outcome = await write<TeamMember>(request, 'removeTeamMember', { id: params.id });
  if (!outcome.ok) return teamMembersPage(request, {}, { top: <ProblemView problem={outcome.problem} />, status: outcome.problem.status });
  return redirectResult('/dashboard/team-members');
}

/** `GET /dashboard/activity`: the activity log, filtered by token, member or operation. */
export async function activityPage(request: SignedInRequest): Promise<ApiGatewayResult> {
  const { query } = request;
  const filters = {
    ...(query.get('token_id') ? { token_id: query.get('token_id') } : {}),
    ...(query.get('member_id') ? { member_id: query.get('member_id') } : {}),
    ...(query.get('operation') ? { operation: query.get('operation') } : {}),
  };
  const entries = await read<ListPage<ActivityEntry>>(request, 'listActivity', { limit: 50, ...filters });
  return htmlResult(
    entries.ok || entries.problem.code === 'TOKEN_MISSING_ABILITY' ? 200 : entries.problem.status,
    <Page title="Activity" viewer={request.viewer} current="/dashboard/activity">
      <form method="get" action="/dashboard/activity" class="card filters" hx-get="/dashboard/activity" hx-target="#activity-result" hx-select="#activity-result" hx-swap="outerHTML" hx-push-url="true">
        <div>
          <label for="filter-token">Token id</label>
          <input type="text" id="filter-token" name="token_id" value={query.get('token_id') ?? ''} />
        </div>
        <div>
          <label for="filter-member">Team member id</label>
          <input type="text" id="filter-member" name="member_id" value={query.get('member_id') ?? ''} />
        </div>
        <div>
          <label for="filter-operation">Operation</label>
          <input type="text" id="filter-operation" name="operation" value={query.get('operation') ?? ''} />
        </div>
        <div>
          <button type="submit">Filter</button>
        </div>
      </form>
      <div id="activity-result">
        <Listing
          outcome={entries}
          what="the activity log"
          ability="activity:read"
          render={(items) => (
            <DataTable
              id="activity"
              rows={items}
              empty="No entries match."
              columns={[
                { label: 'When', cell: (entry) => <When at={entry.occurred_at} /> },
                { label: 'Who', cell: (entry) => (entry.member_id ? `member ${entry.member_id}` : entry.token_id ? `token ${entry.token_id}` : '—'), class: 'mono' },
                { label: 'Surface', cell: (entry) => entry.surface },
                { label: 'Operation', cell: (entry) => <code>{entry.operation}</code> },
                { label: 'Outcome', cell: (entry) => <Badge color={entry.outcome === 'ok' ? 'green' : 'red'}>{entry.outcome}</Badge> },
              ]}
            />
          )}
        />
      </div>
    </Page>,
  );
}
