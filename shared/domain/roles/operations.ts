import { defineModule, defineOperation } from '../../operations/definition.js';
import { Deleted } from '../../schemas/common.js';
import { CreateRoleRequest, ListRolesQuery, Role, RoleIdParams, RoleList, UpdateRoleRequest } from './schema.js';

/** The role operations (DESIGN D13, D19): team-wide data, refused to project-scoped tokens. */
export const rolesModule = defineModule({
  folder: 'roles',
  operations: {
    listRoles: defineOperation({
      id: 'listRoles',
      summary: 'List the team’s roles, the six built-in ones included.',
      tag: 'Roles',
      ability: 'role:view-any',
      teamWide: true,
      query: ListRolesQuery,
      output: RoleList,
      events: [],
      rest: { method: 'GET', path: '/v1/roles', successStatus: 200 },
      tool: {
        name: 'list_roles',
        title: 'List roles',
        kind: 'read',
        description: 'List the team’s roles (built-in and the team’s own) with their abilities.',
      },
    }),
    getRole: defineOperation({
      id: 'getRole',
      summary: 'Read one role and its abilities.',
      tag: 'Roles',
      ability: 'role:view',
      teamWide: true,
      params: RoleIdParams,
      output: Role,
      events: [],
      rest: { method: 'GET', path: '/v1/roles/{id}', successStatus: 200 },
      tool: { name: 'get_role', title: 'Get role', kind: 'read' },
    }),
    createRole: defineOperation({
      id: 'createRole',
      summary: 'Create a role with abilities the caller holds, optionally narrowed to projects (emits role.created).',
      tag: 'Roles',
      ability: 'role:create',
      teamWide: true,
      body: CreateRoleRequest,
      output: Role,
      events: ['role.created'],
      rest: { method: 'POST', path: '/v1/roles', successStatus: 201 },
    }),
    updateRole: defineOperation({
      id: 'updateRole',
      summary: 'Change a role of the team’s own; built-in roles cannot change (emits role.updated).',
      tag: 'Roles',
      ability: 'role:update',
      teamWide: true,
      params: RoleIdParams,
      body: UpdateRoleRequest,
      output: Role,
      events: ['role.updated'],
      rest: { method: 'POST', path: '/v1/roles/{id}', successStatus: 200 },
    }),
    deleteRole: defineOperation({
      id: 'deleteRole',
      summary: 'Delete a role no member or group holds; built-in roles cannot be deleted (emits role.deleted).',
      tag: 'Roles',
      ability: 'role:delete',
      teamWide: true,
      params: RoleIdParams,
      output: Deleted,
      events: ['role.deleted'],
      rest: { method: 'DELETE', path: '/v1/roles/{id}', successStatus: 200 },
    }),
  },
});
