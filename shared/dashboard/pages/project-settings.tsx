/** @jsx h */
import { PLATFORM_TYPES } from '../../catalogues/platform-types.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { hookPath, STRIPE_HOOK_ROUTE } from '../../hooks/routes.js';
import { integrationsOf } from '../../integrations.js';
import type { Project } from '../../domain/projects/schema.js';
import { JOIN_PATH } from '../../public-pages/http.js';
import { Badge, CsrfField, IdempotencyField, Notice, When, type Viewer } from '../components.js';
import { ActionButton, ActionForm, ActionLink, NameDescriptionFields } from '../form-controls.js';
import { Page } from '../layout.js';
import { h, type Html } from '../../web/html.js';
import { htmlResult, type SignedInRequest } from '../http.js';
import { projectOr, projectProblemPage, ProjectTabs } from './projects.js';
import {
  BotSection,
  CopyField,
  ProblemAt,
  ProviderSection,
  ResourcesSection,
  type SettingsExtra,
} from './project-settings-sections.js';
/**
 * A project's settings (DESIGN D16, D21, D22, D26): its details (edit, archive, delete), the join link to
 * share, the bot, the payment provider with the Stripe webhook URL to paste into Stripe, and the linked
 * resources. A refused form shows the operation's problem in its own section; secrets typed into a form
 * (bot token, client secret, Stripe keys) are never written back into it.
 */

/** The origin subscribers and providers reach: the configured public base URL, else the request's own origin. */
function publicBaseUrl(request: SignedInRequest): string {
  return integrationsOf(request.runtime).publicBaseUrl ?? request.relyingParty.origin;
}

function DetailsSection(props: { viewer: Viewer; project: Project; extra?: SettingsExtra }): Html {
  const { project, viewer } = props;
  const base = `/dashboard/projects/${project.id}`;
  const values =
    props.extra?.at === 'details' && props.extra.values
      ? props.extra.values
      : { name: project.name, description: project.description ?? '' };
  return (
    <section aria-labelledby="details-heading">
      <h2 id="details-heading">Details</h2>
      <ProblemAt extra={props.extra} section="details" />
      <dl class="facts" id="project-facts">
        <dt>Platform</dt>
        <dd>
          {PLATFORM_TYPES.find((platform) => platform.value === project.platform_type)?.label ?? project.platform_type}
        </dd>
        <dt>Status</dt>
        <dd>
          <Badge color={project.status === 'active' ? 'green' : 'gray'}>{project.status}</Badge>
        </dd>
        <dt>Created</dt>
        <dd>
          <When at={project.created_at} />
        </dd>
      </dl>
      <form method="post" action={`${base}/settings`} class="stack" id="project-edit-form">
        <CsrfField viewer={viewer} />
        <IdempotencyField />
        <NameDescriptionFields idPrefix="project" values={values} />
        <div class="actions">
          <ActionButton viewer={viewer} ability="project:update" label="Save project" />
        </div>
      </form>
      <div class="actions">
        {project.status === 'active' ? (
          <ActionForm
            viewer={viewer}
            action={`${base}/archive`}
            ability="project:archive"
            label="Archive project"
            secondary
          />
        ) : (
          <ActionForm
            viewer={viewer}
            action={`${base}/unarchive`}
            ability="project:archive"
            label="Unarchive project"
            secondary
          />
        )}
        <ActionLink
          viewer={viewer}
          href={`${base}/delete`}
          ability="project:delete"
          label="Delete project…"
          secondary
        />
      </div>
    </section>
  );
}

/**
 * `GET /dashboard/projects/{id}/settings` (and after every settings action): details, join link, bot, payment provider,
 * linked resources.
 */
export async function settingsPage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra?: SettingsExtra,
): Promise<ApiGatewayResult> {
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  const base = publicBaseUrl(request);
  const notice =
    extra?.notice ??
    (request.query.get('created') ? (
      <Notice>The project is created. Connect its bot and a payment provider, then share the join link.</Notice>
    ) : (
      ''
    ));
  return htmlResult(
    extra?.problem?.status ?? 200,
    <Page title={`${project.result.name}: settings`} viewer={request.viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={`/dashboard/projects/${params.id}/settings`} />
      {notice}
      <CopyField
        id="join-link"
        label="Join link"
        value={`${base}${JOIN_PATH}/${project.result.id}`}
        hint="Share it with your community: the page lists the active plans."
      />
      <DetailsSection viewer={request.viewer} project={project.result} extra={extra} />
      <BotSection viewer={request.viewer} project={project.result} extra={extra} />
      <ProviderSection
        viewer={request.viewer}
        project={project.result}
        extra={extra}
        webhookUrl={`${base}${hookPath(STRIPE_HOOK_ROUTE, project.result.id)}`}
      />
      <ResourcesSection viewer={request.viewer} project={project.result} extra={extra} />
    </Page>,
  );
}
