import * as z from 'zod';
import { ABILITY_VALUES } from '../../catalogues/abilities.js';
import { ListQuery, Timestamp, Uuid, booleanFilter, listOf } from '../../schemas/common.js';

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
    description: z.string().nullable(),
    built_in: z.boolean().describe('True for the six roles every team has (owner, admin, developer, analyst, support, viewer).'),
    abilities: z.array(z.enum(ABILITY_VALUES)),
    project_ids: z.array(Uuid).nullable().describe('The projects the abilities apply to; null for every project of the team.'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Role' });
/** A role (see {@link Role}). */
export type Role = z.infer<typeof Role>;

/** A page of roles. */
export const RoleList = listOf(Role, 'RoleList');

/** `{id}` path parameters of a role. */
export const RoleIdParams = z.object({ id: Uuid.describe('The role id.') }).strict();

const RoleName = z.string().trim().min(1).max(100);
const Abilities = z.array(z.enum(ABILITY_VALUES)).min(1).max(ABILITY_VALUES.length);
const ProjectIds = z.array(Uuid).min(1).max(MAX_ROLE_PROJECTS);

/** Body of `POST /v1/roles`. */
export const CreateRoleRequest = z
  .object({
    name: RoleName.describe('Role name, 1 to 100 characters, unique in the team (built-in names included, any case).'),
    description: z.string().max(1000).nullable().optional().describe('Optional description, up to 1000 characters.'),
    abilities: Abilities.describe('Abilities the role grants (service://enums/ability); each must be held by the caller.'),
    project_ids: ProjectIds.nullable().optional().describe(`Narrow the role to these projects (1 to ${MAX_ROLE_PROJECTS}); omit or null for every project.`),
  })
  .strict()
  .meta({ id: 'CreateRoleRequest' });
/** Body of `POST /v1/roles` (see {@link CreateRoleRequest}). */
export type CreateRoleRequest = z.infer<typeof CreateRoleRequest>;

/** Body of `POST /v1/roles/{id}`: only the fields given change. */
export const UpdateRoleRequest = z
  .object({
    name: RoleName.optional().describe('New name, 1 to 100 characters, unique in the team.'),
    description: z.string().max(1000).nullable().optional().describe('New description; null clears it.'),
    abilities: Abilities.optional().describe('The new complete set of abilities; each must be held by the caller.'),
    project_ids: ProjectIds.nullable().optional().describe('The new project scope; null makes the role apply to every project.'),
  })
  .strict()
  .meta({ id: 'UpdateRoleRequest' });
/** Body of `POST /v1/roles/{id}` (see {@link UpdateRoleRequest}). */
export type UpdateRoleRequest = z.infer<typeof UpdateRoleRequest>;

/** Query of `GET /v1/roles` (and the `list_roles` tool's arguments). */
export const ListRolesQuery = ListQuery.extend({
  built_in: booleanFilter('Only built-in roles (true) or only the team’s own roles (false).'),
}).strict();
/** Query of `GET /v1/roles` (see {@link ListRolesQuery}). */
export type ListRolesQuery = z.infer<typeof ListRolesQuery>;
