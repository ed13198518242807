/** @jsx h */
/** @jsxFrag Fragment */
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import {
  ACCESS_AUDIT_POLICIES,
  ACCESS_AUDIT_SCHEDULES,
  type AccessAudit,
  type AccessAuditFinding,
  type AccessAuditSettings,
  type LatestAccessAudit,
} from '../../domain/access-audits/schema.js';
import {
  Badge,
  CsrfField,
  DataTable,
  IdempotencyField,
  Notice,
  ProblemView,
  When,
  type Viewer,
} from '../components.js';
import { ActionButton, ActionForm } from '../form-controls.js';
import { Page } from '../layout.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { formText, htmlResult, type SignedInRequest } from '../http.js';
import { pageOperations } from './kit.js';
import {
  getLatestAccessAudit,
  getAccessAuditSettings,
  createAccessAudit,
  repairAccessAuditFinding,
  updateAccessAuditSettings,
} from '../../domain/access-audits/handlers.js';
import { ProjectTabs, projectOr, projectProblemPage } from './projects.js';

const { read, write } = pageOperations({
  getLatestAccessAudit,
  getAccessAuditSettings,
  createAccessAudit,
  repairAccessAuditFinding,
  updateAccessAuditSettings,
});

/**
 * A project's access audit (DESIGN D21, D34): the latest audit's status and counts, its findings with a one-click
 * repair each, "Run audit now" and the policy and schedule. Every action runs the audit operations through the
 * pipeline.
 */

/** The path of a project's access audit page. */
export const accessAuditPath = (projectId: string) => `/dashboard/projects/${projectId}/access-audit`;

/** How each finding kind reads. */
const KIND_LABELS: Record<AccessAuditFinding['kind'], string> = {
  paid_without_access: 'Paid without access',
  access_without_payment: 'Access without payment',
  role_missing: 'Role missing',
  role_without_entitlement: 'Role without entitlement',
  status_mismatch: 'Status differs from Stripe',
  member_left: 'Member left',
};

/** How each policy and schedule reads in the settings form. */
const SETTING_LABELS: Record<AccessAuditSettings['policy'] | AccessAuditSettings['schedule'], string> = {
  report: 'Report findings only',
  repair: 'Repair each finding as the audit finds it',
  daily: 'Audit daily',
  off: 'Only when run by hand',
};

/** The policy and schedule form (`updateAccessAuditSettings`): saving it runs no audit. */
function SettingsForm(props: { viewer: Viewer; projectId: string; settings: AccessAuditSettings }): Html {
  const { settings } = props;
  return (
    <form method="post" action={`${accessAuditPath(props.projectId)}/settings`} class="stack card" id="audit-settings">
      <CsrfField viewer={props.viewer} />
      <IdempotencyField />
      <div>
        <label for="audit-policy">Policy</label>
        <select id="audit-policy" name="policy">
          {ACCESS_AUDIT_POLICIES.map((policy) => (
            <option value={policy} selected={settings.policy === policy}>
              {SETTING_LABELS[policy]}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="audit-schedule">Schedule</label>
        <select id="audit-schedule" name="schedule">
          {ACCESS_AUDIT_SCHEDULES.map((schedule) => (
            <option value={schedule} selected={settings.schedule === schedule}>
              {SETTING_LABELS[schedule]}
            </option>
          ))}
        </select>
      </div>
      {settings.schedule === 'daily' && settings.next_audit_at ? (
        <p class="hint">
          Next daily audit: <When at={settings.next_audit_at} />
        </p>
      ) : (
        ''
      )}
      <div class="actions">
        <ActionButton viewer={props.viewer} ability="project-subscription:update" label="Save settings" secondary />
      </div>
    </form>
  );
}

/** The audit's facts: status, when, policy, what was compared, findings per kind. */
function AuditFacts(props: { audit: AccessAudit }): Html {
  const { audit } = props;
  const found = Object.entries(audit.counts).filter(([, count]) => count > 0);
  return (
    <div class="card">
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <Badge color={audit.status === 'succeeded' ? 'green' : audit.status === 'failed' ? 'red' : 'blue'}>
            {audit.status}
          </Badge>
          {audit.error ? ` ${audit.error}` : ''}
        </dd>
        <dt>Started</dt>
        <dd>
          <When at={audit.created_at} /> ({audit.trigger === 'schedule' ? 'daily audit' : 'on request'}, policy{' '}
          {audit.policy})
        </dd>
        <dt>Compared</dt>
        <dd>
          {audit.audited.stripe_subscriptions} Stripe subscriptions, {audit.audited.platform_members} platform members,{' '}
          {audit.audited.subscriptions} subscriptions
        </dd>
        <dt>Members linked to nobody</dt>
        <dd>{audit.unlinked_members}</dd>
        <dt>Open findings</dt>
        <dd>
          <strong>{audit.open_findings}</strong>
          {found.length
            ? ` (${found.map(([kind, count]) => `${KIND_LABELS[kind as AccessAuditFinding['kind']]}: ${count}`).join(', ')})`
            : ''}
        </dd>
      </dl>
    </div>
  );
}

/** The findings, each with what differs, its repair and a Repair button while open. */
function Findings(props: { request: SignedInRequest; projectId: string; findings: AccessAuditFinding[] }): Html {
  return (
    <DataTable
      rows={props.findings}
      empty="No findings: payments, subscriptions and the platform agree."
      columns={[
        { label: 'Kind', cell: (finding) => KIND_LABELS[finding.kind] },
        { label: 'What differs', cell: (finding) => finding.detail },
        {
          label: 'Repair',
          cell: (finding) => (
            <>
              {finding.repair.description}
              {finding.repair_error ? <p class="hint">Last try: {finding.repair_error}</p> : ''}
            </>
          ),
        },
        {
          label: '',
          cell: (finding) =>
            finding.status === 'repaired' ? (
              <Badge color="green">repaired</Badge>
            ) : (
              <ActionForm
                viewer={props.request.viewer}
                action={`${accessAuditPath(props.projectId)}/findings/${finding.id}/repair`}
                ability="project-subscription:update"
                label="Repair"
              />
            ),
        },
      ]}
    />
  );
}

/** `GET /dashboard/projects/{id}/access-audit`: the latest audit and its findings, and "Run audit now". */
export async function accessAuditPage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra?: { top?: Html; status?: number },
): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const project = await projectOr(request, params.id);
  if (!project.ok) return projectProblemPage(request, project);
  const [latest, settings] = await Promise.all([
    read<LatestAccessAudit>(request, 'getLatestAccessAudit', { project_id: params.id, limit: 100 }),
    read<AccessAuditSettings>(request, 'getAccessAuditSettings', { project_id: params.id }),
  ]);
  const body = latest.ok ? (
    <>
      <AuditFacts audit={latest.result} />
      <h2>Findings</h2>
      <Findings request={request} projectId={params.id} findings={latest.result.findings} />
      {latest.result.next_cursor ? <p class="hint">The first 100 findings are shown; repair them to see more.</p> : ''}
    </>
  ) : latest.problem.code === 'NOT_FOUND' ? (
    <p>This project has not been audited yet.</p>
  ) : (
    <ProblemView problem={latest.problem} />
  );
  return htmlResult(
    extra?.status ?? 200,
    <Page title={`${project.result.name}: access audit`} viewer={viewer} current="/dashboard/projects">
      <ProjectTabs project={project.result} current={accessAuditPath(params.id)} />
      {extra?.top ?? ''}
      <p>
        The audit compares Stripe&rsquo;s subscriptions, this project&rsquo;s subscriptions and the platform&rsquo;s
        members and roles. Stripe is the truth for money; the subscriptions are the truth for access.
      </p>
      <ActionForm
        viewer={viewer}
        action={`${accessAuditPath(params.id)}/run`}
        ability="project-subscription:update"
        label="Run audit now"
      />
      {settings.ok ? <SettingsForm viewer={viewer} projectId={params.id} settings={settings.result} /> : ''}
      {body}
    </Page>,
  );
}

/** `POST .../access-audit/run`: `createAccessAudit`; the page then shows it running. */
export async function runAccessAudit(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await write<AccessAudit>(request, 'createAccessAudit', { project_id: params.id });
  if (!outcome.ok)
    return accessAuditPage(request, params, {
      top: <ProblemView problem={outcome.problem} />,
      status: outcome.problem.status,
    });
  return accessAuditPage(request, params, {
    status: 202,
    top: <Notice>The audit started; reload this page to follow it.</Notice>,
  });
}

/** `POST .../access-audit/findings/{finding}/repair`: `repairAccessAuditFinding`. */
export async function repairFinding(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await write<AccessAuditFinding>(request, 'repairAccessAuditFinding', {
    project_id: params.id,
    finding_id: params.finding,
  });
  if (!outcome.ok)
    return accessAuditPage(request, params, {
      top: <ProblemView problem={outcome.problem} />,
      status: outcome.problem.status,
    });
  return accessAuditPage(request, params, { top: <Notice>The finding was repaired.</Notice> });
}

/** `POST .../access-audit/settings`: `updateAccessAuditSettings` with the form's policy and schedule; runs no audit. */
export async function saveAccessAuditSettings(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const outcome = await write<AccessAuditSettings>(request, 'updateAccessAuditSettings', {
    project_id: params.id,
    policy: formText(request.form, 'policy'),
    schedule: formText(request.form, 'schedule'),
  });
  if (!outcome.ok)
    return accessAuditPage(request, params, {
      top: <ProblemView problem={outcome.problem} />,
      status: outcome.problem.status,
    });
  return accessAuditPage(request, params, { top: <Notice>The audit settings were saved.</Notice> });
}
