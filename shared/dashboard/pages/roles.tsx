/** @jsx h */
/** @jsxFrag Fragment */
import type { ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { Group } from '../../domain/groups/schema.js';
import type { Project } from '../../domain/projects/schema.js';
import type { Role } from '../../domain/roles/schema.js';
import type { TeamMember } from '../../domain/team-members/schema.js';
import { Badge, DataTable, Forbidden, Notice, ProblemView } from '../components.js';
import { ActionForm, ActionLink } from '../form-controls.js';
import { RoleForm, roleValuesOf, type RoleValues } from './role-form.js';
import { Page } from '../layout.js';
import { Fragment, h } from '../../web/html.js';
import { htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import { pageOperations, type ListPage } from './kit.js';
import {
  listRoles,
  createRole as createRoleHandler,
  getRole,
  updateRole as updateRoleHandler,
  deleteRole as deleteRoleHandler,
} from '../../domain/roles/handlers.js';
import { listGroups } from '../../domain/groups/handlers.js';
import { listProjects } from '../../domain/projects/handlers.js';
import { listTeamMembers } from '../../domain/team-members/handlers.js';

const { listOrEmpty, read, write } = pageOperations({
  listRoles,
  createRole: createRoleHandler,
  getRole,
  updateRole: updateRoleHandler,
  deleteRole: deleteRoleHandler,
  listGroups,
  listProjects,
  listTeamMembers,
});

/**
 * Roles and groups (DESIGN D19, D21; a team member's roles are `team-member-roles.tsx`): custom roles are created and
 * edited with the catalogue's abilities as checkboxes grouped by domain (only abilities the member holds can be
 * granted, as `createRole` requires) and an optional project scope, and deleted (a role still held shows the CONFLICT
 * readably, with who holds it); the six built-in roles are read-only. Groups are created, edited (name, roles, members)
 * and deleted. Every action runs its operation with the member as principal.
 */

/** The roles and groups page (groups' pages, `groups.tsx`, lead back to it). */
export const ROLES = '/dashboard/roles';

/** `GET /dashboard/roles`: roles (built-in and the team's own) and groups, with links to create and edit them. */
export async function rolesPage(request: SignedInRequest): Promise<ApiGatewayResult> {
  const { viewer, query } = request;
  const [roles, groups] = await Promise.all([
    read<ListPage<Role>>(request, 'listRoles', { limit: 100 }),
    read<ListPage<Group>>(request, 'listGroups', { limit: 100 }),
  ]);
  const roleNames = new Map(roles.ok ? roles.result.data.map((role) => [role.id, role.name]) : []);
  return htmlResult(
    200,
    <Page title="Roles and groups" viewer={viewer} current={ROLES}>
      {query.get('deleted') ? (
        <Notice>The {query.get('deleted') === 'group' ? 'group' : 'role'} was deleted.</Notice>
      ) : (
        ''
      )}
      <h2>Roles</h2>
      <div class="actions">
        <ActionLink viewer={viewer} href={`${ROLES}/new`} ability="role:create" label="New role" />
      </div>
      {roles.ok ? (
        <DataTable
          id="roles"
          rows={roles.result.data}
          empty="No roles."
          columns={[
            {
              label: 'Role',
              cell: (role) => (
                <>
                  <a href={`${ROLES}/${role.id}`}>{role.name}</a>{' '}
                  {role.built_in ? <Badge color="gray">built-in</Badge> : ''}
                </>
              ),
            },
            {
              label: 'Abilities',
              cell: (role) => <span title={role.abilities.join(', ')}>{role.abilities.length}</span>,
            },
            {
              label: 'Projects',
              cell: (role) =>
                role.project_ids
                  ? `${role.project_ids.length} project${role.project_ids.length === 1 ? '' : 's'}`
                  : 'All projects',
            },
            { label: 'Description', cell: (role) => role.description ?? '' },
          ]}
        />
      ) : roles.problem.code === 'TOKEN_MISSING_ABILITY' ? (
        <Forbidden ability="role:view-any" what="the roles" />
      ) : (
        <ProblemView problem={roles.problem} />
      )}
      <h2>Groups</h2>
      <div class="actions">
        <ActionLink viewer={viewer} href="/dashboard/groups/new" ability="group:create" label="New group" />
      </div>
      {groups.ok ? (
        <DataTable
          id="groups"
          rows={groups.result.data}
          empty="No groups yet."
          columns={[
            { label: 'Group', cell: (group) => <a href={`/dashboard/groups/${group.id}`}>{group.name}</a> },
            { label: 'Members', cell: (group) => group.member_count },
            { label: 'Roles', cell: (group) => group.role_ids.map((id) => roleNames.get(id) ?? id).join(', ') || '—' },
            { label: 'Description', cell: (group) => group.description ?? '' },
          ]}
        />
      ) : groups.problem.code === 'TOKEN_MISSING_ABILITY' ? (
        <Forbidden ability="group:view-any" what="the groups" />
      ) : (
        <ProblemView problem={groups.problem} />
      )}
    </Page>,
  );
}

/** `GET /dashboard/roles/new` (and the form again after a refused `POST /dashboard/roles`). */
export async function newRolePage(
  request: SignedInRequest,
  _params: Record<string, string> = {},
  extra?: { problem: ProblemDocument; values: RoleValues },
): Promise<ApiGatewayResult> {
  const projects = await listOrEmpty<Project>(request, 'listProjects');
  return htmlResult(
    extra?.problem.status ?? 200,
    <Page title="New role" viewer={request.viewer} current={ROLES}>
      {extra ? <ProblemView problem={extra.problem} /> : ''}
      <RoleForm
        cancel={ROLES}
        viewer={request.viewer}
        action={ROLES}
        projects={projects}
        values={extra?.values}
        submit="Create role"
        ability="role:create"
      />
    </Page>,
  );
}

/** `POST /dashboard/roles`: `createRole`; then the role's page. */
export async function createRole(request: SignedInRequest): Promise<ApiGatewayResult> {
  const values = roleValuesOf(request.form);
  const outcome = await write<Role>(request, 'createRole', {
    name: values.name,
    ...(values.description ? { description: values.description } : {}),
    abilities: values.abilities,
    ...(values.project_ids ? { project_ids: values.project_ids } : {}),
  });
  if (!outcome.ok) return newRolePage(request, {}, { problem: outcome.problem, values });
  return redirectResult(`${ROLES}/${outcome.result.id}?saved=1`);
}

/**
 * `GET /dashboard/roles/{id}`: a built-in role read-only; a role of the team's own editable, with who holds it and
 * Delete.
 */
export async function rolePage(
  request: SignedInRequest,
  params: Record<string, string>,
  extra?: { problem?: ProblemDocument; values?: RoleValues },
): Promise<ApiGatewayResult> {
  const { viewer } = request;
  const role = await read<Role>(request, 'getRole', { id: params.id });
  if (!role.ok) {
    return htmlResult(
      role.problem.status,
      <Page title="Role" viewer={viewer} current={ROLES}>
        <ProblemView problem={role.problem} />
      </Page>,
    );
  }
  const [projects, members, groups] = await Promise.all([
    listOrEmpty<Project>(request, 'listProjects'),
    listOrEmpty<TeamMember>(request, 'listTeamMembers', { role_id: params.id }),
    listOrEmpty<Group>(request, 'listGroups', { role_id: params.id }),
  ]);
  const holders = [
    ...members
      .filter((member) => member.status !== 'removed')
      .map((member) => ({ href: `/dashboard/team-members/${member.id}`, label: `${member.name} (member)` })),
    ...groups.map((group) => ({ href: `/dashboard/groups/${group.id}`, label: `${group.name} (group)` })),
  ];
  const current = role.result;
  return htmlResult(
    extra?.problem?.status ?? 200,
    <Page title={`Role ${current.name}`} viewer={viewer} current={ROLES}>
      {request.query.get('saved') && !extra ? <Notice>The role is saved.</Notice> : ''}
      {extra?.problem ? <ProblemView problem={extra.problem} /> : ''}
      {extra?.problem?.code === 'CONFLICT' && holders.length ? (
        <p class="hint" id="role-conflict-help">
          In the dashboard: untick the role on each member’s page and in each group below (“Held by”), then delete it.
        </p>
      ) : (
        ''
      )}
      <div class="card">
        <dl class="facts">
          <dt>Held by</dt>
          <dd id="role-holders">
            {holders.length ? (
              holders.map((holder, index) => (
                <>
                  {index ? ', ' : ''}
                  <a href={holder.href}>{holder.label}</a>
                </>
              ))
            ) : (
              <span class="hint">nobody</span>
            )}
          </dd>
          <dt>Projects</dt>
          <dd>
            {current.project_ids
              ? current.project_ids.map((id) => projects.find((project) => project.id === id)?.name ?? id).join(', ')
              : 'All projects'}
          </dd>
        </dl>
      </div>
      {current.built_in ? (
        <>
          <p class="hint">
            Built-in roles exist in every team and cannot be changed or deleted; create a role of your own to grant a
            different set.
          </p>
          <h2>Abilities ({current.abilities.length})</h2>
          <ul class="columns" id="role-abilities">
            {current.abilities.map((ability) => (
              <li>
                <code>{ability}</code>
              </li>
            ))}
          </ul>
        </>
      ) : (
        <>
          <RoleForm
            cancel={ROLES}
            viewer={viewer}
            action={`${ROLES}/${current.id}`}
            projects={projects}
            values={extra?.values ?? current}
            submit="Save role"
            ability="role:update"
          />
          <h2>Delete</h2>
          <div class="card">
            <p>A role can be deleted once no team member or group holds it.</p>
            <ActionForm
              viewer={viewer}
              action={`${ROLES}/${current.id}/delete`}
              ability="role:delete"
              label={`Delete role ${current.name}`}
              danger
            />
          </div>
        </>
      )}
    </Page>,
  );
}

/** `POST /dashboard/roles/{id}`: `updateRole` with the form's complete abilities and scope. */
export async function updateRole(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const values = roleValuesOf(request.form);
  const outcome = await write<Role>(request, 'updateRole', {
    id: params.id,
    name: values.name,
    description: values.description,
    abilities: values.abilities,
    project_ids: values.project_ids,
  });
  if (!outcome.ok) return rolePage(request, params, { problem: outcome.problem, values });
  return redirectResult(`${ROLES}/${params.id}?saved=1`);
}

/**
 * `POST /dashboard/roles/{id}/delete`: `deleteRole`; a role still held comes back as the CONFLICT beside who holds it.
 */
export async function deleteRole(request: SignedInRequest, params: Record<string, string>): Promise<ApiGatewayResult> {
  const outcome = await write(request, 'deleteRole', { id: params.id });
  if (!outcome.ok) return rolePage(request, params, { problem: outcome.problem });
  return redirectResult(`${ROLES}?deleted=role`);
}
