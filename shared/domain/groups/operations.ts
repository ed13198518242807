import { defineModule, defineOperation } from '../../operations/definition.js';
import { Deleted } from '../../schemas/common.js';
import { CreateGroupRequest, Group, GroupIdParams, GroupList, ListGroupsQuery, UpdateGroupRequest } from './schema.js';

/** The group operations (DESIGN D13, D19): team-wide data, refused to project-scoped tokens. */
export const groupsModule = defineModule({
  folder: 'groups',
  operations: {
    listGroups: defineOperation({
      id: 'listGroups',
      summary: 'List the team’s groups.',
      tag: 'Groups',
      ability: 'group:view-any',
      teamWide: true,
      query: ListGroupsQuery,
      output: GroupList,
      events: [],
      rest: { method: 'GET', path: '/v1/groups', successStatus: 200 },
      tool: {
        name: 'list_groups',
        title: 'List groups',
        kind: 'read',
        description: 'List the team’s groups with their roles and members.',
      },
    }),
    getGroup: defineOperation({
      id: 'getGroup',
      summary: 'Read one group, its roles and its members.',
      tag: 'Groups',
      ability: 'group:view',
      teamWide: true,
      params: GroupIdParams,
      output: Group,
      events: [],
      rest: { method: 'GET', path: '/v1/groups/{id}', successStatus: 200 },
      tool: { name: 'get_group', title: 'Get group', kind: 'read', description: 'Read one group and its members.' },
    }),
    createGroup: defineOperation({
      id: 'createGroup',
      summary: 'Create a group with roles and members (emits group.created).',
      tag: 'Groups',
      ability: 'group:create',
      teamWide: true,
      body: CreateGroupRequest,
      output: Group,
      events: ['group.created'],
      rest: { method: 'POST', path: '/v1/groups', successStatus: 201 },
    }),
    updateGroup: defineOperation({
      id: 'updateGroup',
      summary: 'Change a group’s name, description, roles or members (emits group.updated).',
      tag: 'Groups',
      ability: 'group:update',
      teamWide: true,
      params: GroupIdParams,
      body: UpdateGroupRequest,
      output: Group,
      events: ['group.updated'],
      rest: { method: 'POST', path: '/v1/groups/{id}', successStatus: 200 },
    }),
    deleteGroup: defineOperation({
      id: 'deleteGroup',
      summary: 'Delete a group; its members lose its roles (emits group.deleted).',
      tag: 'Groups',
      ability: 'group:delete',
      teamWide: true,
      params: GroupIdParams,
      output: Deleted,
      events: ['group.deleted'],
      rest: { method: 'DELETE', path: '/v1/groups/{id}', successStatus: 200 },
    }),
  },
});
