import * as z from '../../schemas/zod.js';
import { listOf, ListQuery, LongText, NameText, Timestamp, Uuid } from '../../schemas/common.js';

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
    description: z.nullable(z.string()),
    role_ids: z.array(Uuid).check(z.describe('Roles every member of the group holds.')),
    member_ids: z.array(Uuid).check(z.describe('Team members in the group.')),
    member_count: z.number().check(z.int(), z.nonnegative()),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'Group' });
/** A group (see {@link Group}). */
export type Group = z.infer<typeof Group>;

/** A page of groups. */
export const GroupList = listOf(Group, 'GroupList');

/** `{id}` path parameters of a group. */
export const GroupIdParams = z.strictObject({ id: Uuid.check(z.describe('The group id.')) });

const GroupName = NameText();
const RoleIds = z.array(Uuid).check(z.maxLength(MAX_GROUP_ROLES));
const MemberIds = z.array(Uuid).check(z.maxLength(MAX_GROUP_MEMBERS));

/** Body of `POST /v1/groups`. */
export const CreateGroupRequest = z
  .strictObject({
    name: GroupName.check(z.describe('Group name, 1 to 100 characters, unique in the team (any case).')),
    description: z.optional(z.nullable(LongText())).check(z.describe('Optional description, up to 1000 characters.')),
    role_ids: z
      .optional(RoleIds)
      .check(
        z.describe(
          `Roles the group gives its members (up to ${MAX_GROUP_ROLES}); needs \`role:assign\`, and each role’s abilities must be held by the caller.`,
        ),
      ),
    member_ids: z
      .optional(MemberIds)
      .check(
        z.describe(`Team members to put in the group (up to ${MAX_GROUP_MEMBERS}); needs \`group:manage-members\`.`),
      ),
  })
  .register(z.globalRegistry, { id: 'CreateGroupRequest' });
/** See {@link CreateGroupRequest}. */
export type CreateGroupRequest = z.infer<typeof CreateGroupRequest>;

/** Body of `POST /v1/groups/{id}`: only the fields given change; lists replace the current ones. */
export const UpdateGroupRequest = z
  .strictObject({
    name: z.optional(GroupName).check(z.describe('New name, 1 to 100 characters, unique in the team.')),
    description: z.optional(z.nullable(LongText())).check(z.describe('New description; null clears it.')),
    role_ids: z.optional(RoleIds).check(z.describe('The group’s complete new set of roles; needs `role:assign`.')),
    member_ids: z
      .optional(MemberIds)
      .check(z.describe('The group’s complete new set of members; needs `group:manage-members`.')),
  })
  .register(z.globalRegistry, { id: 'UpdateGroupRequest' });
/** See {@link UpdateGroupRequest}. */
export type UpdateGroupRequest = z.infer<typeof UpdateGroupRequest>;

/** Query of `GET /v1/groups` (and the `list_groups` tool's arguments). */
export const ListGroupsQuery = z.extend(ListQuery, {
  member_id: z.optional(Uuid).check(z.describe('Only groups holding this team member.')),
  role_id: z.optional(Uuid).check(z.describe('Only groups giving this role.')),
});
/** See {@link ListGroupsQuery}. */
export type ListGroupsQuery = z.infer<typeof ListGroupsQuery>;
