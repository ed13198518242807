import * as z from 'zod';
import { ListQuery, Timestamp, Uuid, listOf } from '../../schemas/common.js';

/** Most members a group holds. */
export const MAX_GROUP_MEMBERS = 25;
/** Most roles a group gives its members. */
const MAX_GROUP_ROLES = 10;

/**
 * A group (DESIGN D19): a named set of team members who all hold the group's roles, as the API returns
 * it and `group.*` events carry it.
 */
export const Group = z
  .object({
    id: Uuid,
    name: z.string(),
    description: z.string().nullable(),
    role_ids: z.array(Uuid).describe('Roles every member of the group holds.'),
    member_ids: z.array(Uuid).describe('Team members in the group.'),
    member_count: z.number().int().nonnegative(),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Group' });
/** A group (see {@link Group}). */
export type Group = z.infer<typeof Group>;

/** A page of groups. */
export const GroupList = listOf(Group, 'GroupList');

/** `{id}` path parameters of a group. */
export const GroupIdParams = z.object({ id: Uuid.describe('The group id.') }).strict();

const GroupName = z.string().trim().min(1).max(100);
const RoleIds = z.array(Uuid).max(MAX_GROUP_ROLES);
const MemberIds = z.array(Uuid).max(MAX_GROUP_MEMBERS);

/** Body of `POST /v1/groups`. */
export const CreateGroupRequest = z
  .object({
    name: GroupName.describe('Group name, 1 to 100 characters, unique in the team (any case).'),
    description: z.string().max(1000).nullable().optional().describe('Optional description, up to 1000 characters.'),
    role_ids: RoleIds.optional().describe(`Roles the group gives its members (up to ${MAX_GROUP_ROLES}); needs \`role:assign\`, and each role’s abilities must be held by the caller.`),
    member_ids: MemberIds.optional().describe(`Team members to put in the group (up to ${MAX_GROUP_MEMBERS}); needs \`group:manage-members\`.`),
  })
  .strict()
  .meta({ id: 'CreateGroupRequest' });
/** See {@link CreateGroupRequest}. */
export type CreateGroupRequest = z.infer<typeof CreateGroupRequest>;

/** Body of `POST /v1/groups/{id}`: only the fields given change; lists replace the current ones. */
export const UpdateGroupRequest = z
  .object({
    name: GroupName.optional().describe('New name, 1 to 100 characters, unique in the team.'),
    description: z.string().max(1000).nullable().optional().describe('New description; null clears it.'),
    role_ids: RoleIds.optional().describe('The group’s complete new set of roles; needs `role:assign`.'),
    member_ids: MemberIds.optional().describe('The group’s complete new set of members; needs `group:manage-members`.'),
  })
  .strict()
  .meta({ id: 'UpdateGroupRequest' });
/** See {@link UpdateGroupRequest}. */
export type UpdateGroupRequest = z.infer<typeof UpdateGroupRequest>;

/** Query of `GET /v1/groups` (and the `list_groups` tool's arguments). */
export const ListGroupsQuery = ListQuery.extend({
  member_id: Uuid.optional().describe('Only groups holding this team member.'),
  role_id: Uuid.optional().describe('Only groups giving this role.'),
}).strict();
/** See {@link ListGroupsQuery}. */
export type ListGroupsQuery = z.infer<typeof ListGroupsQuery>;
