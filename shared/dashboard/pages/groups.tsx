/** @jsx h */
import { type Ability } from '../../catalogues/abilities.js';
import type { ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { Group } from '../../domain/groups/schema.js';

import type { Role } from '../../domain/roles/schema.js';
import type { TeamMember } from '../../domain/team-members/schema.js';
import { CsrfField, IdempotencyField, Notice, ProblemView, type Viewer } from '../components.js';
import { ActionButton, ActionForm, NameDescriptionFields } from '../form-controls.js';
import { Page } from '../layout.js';
import { h, type Html } from '../../web/html.js';
import { formText, formValues, htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import { pageOperations } from './kit.js';
import { listRoles } from '../../domain/roles/handlers.js';
import { listTeamMembers } from '../../domain/team-members/handlers.js';
import {
  createGroup as createGroupHandler,
  getGroup,
  updateGroup as updateGroupHandler,
  deleteGroup as deleteGroupHandler,
} from '../../domain/groups/handlers.js';
import { ROLES } from './roles.js';

const { listOrEmpty, read, write } = pageOperations({
  listRoles,
  listTeamMembers,
  createGroup: createGroupHandler,
  getGroup,
  updateGroup: updateGroupHandler,
  deleteGroup: deleteGroupHandler,
});

/**
 * Groups (DESIGN D19, D21): created, edited (name, roles, members) and deleted from the roles page; every
 * action runs its operation with the member as principal.
 */

/** What a group form holds. */
interface GroupValues {
  name?: string;
  description?: string | null;
  role_ids?: readonly string[];
  member_ids?: readonly string[];
}

/** The group form: name, description, roles (needs `role:assign`) and members (needs `group:manage-members`). */
function GroupForm(props: {
  viewer: Viewer;
  action: string;
  roles: Role[];
  members: TeamMember[];
  values?: GroupValues;
  submit: string;
  ability: Ability;
}): Html {
  const { viewer } = props;
  const roleIds = new Set(props.values?.role_ids ?? []);
  const memberIds = new Set(props.values?.member_ids ?? []);
  const canAssign = viewer.principal.abilities.has('role:assign');
  const canManageMembers = viewer.principal.abilities.has('group:manage-members');
  return (
    <form method="post" action={props.action} class="stack" id="group-form">
      <CsrfField viewer={viewer} />
      <IdempotencyField />
      <NameDescriptionFields idPrefix="group" values={props.values} />
      <fieldset disabled={!canAssign}>
        <legend>Roles {canAssign ? '' : <span class="hint">— needs role:assign</span>}</legend>
        <p class="hint">Every member of the group holds these roles.</p>
        <div class="events">
          {props.roles.map((role) => (
            <label>
              <input type="checkbox" name="role_ids" value={role.id} checked={roleIds.has(role.id)} /> {role.name}
            </label>
          ))}
        </div>
      </fieldset>
      <fieldset disabled={!canManageMembers}>
        <legend>Members {canManageMembers ? '' : <span class="hint">— needs group:manage-members</span>}</legend>
        <div class="events">
          {props.members.length === 0 ? <span class="hint">No team members.</span> : ''}
          {props.members.map((member) => (
            <label>
              <input type="checkbox" name="member_ids" value={member.id} checked={memberIds.has(member.id)} />
              <span>
                {member.name}
                <br />
                <span class="hint">{member.email}</span>
              </span>
            </label>
          ))}
        </div>
      </fieldset>
      <div class="actions">
        <ActionButton viewer={viewer} ability={props.ability} label={props.submit} />
        <a href={ROLES}>Cancel</a>
      </div>
    </form>
  );
}

/** The group fields of a submitted form; roles and members only when the member may set them (else left unchanged). */
function groupInputOf(viewer: Viewer, form: URLSearchParams): { values: GroupValues; input: Record<string, unknown> } {
  const values: GroupValues = {
    name: formText(form, 'name'),
    description: formText(form, 'description') ?? null,
    role_ids: formValues(form, 'role_ids'),
    member_ids: formValues(form, 'member_ids'),
  };
  return {
    values,
    input: {
      name: values.name,
      description: values.description,
      ...(viewer.principal.abilities.has('role:assign') ? { role_ids: values.role_ids } : {}),
      ...(viewer.principal.abilities.has('group:manage-members') ? { member_ids: values.member_ids } : {}),
    },
  };
}

async function groupChoices(request: SignedInRequest): Promise<{ roles: Role[]; members: TeamMember[] }> {
  const [roles, members] = await Promise.all([
    listOrEmpty<Role>(request, 'listRoles'),
    listOrEmpty<TeamMember>(request, 'listTeamMembers'),
  ]);
  return { roles, members: members.filter((member) => member.status !== 'removed') };
}

/** `GET /dashboard/groups/new` (and the form again after a refused `POST /dashboard/groups`). */
export async function newGroupPage(
  request: SignedInRequest,
  _params: Record<string, string> = {},
  extra?: { problem: ProblemDocument; values: GroupValues },
): Promise<ApiGatewayResult> {
  const choices = await groupChoices(request);
  return htmlResult(
    extra?.problem.status ?? 200,
    <Page title="New group" viewer={request.viewer} current={ROLES}>
      {extra ? <ProblemView problem={extra.problem} /> : ''}
      <GroupForm
        viewer={request.viewer}
        action="/dashboard/groups"
        {...choices}
        values={extra?.values}
        submit="Create group"
        ability="group:create"
      />
    </Page>,
  );
}

/** `POST /dashboard/groups`: `createGroup`; then the group's page. */
export async function createGroup(request: SignedInRequest): Promise<ApiGatewayResult> {
  const { values, input } = groupInputOf(request.viewer, request.form);
  const outcome = await write<Group>(request, 'createGroup', {
    ...input,
    description: values.description ?? undefined,
  });
  if (!outcome.ok) return newGroupPage(request, {}, { problem: outcome.problem, values });
  return redirectResult(`/dashboard/groups/${outcome.result.id}?saved=1`);
}

/** `GET /dashboard/groups/{id}`: edit the group's name, roles and members; delete it. */
export async function groupPage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra?: { problem?: ProblemDocument; values?: GroupValues },
): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const group = await read<Group>(request, 'getGroup', { id: params.id });
  if (!group.ok) {
    return htmlResult(
      group.problem.status,
      <Page title="Group" viewer={viewer} current={ROLES}>
        <ProblemView problem={group.problem} />
      </Page>,
    );
  }
  const choices = await groupChoices(request);
  return htmlResult(
    extra?.problem?.status ?? 200,
    <Page title={`Group ${group.result.name}`} viewer={viewer} current={ROLES}>
      {request.query.get('saved') && !extra ? <Notice>The group is saved.</Notice> : ''}
      {extra?.problem ? <ProblemView problem={extra.problem} /> : ''}
      <GroupForm
        viewer={viewer}
        action={`/dashboard/groups/${params.id}`}
        {...choices}
        values={extra?.values ?? group.result}
        submit="Save group"
        ability="group:update"
      />
      <h2>Delete</h2>
      <div class="card">
        <p>Its members lose the group’s roles (not the roles they hold directly).</p>
        <ActionForm
          viewer={viewer}
          action={`/dashboard/groups/${params.id}/delete`}
          ability="group:delete"
          label={`Delete group ${group.result.name}`}
          danger
        />
      </div>
    </Page>,
  );
}

/** `POST /dashboard/groups/{id}`: `updateGroup` (roles and members replace the current ones). */
export async function updateGroup(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const { values, input } = groupInputOf(request.viewer, request.form);
  const outcome = await write<Group>(request, 'updateGroup', { id: params.id, ...input });
  if (!outcome.ok) return groupPage(request, params, { problem: outcome.problem, values });
  return redirectResult(`/dashboard/groups/${params.id}?saved=1`);
}

/** `POST /dashboard/groups/{id}/delete`: `deleteGroup`. */
export async function deleteGroup(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const outcome = await write(request, 'deleteGroup', { id: params.id });
  if (!outcome.ok) return groupPage(request, params, { problem: outcome.problem });
  return redirectResult(`${ROLES}?deleted=group`);
}
