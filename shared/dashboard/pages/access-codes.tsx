/** @jsx h */
/** @jsxFrag Fragment */
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { AccessCode, GeneratedAccessCodes } from '../../domain/access-codes/schema.js';
import type { Plan } from '../../domain/plans/schema.js';
import {
  Badge,
  CsrfField,
  DataTable,
  IdempotencyField,
  Listing,
  Notice,
  ProblemView,
  SecretOnce,
  When,
  type Viewer,
} from '../components.js';
import { ActionForm } from '../form-controls.js';
import { Page } from '../layout.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { formText, htmlResult, type SignedInRequest } from '../http.js';
import { pageOperations, type ListPage } from './kit.js';
import { listAccessCodes, generateAccessCodes, revokeAccessCode } from '../../domain/access-codes/handlers.js';
import { listPlans } from '../../domain/plans/handlers.js';
import { ProjectTabs, projectOr, projectProblemPage } from './projects.js';

const { read, write } = pageOperations({ listAccessCodes, generateAccessCodes, revokeAccessCode, listPlans });

/** A project's access codes (DESIGN D21): generate a batch (shown once, CSV download), list by suffix, revoke. */

/** The batch generator: plan, how many codes, optional prefix. */
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
          {props.viewer.principal.abilities.has('project-access-code:create')
            ? 'Generate batch'
            : 'Generate batch — needs project-access-code:create'}
        </button>
      </div>
    </form>
  );
}

/** `GET /dashboard/projects/{id}/access-codes`: the codes (suffixes only), revoke, and the batch generator. */
export async function accessCodesPage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra?: { top?: Html; status?: number },
): Promise<ApiGatewayResult> {
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
      {plans.ok ? (
        <GenerateCodesForm viewer={viewer} projectId={params.id} plans={plans.result.data} />
      ) : (
        <ProblemView problem={plans.problem} />
      )}
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
              {
                label: 'Status',
                cell: (code) => <Badge color={code.status === 'active' ? 'green' : 'gray'}>{code.status}</Badge>,
              },
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
                    <ActionForm
                      viewer={viewer}
                      action={`/dashboard/projects/${params.id}/access-codes/${code.id}/revoke`}
                      ability="project-access-code:revoke"
                      label="Revoke"
                      secondary
                    />
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

/**
 * `POST /dashboard/projects/{id}/access-codes`: `generateAccessCodes`; the codes are shown once, with a CSV download.
 */
export async function generateCodes(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const prefix = formText(request.form, 'prefix');
  const outcome = await write<GeneratedAccessCodes>(request, 'generateAccessCodes', {
    project_id: params.id,
    plan_id: formText(request.form, 'plan_id'),
    count: Number(formText(request.form, 'count') ?? '0'),
    ...(prefix ? { prefix } : {}),
  });
  if (!outcome.ok)
    return accessCodesPage(request, params, {
      top: <ProblemView problem={outcome.problem} />,
      status: outcome.problem.status,
    });
  const csv = ['code,id', ...outcome.result.codes.map((code) => `${code.code},${code.id}`)].join('\r\n');
  return accessCodesPage(request, params, {
    status: 201,
    top: (
      <div class="card">
        <p>
          <strong>{outcome.result.codes.length} codes</strong> generated — shown only now. Download them before you
          leave this page.
        </p>
        <p>
          <a
            class="button"
            download={`access-codes-${outcome.result.batch.id}.csv`}
            href={`data:text/csv;charset=utf-8,${encodeURIComponent(csv)}`}
          >
            Download CSV
          </a>
        </p>
        <SecretOnce
          id="generated-codes"
          label="Codes"
          value={outcome.result.codes.map((code) => code.code).join(' ')}
        />
      </div>
    ),
  });
}

/** `POST .../access-codes/{code}/revoke`: `revokeAccessCode`. */
export async function revokeCode(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const outcome = await write(request, 'revokeAccessCode', { id: params.code });
  if (!outcome.ok)
    return accessCodesPage(request, params, {
      top: <ProblemView problem={outcome.problem} />,
      status: outcome.problem.status,
    });
  return accessCodesPage(request, params, { top: <Notice>The code was revoked.</Notice> });
}
