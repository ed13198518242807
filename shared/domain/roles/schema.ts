import * as z from '../../schemas/zod.js';
import { ABILITY_VALUES } from '../../catalogues/abilities.js';
import { booleanFilter, listOf, ListQuery, LongText, NameText, Timestamp, Uuid } from '../../schemas/common.js';

/** Most projects a role can be narrowed to. */
const MAX_ROLE_PROJECTS = 20;

/**
 * A team role (DESIGN D19), as the API returns it and `role.*` events carry it: a named set of abilities
 * (a subset of the catalogue), optionally narrowed to some projects. The six built-in roles (`built_in: true`)
 * exist in every team and cannot be changed or deleted.
 */
export const Role = z
  .object({
    id: Uuid,
    name: z.string(),
    description: z.nullable(z.string()),
    built_in: z
      .boolean()
      .check(z.describe('True for the six roles every team has (owner, admin, developer, analyst, support, viewer).')),
    abilities: z.array(z.enum(ABILITY_VALUES)),
    project_ids: z
      .nullable(z.array(Uuid))
      .check(z.describe('The projects the abilities apply to; null for every project of the team.')),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'Role' });
/** A role (see {@link Role}). */
export type Role = z.infer<typeof Role>;

/** A page of roles. */
export const RoleList = listOf(Role, 'RoleList');

/** `{id}` path parameters of a role. */
export const RoleIdParams = z.strictObject({ id: Uuid.check(z.describe('The role id.')) });

const RoleName = NameText();
const Abilities = z.array(z.enum(ABILITY_VALUES)).check(z.minLength(1), z.maxLength(ABILITY_VALUES.length));
const ProjectIds = z.array(Uuid).check(z.minLength(1), z.maxLength(MAX_ROLE_PROJECTS));

/** Body of `POST /v1/roles`. */
export const CreateRoleRequest = z
  .strictObject({
    name: RoleName.check(
      z.describe('Role name, 1 to 100 characters, unique in the team (built-in names included, any case).'),
    ),
    description: z.optional(z.nullable(LongText())).check(z.describe('Optional description, up to 1000 characters.')),
    abilities: Abilities.check(
      z.describe('Abilities the role grants (service://enums/ability); each must be held by the caller.'),
    ),
    project_ids: z
      .optional(z.nullable(ProjectIds))
      .check(
        z.describe(`Narrow the role to these projects (1 to ${MAX_ROLE_PROJECTS}); omit or null for every project.`),
      ),
  })
  .register(z.globalRegistry, { id: 'CreateRoleRequest' });
/** Body of `POST /v1/roles` (see {@link CreateRoleRequest}). */
export type CreateRoleRequest = z.infer<typeof CreateRoleRequest>;

/** Body of `POST /v1/roles/{id}`: only the fields given change. */
export const UpdateRoleRequest = z
  .strictObject({
    name: z.optional(RoleName).check(z.describe('New name, 1 to 100 characters, unique in the team.')),
    description: z.optional(z.nullable(LongText())).check(z.describe('New description; null clears it.')),
    abilities: z
      .optional(Abilities)
      .check(z.describe('The new complete set of abilities; each must be held by the caller.')),
    project_ids: z
      .optional(z.nullable(ProjectIds))
      .check(z.describe('The new project scope; null makes the role apply to every project.')),
  })
  .register(z.globalRegistry, { id: 'UpdateRoleRequest' });
/** Body of `POST /v1/roles/{id}` (see {@link UpdateRoleRequest}). */
export type UpdateRoleRequest = z.infer<typeof UpdateRoleRequest>;

/** Query of `GET /v1/roles` (and the `list_roles` tool's arguments). */
export const ListRolesQuery = z.extend(ListQuery, {
  built_in: booleanFilter('Only built-in roles (true) or only the team’s own roles (false).'),
});
/** Query of `GET /v1/roles` (see {@link ListRolesQuery}). */
export type ListRolesQuery = z.infer<typeof ListRolesQuery>;
