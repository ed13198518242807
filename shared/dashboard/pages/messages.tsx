/** @jsx h */
/** @jsxFrag Fragment */
import type { ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { MESSAGE_KINDS, isEssentialMessage } from '../../catalogues/message-kinds.js';
import type { MessagePreview, MessageTemplate } from '../../domain/message-templates/schema.js';
import { Badge, CsrfField, DataTable, IdempotencyField, Listing, Notice, ProblemView, When } from '../components.js';
import { ActionButton, ActionForm } from '../form-controls.js';
import { Page } from '../layout.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { formText, htmlResult, type SignedInRequest } from '../http.js';
import type { Project } from '../../domain/projects/schema.js';
import { pageOperations } from './kit.js';
import {
  listMessageTemplates,
  getMessageTemplate,
  putMessageTemplate,
  previewMessageTemplate,
  resetMessageTemplate,
} from '../../domain/message-templates/handlers.js';
import { updateProject } from '../../domain/projects/handlers.js';
import { ProjectTabs, projectOr, projectProblemPage } from './projects.js';
import {
  inputOf,
  PreviewView,
  TemplateForm,
  valuesOfForm,
  valuesOfTemplate,
  type TemplateValues,
} from './message-form.js';

const { read, write } = pageOperations({
  listMessageTemplates,
  getMessageTemplate,
  putMessageTemplate,
  previewMessageTemplate,
  resetMessageTemplate,
  updateProject,
});

/**
 * A project's messages to subscribers (DESIGN D21, D32): every kind with its saved or default template, and per kind a
 * form (delivery, e-mail subject and body, bot text) that saves through `putMessageTemplate`, previews through
 * `previewMessageTemplate` (an htmx partial; a plain POST without JavaScript) and resets through
 * `resetMessageTemplate`. A refused save shows liquidjs's line and column under the form.
 */

const messagesOf = (projectId: string) => `/dashboard/projects/${projectId}/messages`;
const kindOf = (value: string) => MESSAGE_KINDS.find((kind) => kind.value === value);

/**
 * `GET /dashboard/projects/{id}/messages`: every kind, whether it uses the default, and its delivery; the project's
 * time zone (the dates in messages) with its form.
 */
export async function messagesPage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra: { problem?: ProblemDocument; notice?: Html } = {},
): Promise<ApiGatewayResult> {
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  const templates = await read<{ data: MessageTemplate[] }>(request, 'listMessageTemplates', { project_id: params.id });
  // The list is complete (one entry per kind), so it is shown as a last page.
  const listing = templates.ok
    ? { ...templates, result: { data: templates.result.data, next_cursor: null } }
    : templates;
  return htmlResult(
    extra.problem?.status ?? 200,
    <Page title={`${project.result.name}: messages`} viewer={request.viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={messagesOf(params.id)} />
      <p class="hint">
        What the project says to its subscribers by e-mail and through its bot; the variables are listed in
        docs/messages.md.
      </p>
      {extra.notice ?? ''}
      {extra.problem ? <ProblemView problem={extra.problem} /> : ''}
      <form method="post" action={`${messagesOf(params.id)}/time-zone`} class="row" id="time-zone-form">
        <CsrfField viewer={request.viewer} />
        <IdempotencyField />
        <div>
          <label for="project-time-zone">Time zone of the dates in messages</label>
          <input
            type="text"
            id="project-time-zone"
            name="time_zone"
            required
            maxlength="64"
            placeholder="Europe/Berlin"
            value={project.result.time_zone}
          />
        </div>
        <ActionButton viewer={request.viewer} ability="project:update" label="Save time zone" secondary />
      </form>
      <Listing
        outcome={listing}
        what="message templates"
        ability="project:view"
        render={(items) => (
          <DataTable
            id="message-templates"
            rows={items}
            empty="No message kinds."
            columns={[
              {
                label: 'Message',
                cell: (template) => (
                  <a href={`${messagesOf(params.id)}/${template.kind}`}>{kindOf(template.kind)?.label}</a>
                ),
              },
              { label: 'When', cell: (template) => kindOf(template.kind)?.description },
              {
                label: 'Text',
                cell: (template) =>
                  template.is_default ? <Badge color="gray">default</Badge> : <Badge color="green">customized</Badge>,
              },
              { label: 'Delivery', cell: (template) => template.delivery },
            ]}
          />
        )}
      />
    </Page>,
  );
}

/**
 * `GET /dashboard/projects/{id}/messages/{kind}` (and the page again after a save, a refused save, a preview or a
 * reset): the kind's form, its state and the preview.
 */
export async function messagePage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra: {
    problem?: ProblemDocument;
    values?: TemplateValues;
    notice?: Html;
    preview?: MessagePreview;
    previewProblem?: ProblemDocument;
  } = {},
): Promise<ApiGatewayResult> {
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  const kind = kindOf(params.kind);
  const template = await read<MessageTemplate>(request, 'getMessageTemplate', {
    project_id: params.id,
    kind: params.kind,
  });
  if (!kind || !template.ok) {
    const problem = template.ok ? undefined : template.problem;
    return htmlResult(
      problem?.status ?? 404,
      <Page title="Message" viewer={request.viewer} current="/dashboard/projects">
        {problem ? <ProblemView problem={problem} /> : <p>No such message kind.</p>}
      </Page>,
    );
  }
  const base = `${messagesOf(params.id)}/${kind.value}`;
  const current = template.result;
  return htmlResult(
    extra.problem?.status ?? 200,
    <Page title={`${project.result.name}: ${kind.label}`} viewer={request.viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={messagesOf(params.id)} />
      <h2>{kind.label}</h2>
      <p class="hint">
        {kind.description} {isEssentialMessage(kind.value) ? 'Essential: sent even to subscribers who opted out.' : ''}
      </p>
      <p id="template-state">
        {current.is_default ? (
          'The service’s default text.'
        ) : (
          <>
            Customized, saved <When at={current.updated_at} />.
          </>
        )}
      </p>
      {extra.notice ?? ''}
      {extra.problem ? <ProblemView problem={extra.problem} /> : ''}
      <TemplateForm
        request={request}
        base={base}
        back={messagesOf(params.id)}
        values={extra.values ?? valuesOfTemplate(current)}
      />
      <PreviewView preview={extra.preview} problem={extra.previewProblem} />
      <div class="actions">
        <ActionForm
          viewer={request.viewer}
          action={`${base}/reset`}
          ability="project:update"
          label="Reset to default"
          secondary
        />
      </div>
    </Page>,
  );
}

/** `POST /dashboard/projects/{id}/messages/time-zone`: `updateProject` with the project's new time zone. */
export async function saveTimeZone(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await write<Project>(request, 'updateProject', {
    project_id: params.id,
    time_zone: formText(request.form, 'time_zone') ?? '',
  });
  if (!outcome.ok) return messagesPage(request, params, { problem: outcome.problem });
  return messagesPage(request, params, { notice: <Notice>The time zone is saved.</Notice> });
}

/** `POST /dashboard/projects/{id}/messages/{kind}`: `putMessageTemplate`; a refusal keeps the texts as typed. */
export async function saveMessage(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const values = valuesOfForm(request.form);
  const outcome = await write<MessageTemplate>(request, 'putMessageTemplate', {
    project_id: params.id,
    kind: params.kind,
    ...inputOf(values),
  });
  if (!outcome.ok) return messagePage(request, params, { problem: outcome.problem, values });
  return messagePage(request, params, { notice: <Notice>The template is saved.</Notice> });
}

/**
 * `POST /dashboard/projects/{id}/messages/{kind}/preview`: `previewMessageTemplate` of the texts as typed (without an
 * idempotency key: a preview changes nothing, and each click previews new texts).
 */
export async function previewMessage(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const values = valuesOfForm(request.form);
  const outcome = await read<MessagePreview>(request, 'previewMessageTemplate', {
    project_id: params.id,
    kind: params.kind,
    email: { subject: values.subject, body: values.email },
    bot: { body: values.bot },
  });
  if (outcome.ok) return messagePage(request, params, { values, preview: outcome.result });
  const page = await messagePage(request, params, { values, previewProblem: outcome.problem });
  // htmx swaps only successful answers: its request gets the refusal (shown in the preview) with 200.
  return request.headers['hx-request'] === 'true' ? page : { ...page, statusCode: outcome.problem.status };
}

/** `POST /dashboard/projects/{id}/messages/{kind}/reset`: `resetMessageTemplate`, then the default in the form. */
export async function resetMessage(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await write<MessageTemplate>(request, 'resetMessageTemplate', {
    project_id: params.id,
    kind: params.kind,
  });
  if (!outcome.ok) return messagePage(request, params, { problem: outcome.problem });
  return messagePage(request, params, { notice: <Notice>The template is back to the default.</Notice> });
}
