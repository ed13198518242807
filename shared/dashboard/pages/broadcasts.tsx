/** @jsx h */
import type { ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { SUBSCRIPTION_STATUSES } from '../../catalogues/subscription-statuses.js';
import type { Broadcast } from '../../domain/messages/broadcast-schema.js';
import { MAX_BODY_LENGTH, MAX_SUBJECT_LENGTH } from '../../domain/message-templates/schema.js';
import type { Plan } from '../../domain/plans/schema.js';
import {
  Badge,
  CsrfField,
  DataTable,
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
import { formText, formValues, htmlResult, type SignedInRequest } from '../http.js';
import type { OperationOutcome } from '../../web/run-operation.js';
import { pageOperations, type ListPage } from './kit.js';
import { listPlans } from '../../domain/plans/handlers.js';
import { listBroadcasts, createBroadcast } from '../../domain/messages/handlers.js';
import { ProjectTabs, projectOr, projectProblemPage } from './projects.js';
import { DeliveryField } from './message-form.js';

const { read, write } = pageOperations({ listPlans, listBroadcasts, createBroadcast });

/**
 * A project's broadcasts (DESIGN D21, D32): compose one (audience by plans and statuses, subject, text, delivery) and
 * send it through `createBroadcast`; the list of broadcasts with their counts (`listBroadcasts`) refreshes itself with
 * htmx while one is running.
 */

const broadcastsOf = (projectId: string) => `/dashboard/projects/${projectId}/broadcasts`;

/** What the compose form holds, as typed. */
interface ComposeValues {
  planIds: string[];
  statuses: string[];
  delivery: string;
  subject: string;
  body: string;
}

const EMPTY: ComposeValues = {
  planIds: [],
  statuses: ['active', 'trialing'],
  delivery: 'preferred',
  subject: '',
  body: '',
};

/** The compose form: plans and statuses (checkboxes), delivery, subject and text. */
function ComposeForm(props: { viewer: Viewer; projectId: string; plans: Plan[]; values: ComposeValues }): Html {
  const { values } = props;
  return (
    <form method="post" action={broadcastsOf(props.projectId)} class="stack card" id="broadcast-form">
      <CsrfField viewer={props.viewer} />
      <IdempotencyField />
      <fieldset>
        <legend>Plans (none: any plan; choose plans, statuses or both)</legend>
        {props.plans.map((plan) => (
          <label>
            <input type="checkbox" name="plan_ids" value={plan.id} checked={values.planIds.includes(plan.id)} />{' '}
            {plan.name}
          </label>
        ))}
      </fieldset>
      <fieldset>
        <legend>Subscription statuses (none: any status)</legend>
        {SUBSCRIPTION_STATUSES.map((status) => (
          <label>
            <input
              type="checkbox"
              name="statuses"
              value={status.value}
              checked={values.statuses.includes(status.value)}
            />{' '}
            {status.label}
          </label>
        ))}
      </fieldset>
      <DeliveryField id="broadcast-delivery" value={values.delivery} />
      <div>
        <label for="broadcast-subject">Subject</label>
        <input
          type="text"
          id="broadcast-subject"
          name="subject"
          required
          maxlength={String(MAX_SUBJECT_LENGTH)}
          value={values.subject}
        />
      </div>
      <div>
        <label for="broadcast-body">Text (Liquid: the variables of docs/messages.md)</label>
        <textarea id="broadcast-body" name="body" rows="10" required maxlength={String(MAX_BODY_LENGTH)}>
          {values.body}
        </textarea>
      </div>
      <p class="hint">Only subscribers who consented and did not opt out receive it.</p>
      <div class="actions">
        <ActionButton viewer={props.viewer} ability="project-user:update" label="Send broadcast" />
      </div>
    </form>
  );
}

/**
 * The list of broadcasts (the element htmx swaps): while one runs, it asks for itself again every 3 seconds, so the
 * counts move without a reload.
 */
function BroadcastList(props: { projectId: string; outcome: OperationOutcome<ListPage<Broadcast>> }): Html {
  const running = props.outcome.ok && props.outcome.result.data.some((broadcast) => broadcast.status === 'running');
  const list = `${broadcastsOf(props.projectId)}/list`;
  return (
    <section
      id="broadcast-list"
      {...(running
        ? { 'hx-get': list, 'hx-trigger': 'every 3s', 'hx-select': '#broadcast-list', 'hx-swap': 'outerHTML' }
        : {})}
    >
      <Listing
        outcome={props.outcome}
        what="broadcasts"
        ability="project-user:view-any"
        render={(items) => (
          <DataTable
            id="broadcasts"
            rows={items}
            empty="No broadcasts yet."
            columns={[
              { label: 'Subject', cell: (broadcast) => broadcast.subject },
              {
                label: 'Status',
                cell: (broadcast) => (
                  <Badge color={broadcast.status === 'running' ? 'yellow' : 'green'}>{broadcast.status}</Badge>
                ),
              },
              { label: 'Queued', cell: (broadcast) => String(broadcast.counts.queued) },
              { label: 'Sent', cell: (broadcast) => String(broadcast.counts.sent) },
              { label: 'Failed', cell: (broadcast) => String(broadcast.counts.failed) },
              { label: 'Skipped', cell: (broadcast) => String(broadcast.counts.skipped) },
              { label: 'Created', cell: (broadcast) => <When at={broadcast.created_at} /> },
            ]}
          />
        )}
      />
    </section>
  );
}

/** `GET /dashboard/projects/{id}/broadcasts` (and the page again after a send or a refusal): compose and list. */
export async function broadcastsPage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra: { problem?: ProblemDocument; notice?: Html; values?: ComposeValues } = {},
): Promise<ApiGatewayResult> {
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  const [plans, broadcasts] = await Promise.all([
    read<ListPage<Plan>>(request, 'listPlans', { project_id: params.id, limit: 100 }),
    read<ListPage<Broadcast>>(request, 'listBroadcasts', { project_id: params.id }),
  ]);
  return htmlResult(
    extra.problem?.status ?? 200,
    <Page title={`${project.result.name}: broadcasts`} viewer={request.viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={broadcastsOf(params.id)} />
      <p class="hint">A message to the subscribers whose subscriptions match an audience, sent in the background.</p>
      {extra.notice ?? ''}
      {extra.problem ? <ProblemView problem={extra.problem} /> : ''}
      <ComposeForm
        viewer={request.viewer}
        projectId={params.id}
        plans={plans.ok ? plans.result.data : []}
        values={extra.values ?? EMPTY}
      />
      <BroadcastList projectId={params.id} outcome={broadcasts} />
    </Page>,
  );
}

/** `GET /dashboard/projects/{id}/broadcasts/list`: the list alone, as htmx asks for it while a broadcast runs. */
export async function broadcastListPartial(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const broadcasts = await read<ListPage<Broadcast>>(request, 'listBroadcasts', { project_id: params.id });
  return htmlResult(200, <BroadcastList projectId={params.id} outcome={broadcasts} />);
}

/** `POST /dashboard/projects/{id}/broadcasts`: `createBroadcast`; a refusal keeps the form as typed. */
export async function sendBroadcast(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const values: ComposeValues = {
    planIds: formValues(request.form, 'plan_ids'),
    statuses: formValues(request.form, 'statuses'),
    delivery: formText(request.form, 'delivery') ?? 'preferred',
    subject: formText(request.form, 'subject') ?? '',
    body: request.form.get('body') ?? '',
  };
  const outcome = await write<Broadcast>(request, 'createBroadcast', {
    project_id: params.id,
    audience: {
      ...(values.planIds.length ? { plan_ids: values.planIds } : {}),
      ...(values.statuses.length ? { statuses: values.statuses } : {}),
    },
    delivery: values.delivery,
    subject: values.subject,
    body: values.body,
  });
  if (!outcome.ok) return broadcastsPage(request, params, { problem: outcome.problem, values });
  return broadcastsPage(request, params, { notice: <Notice>The broadcast is on its way.</Notice> });
}
