import { defineModule, defineOperation } from '../../operations/definition.js';
import { ListMembersQuery, Member, MemberIdParams, MemberList, MemberProjectParams } from './schema.js';
import { membersInternalOperations } from './internal-operations.js';

/**
 * The member operations (DESIGN D13, D17): a project's members (platform identities) are listed under
 * the project and read by id alone (`/v1/members/{id}`) within the team. Members change through
 * platform updates (joins, leaves) and through ban, unban and kick of their subscriber.
 */
export const membersModule = defineModule({
  folder: 'members',
  operations: {
    listMembers: defineOperation({
      id: 'listMembers',
      summary: 'List the members (platform identities) of a project’s community, optionally by status.',
      tag: 'Members',
      ability: 'project-user:view-any',
      teamWide: false,
      params: MemberProjectParams,
      query: ListMembersQuery,
      output: MemberList,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/members', successStatus: 200 },
    }),
    getMember: defineOperation({
      id: 'getMember',
      summary:
        'Read one member of a project’s community (platform identity, status, linked subscriber, last platform error).',
      tag: 'Members',
      ability: 'project-user:view',
      teamWide: false,
      params: MemberIdParams,
      output: Member,
      events: [],
      rest: { method: 'GET', path: '/v1/members/{id}', successStatus: 200 },
    }),
  },
  internal: membersInternalOperations,
});
