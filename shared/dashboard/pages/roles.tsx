/** @jsx h */
/** @jsxFrag Fragment */
import { ABILITIES, ABILITY_CATEGORY_LABELS, type Ability, type AbilityCategory } from '../../catalogues/abilities.js';
import type { ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { Group } from '../../domain/groups/schema.js';
import type { Project } from '../../domain/projects/schema.js';
import type { Role } from '../../domain/roles/schema.js';
import type { TeamMember } from '../../domain/team-members/schema.js';
import {
  Badge,
  CsrfField,
  DataTable,
  Forbidden,
  IdempotencyField,
  Notice,
  ProblemView,
  type Viewer,
} from '../components.js';
import {
  AbilityChoice,
  ActionButton,
  ActionForm,
  ActionLink,
  NameDescriptionFields,
  ProjectScopeField,
} from '../form-controls.js';
import { Page } from '../layout.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { formText, formValues, htmlResult, redirectResult, type SignedInRequest } from '../http.js';
import { listOrEmpty, read, write, type ListPage } from './kit.js';

/**
 * Roles and groups, and a team member's roles (DESIGN D19, D21): custom roles are created and edited with
 * the catalogue's abilities as checkboxes grouped by domain (only abilities the member holds can be
 * granted, as `createRole` requires) and an optional project scope, and deleted (a role still held shows
 * the CONFLICT readably, with who holds it); the six built-in roles are read-only. Groups are created,
 * edited (name, roles, members) and deleted. Every action runs its operation with the member as principal.
 */

/** The roles and groups page (groups' pages, `groups.tsx`, lead back to it). */
export const ROLES = '/dashboard/roles';

/** The catalogue's abilities by category, in catalogue order. */
function abilitiesByCategory(): Array<[AbilityCategory, Array<(typeof ABILITIES)[number]>]> {
  const groups = new Map<AbilityCategory, Array<(typeof ABILITIES)[number]>>();
  for (const ability of ABILITIES) groups.set(ability.category, [...(groups.get(ability.category) ?? []), ability]);
  return [...groups.entries()];
}

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

/** What a role form holds (a role being edited, or what was submitted). */
interface RoleValues {
  name?: string;
  description?: string | null;
  abilities?: readonly string[];
  project_ids?: readonly string[] | null;
}

/** The role form: name, description, abilities grouped by domain (only held ones can be ticked), project scope. */
function RoleForm(props: {
  viewer: Viewer;
  action: string;
  projects: Project[];
  values?: RoleValues;
  submit: string;
  ability: Ability;
}): Html {
  const { viewer } = props;
  const chosen = new Set(props.values?.abilities ?? []);
  const scoped = new Set(props.values?.project_ids ?? []);
  return (
    <form method="post" action={props.action} class="stack" id="role-form">
      <CsrfField viewer={viewer} />
      <IdempotencyField />
      <NameDescriptionFields idPrefix="role" values={props.values} />
      <fieldset>
        <legend>Abilities</legend>
        <p class="hint">A role never grants more than you hold: abilities you do not hold cannot be ticked.</p>
        {abilitiesByCategory().map(([category, abilities]) => (
          <fieldset class="ability-group">
            <legend>{ABILITY_CATEGORY_LABELS[category]}</legend>
            <div class="events">
              {abilities.map((ability) => (
                <AbilityChoice viewer={viewer} ability={ability} checked={chosen.has(ability.value)} />
              ))}
            </div>
          </fieldset>
        ))}
      </fieldset>
      <ProjectScopeField
        projects={props.projects}
        chosen={scoped}
        hint="Leave all unticked for a role that applies in every project."
      />
      <div class="actions">
        <ActionButton viewer={viewer} ability={props.ability} label={props.submit} />
        <a href={ROLES}>Cancel</a>
      </div>
    </form>
  );
}

function roleValuesOf(form: URLSearchParams): RoleValues {
  const projectIds = formValues(form, 'project_ids');
  return {
    name: formText(form, 'name'),
    description: formText(form, 'description') ?? null,
    abilities: formValues(form, 'abilities'),
    project_ids: projectIds.length ? projectIds : null,
  };
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
