/** @jsx h */
import type { ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { Role } from '../../domain/roles/schema.js';
import type { TeamMember } from '../../domain/team-members/schema.js';
import { Badge, CsrfField, IdempotencyField, Notice, ProblemView } from '../components.js';
import { ActionButton } from '../form-controls.js';
import { Page } from '../layout.js';
import { h } from '../../web/html.js';
import { formValues, htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import { pageOperations } from './kit.js';
import { getTeamMember, updateTeamMember } from '../../domain/team-members/handlers.js';
import { listRoles } from '../../domain/roles/handlers.js';

const { listOrEmpty, read, write } = pageOperations({ getTeamMember, updateTeamMember, listRoles });

/**
 * A team member's roles (DESIGN D19, D21): the catalogue's roles as checkboxes, saved with `updateTeamMember` as the
 * signed-in member (only roles whose abilities they hold can be given).
 */

/** `GET /dashboard/team-members/{id}`: the member's roles as checkboxes (`updateTeamMember`, needs `role:assign`). */
export async function teamMemberPage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra?: { problem?: ProblemDocument; roleIds?: readonly string[] },
): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const member = await read<TeamMember>(request, 'getTeamMember', { id: params.id });
  if (!member.ok) {
    return htmlResult(
      member.problem.status,
      <Page title="Team member" viewer={viewer} current="/dashboard/team-members">
        <ProblemView problem={member.problem} />
      </Page>,
    );
  }
  const roles = await listOrEmpty<Role>(request, 'listRoles');
  const chosen = new Set(extra?.roleIds ?? member.result.role_ids);
  return htmlResult(
    extra?.problem?.status ?? 200,
    <Page title={`${member.result.name}: roles`} viewer={viewer} current="/dashboard/team-members">
      {request.query.get('saved') && !extra ? <Notice>The roles are saved.</Notice> : ''}
      {extra?.problem ? <ProblemView problem={extra.problem} /> : ''}
      <p>
        {member.result.email} ·{' '}
        <Badge color={member.result.status === 'active' ? 'green' : 'gray'}>{member.result.status}</Badge>
      </p>
      <form method="post" action={`/dashboard/team-members/${params.id}`} class="stack">
        <CsrfField viewer={viewer} />
        <IdempotencyField />
        <fieldset>
          <legend>Roles</legend>
          <p class="hint">
            The member holds every ability of these roles, plus those of their groups’ roles. You can only give roles
            whose abilities you hold.
          </p>
          <div class="events">
            {roles.map((role) => (
              <label>
                <input type="checkbox" name="role_ids" value={role.id} checked={chosen.has(role.id)} /> {role.name}{' '}
                <span class="hint">{role.abilities.length} abilities</span>
              </label>
            ))}
          </div>
        </fieldset>
        <div class="actions">
          <ActionButton viewer={viewer} ability="role:assign" label="Save roles" />
          <a href="/dashboard/team-members">Back to team members</a>
        </div>
      </form>
    </Page>,
  );
}

/** `POST /dashboard/team-members/{id}`: `updateTeamMember` with the member's complete new set of roles. */
export async function updateTeamMemberRoles(
  request: SignedInRequest,
  params: Record<string, string>,
): Promise<ApiGatewayResult> {
  const roleIds = formValues(request.form, 'role_ids');
  const outcome = await write<TeamMember>(request, 'updateTeamMember', { id: params.id, role_ids: roleIds });
  if (!outcome.ok) return teamMemberPage(request, params, { problem: outcome.problem, roleIds });
  return redirectResult(`/dashboard/team-members/${params.id}?saved=1`);
}
