/** @jsx h */
/** @jsxFrag Fragment */
import { CREATE_PROJECT_PLATFORM_TYPES, PLATFORM_TYPES } from '../../catalogues/platform-types.js';
import type { ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { Project } from '../../domain/projects/schema.js';
import { CsrfField, IdempotencyField, Notice, ProblemView } from '../components.js';
import { ActionButton, ActionForm, NameDescriptionFields } from '../form-controls.js';
import { Page } from '../layout.js';
import { h } from '../../web/html.js';
import { formText, htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import { pageOperations } from './kit.js';
import {
  createProject as createProjectHandler,
  updateProject as updateProjectHandler,
  archiveProject,
  unarchiveProject,
  deleteProject as deleteProjectHandler,
} from '../../domain/projects/handlers.js';
import { projectOr, projectProblemPage, ProjectTabs } from './projects.js';
import { settingsPage } from './project-settings.js';

const { write } = pageOperations({
  createProject: createProjectHandler,
  updateProject: updateProjectHandler,
  archiveProject,
  unarchiveProject,
  deleteProject: deleteProjectHandler,
});

/**
 * A project's lifecycle from the dashboard (DESIGN D21): create (`createProject`), edit name and
 * description (`updateProject`), archive and unarchive, and delete after a confirmation page
 * (`deleteProject`, whose CONFLICT while subscriptions are live is shown on that page).
 */

const settingsOf = (projectId: string) => `/dashboard/projects/${projectId}/settings`;

/** What the new-project form holds. */
interface NewProjectValues {
  name?: string;
  platform_type?: string;
  description?: string;
}

/**
 * `GET /dashboard/projects/new` (and the form again after a refused create): name, platform of the catalogue,
 * description.
 */
export async function newProjectPage(
  request: SignedInRequest,
  _params: Record<string, string> = {},
  extra?: { problem: ProblemDocument; values: NewProjectValues },
): Promise<ApiGatewayResult> {
  const values = extra?.values ?? {};
  const platforms = PLATFORM_TYPES.filter((platform) =>
    (CREATE_PROJECT_PLATFORM_TYPES as readonly string[]).includes(platform.value),
  );
  return htmlResult(
    extra?.problem.status ?? 200,
    <Page title="New project" viewer={request.viewer} current="/dashboard/projects">
      {extra ? <ProblemView problem={extra.problem} /> : ''}
      <form method="post" action="/dashboard/projects" class="stack" id="project-form">
        <CsrfField viewer={request.viewer} />
        <IdempotencyField />
        <NameDescriptionFields idPrefix="project" values={values} />
        <div>
          <label for="project-platform">Platform</label>
          <select id="project-platform" name="platform_type">
            {platforms.map((platform) => (
              <option value={platform.value} selected={(values.platform_type ?? 'telegram') === platform.value}>
                {platform.label}
              </option>
            ))}
          </select>
          <span class="hint">The community the project sells access to; it cannot be changed later.</span>
        </div>
        <div class="actions">
          <ActionButton viewer={request.viewer} ability="project:create" label="Create project" />
          <a href="/dashboard/projects">Cancel</a>
        </div>
      </form>
    </Page>,
  );
}

/** `POST /dashboard/projects`: `createProject`; then the new project's settings (bot, payment provider, join link). */
export async function createProject(request: SignedInRequest): Promise<ApiGatewayResult> {
  const values: NewProjectValues = {
    name: formText(request.form, 'name'),
    platform_type: formText(request.form, 'platform_type'),
    description: formText(request.form, 'description'),
  };
  const outcome = await write<Project>(request, 'createProject', {
    name: values.name,
    platform_type: values.platform_type,
    ...(values.description ? { description: values.description } : {}),
  });
  if (!outcome.ok) return newProjectPage(request, {}, { problem: outcome.problem, values });
  return redirectResult(`${settingsOf(outcome.result.id)}?created=1`);
}

/**
 * `POST /dashboard/projects/{id}/settings`: `updateProject` with the name (required) and the description (empty clears
 * it).
 */
export async function updateProject(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  // An emptied name is sent as typed, so the operation refuses it (rather than leaving the name unchanged).
  const name = request.form.get('name')?.trim() ?? '';
  const description = formText(request.form, 'description');
  const outcome = await write<Project>(request, 'updateProject', {
    project_id: params.id,
    name,
    description: description ?? null,
  });
  if (!outcome.ok)
    return settingsPage(request, params, { problem: outcome.problem, at: 'details', values: { name, description } });
  return settingsPage(request, params, { notice: <Notice>The project is saved.</Notice> });
}

/** `POST /dashboard/projects/{id}/archive|unarchive`: `archiveProject`, `unarchiveProject`. */
export function archiveAction(action: 'archive' | 'unarchive') {
  return async (request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> => {
    const outcome = await write<Project>(request, action === 'archive' ? 'archiveProject' : 'unarchiveProject', {
      project_id: params.id,
    });
    if (!outcome.ok) return settingsPage(request, params, { problem: outcome.problem, at: 'details' });
    return settingsPage(request, params, { notice: <Notice>The project is now {outcome.result.status}.</Notice> });
  };
}

/**
 * `GET /dashboard/projects/{id}/delete`: what deleting removes, and the button (and the operation's problem after a
 * refusal).
 */
export async function confirmDeleteProject(
  request: SignedInRequest,
  params: Record<string, string>,
  problem?: ProblemDocument,
): Promise<ApiGatewayResult> {
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  return htmlResult(
    problem?.status ?? 200,
    <Page title={`Delete ${project.result.name}?`} viewer={request.viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={settingsOf(params.id)} />
      {problem ? <ProblemView problem={problem} /> : ''}
      <p>
        Deleting the project removes its plans and resource links and cannot be undone. A project with live
        subscriptions cannot be deleted: cancel them first, or archive the project instead.
      </p>
      <div class="actions">
        <ActionForm
          viewer={request.viewer}
          action={`/dashboard/projects/${params.id}/delete`}
          ability="project:delete"
          label={`Delete project ${project.result.name}`}
          danger
        />
        <a href={settingsOf(params.id)}>Cancel</a>
      </div>
    </Page>,
  );
}

/** `POST /dashboard/projects/{id}/delete`: `deleteProject`; its CONFLICT is shown on the confirmation page. */
export async function deleteProject(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await write(request, 'deleteProject', { project_id: params.id });
  if (!outcome.ok) return confirmDeleteProject(request, params, outcome.problem);
  return redirectResult('/dashboard/projects?deleted=1');
}
