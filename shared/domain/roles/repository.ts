import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { Store } from '../../store/store.js';
import type { Page } from '../../store/pages.js';
import type { Item } from '../../store/requests.js';
import { roleStore } from '../../store/roles.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { requireProjectsOfTeam } from '../projects/repository.js';
import { BUILT_IN_ROLES, builtInRole, isBuiltInRoleId, isBuiltInRoleName } from './built-in.js';
import { ConcurrentChange, normalizeName, requireGrantable } from './policy.js';
import { parseStoredRole } from './record.js';
import type { CreateRoleRequest, ListRolesQuery, Role, UpdateRoleRequest } from './schema.js';

/**
 * Persistence and use cases of roles (DESIGN D14, D19). A team's own roles are items of its partition
 * (`TEAM#<team>`, `ROLE#<uuid>`) with a name claim (`ROLE_NAME#<normalized name>`) that keeps names
 * unique, a `version` for optimistic concurrency and an `assignment_count`: how many members (invited or
 * active) and groups hold the role, kept in the same transaction as every assignment, so a role still
 * assigned can never be deleted. The six built-in roles are constants merged into reads (`built-in.ts`).
 */

/** A stored role: the public fields plus its concurrency version and its assignment counter. */
export type StoredRole = Role & { version: number; assignment_count: number };

const notFound = (roleId: string) => new ProblemError('NOT_FOUND', `No role ${roleId}.`);
const builtInConflict = (role: Role) =>
  new ProblemError(
    'CONFLICT',
    `Role ${role.name} is built in: it cannot be changed or deleted. Create a role of your own instead.`,
  );
const concurrentChange = (roleId: string) =>
  new ConcurrentChange(`Role ${roleId} was changed by another request meanwhile; read it again and retry.`);
const nameTaken = (name: string) =>
  new ProblemError(
    'CONFLICT',
    `The team already has a role named ${name} (names are unique in any case); choose another name.`,
  );

/** A stored role item, parsed through its stored-record schema, with its version and counter (absent = 0). */
function toStoredRole(item: Item): StoredRole {
  const stored = parseStoredRole(item);
  return {
    id: stored.id,
    name: stored.name,
    description: stored.description ?? null,
    built_in: false,
    abilities: stored.abilities,
    project_ids: stored.project_ids ?? null,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
    version: stored.version ?? 0,
    assignment_count: stored.assignment_count ?? 0,
  };
}

/**
 * Reads one role of the team (built-in or the team's own, strongly consistent); null when absent.
 * Built-in roles come back with `version` 0 and `assignment_count` 0 (they are never counted).
 */
async function findRole(store: Store, teamId: string, roleId: string): Promise<StoredRole | null> {
  const builtIn = builtInRole(roleId);
  if (builtIn) return { ...builtIn, version: 0, assignment_count: 0 };
  const item = await roleStore.read(store, teamId, roleId);
  return item ? toStoredRole(item) : null;
}

/** Reads one role of the principal's team (`GET /v1/roles/{id}`). Errors: NOT_FOUND (absent or another team's). */
export async function getRole(store: Store, principal: Principal, roleId: string): Promise<Role> {
  const role = await findRole(store, principal.teamId, roleId);
  if (!role) throw notFound(roleId);
  return publicRole(role);
}

/** The public fields of a role (drops the version and the counter). */
function publicRole({ version: _version, assignment_count: _count, ...role }: StoredRole): Role {
  return role;
}

/**
 * Reads the roles `roleIds` of the team, built-in ones included (one BatchGetItem for the team's own),
 * in the order given. Errors: NOT_FOUND naming the ids that are not roles of the team, unless
 * `skipMissing` (then they are left out).
 */
export async function loadRoles(
  store: Store,
  teamId: string,
  roleIds: readonly string[],
  options: { skipMissing?: boolean } = {},
): Promise<StoredRole[]> {
  const distinctIds = [...new Set(roleIds)];
  const ownIds = distinctIds.filter((roleId) => !isBuiltInRoleId(roleId));
  const found = new Map<string, StoredRole>();
  for (const item of await roleStore.readMany(store, teamId, ownIds)) {
    const role = toStoredRole(item);
    found.set(role.id, role);
  }
  const missing = ownIds.filter((roleId) => !found.has(roleId));
  if (missing.length && !options.skipMissing) throw new ProblemError('NOT_FOUND', `No role ${missing.join(', ')}.`);
  return distinctIds.flatMap((roleId) => {
    const builtIn = builtInRole(roleId);
    const role = builtIn ? { ...builtIn, version: 0, assignment_count: 0 } : found.get(roleId);
    return role ? [role] : [];
  });
}

/**
 * Adds `delta` (+1 or -1) to the assignment counter of each of the team's own roles in `roleIds`
 * (built-in roles are not counted), in the caller's transaction. Each update requires the role to exist,
 * so assigning a role deleted meanwhile fails the whole transaction with NOT_FOUND.
 */
export function countRoleAssignments(tx: Transaction, teamId: string, roleIds: readonly string[], delta: 1 | -1): void {
  const ownIds = [...new Set(roleIds)].filter((roleId) => !isBuiltInRoleId(roleId));
  roleStore.countAssignments(tx, teamId, ownIds, delta, notFound);
}

/**
 * Lists the team's roles, the built-in ones included, in id order (the built-in ids sort first), paged
 * (DESIGN D12). `built_in` keeps only built-in (true) or only the team's own (false) roles. The
 * built-in roles are merged into the page by their would-be sort keys, so one cursor format serves both.
 * Errors: VALIDATION_FAILED for a cursor of another list.
 */
export async function listRoles(store: Store, principal: Principal, query: ListRolesQuery): Promise<Page<Role>> {
  const constants = query.built_in === false ? [] : BUILT_IN_ROLES;
  const ownRoles = query.built_in !== true;
  return roleStore.listPage(store, principal.teamId, { ...query, ownRoles }, constants, (item) =>
    publicRole(toStoredRole(item)),
  );
}

/** Checks a role name: CONFLICT when it is a built-in role's name. Returns its normalized form. */
function claimableName(name: string): string {
  const normalized = normalizeName(name);
  if (isBuiltInRoleName(normalized))
    throw new ProblemError('CONFLICT', `${name} is the name of a built-in role; choose another name.`);
  return normalized;
}

/**
 * Creates a role of the team's own (`POST /v1/roles`) and emits `role.created` in the same transaction
 * (DESIGN D6). The caller must hold every ability it grants (TOKEN_MISSING_ABILITY naming the missing
 * ones); every project id must be a project of the team (NOT_FOUND); the name must be free in the team,
 * built-in names included (CONFLICT).
 */
export async function createRole(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  input: CreateRoleRequest,
): Promise<Role> {
  const abilities = [...new Set(input.abilities)];
  requireGrantable(principal, abilities, `role ${input.name}`);
  const projectIds = input.project_ids ? [...new Set(input.project_ids)] : null;
  const normalized = claimableName(input.name);
  if (projectIds) await requireProjectsOfTeam(runtime.store, principal.teamId, projectIds);
  const now = isoTime(runtime.clock.nowMs());
  const role: StoredRole = {
    id: newUuid(),
    name: input.name,
    description: input.description ?? null,
    built_in: false,
    abilities,
    project_ids: projectIds,
    created_at: now,
    updated_at: now,
    version: 1,
    assignment_count: 0,
  };
  return unitOfWork(runtime, principal.teamId, (tx) => {
    roleStore.create(tx, principal.teamId, role, normalized, () => nameTaken(input.name));
    const created = publicRole(role);
    tx.emit({ type: 'role.created', projectId: null, data: { role: created } });
    return created;
  });
}

/**
 * Changes a role of the team's own (`POST /v1/roles/{id}`) and emits `role.updated` in the same
 * transaction; a request that changes nothing writes nothing and emits nothing. When the abilities or
 * the project scope change, the resulting abilities must all be held by the caller (TOKEN_MISSING_ABILITY).
 * Errors: NOT_FOUND, CONFLICT (a built-in role; a name taken; a concurrent change).
 */
export async function updateRole(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  roleId: string,
  input: UpdateRoleRequest,
): Promise<Role> {
  const teamId = principal.teamId;
  const current = await findRole(runtime.store, teamId, roleId);
  if (!current) throw notFound(roleId);
  if (current.built_in) throw builtInConflict(current);
  const abilities = input.abilities ? [...new Set(input.abilities)] : current.abilities;
  const projectIds =
    input.project_ids === undefined ? current.project_ids : input.project_ids ? [...new Set(input.project_ids)] : null;
  if (input.abilities !== undefined || input.project_ids !== undefined)
    requireGrantable(principal, abilities, `role ${current.name}`);
  const name = input.name ?? current.name;
  const description = input.description === undefined ? current.description : input.description;
  const renamed = normalizeName(name) !== normalizeName(current.name);
  const newName = renamed ? claimableName(name) : null;
  if (input.project_ids) await requireProjectsOfTeam(runtime.store, teamId, input.project_ids);
  const unchanged =
    name === current.name &&
    description === current.description &&
    JSON.stringify(abilities) === JSON.stringify(current.abilities) &&
    JSON.stringify(projectIds) === JSON.stringify(current.project_ids);
  if (unchanged) return publicRole(current);
  const updated: StoredRole = {
    ...current,
    name,
    description,
    abilities,
    project_ids: projectIds,
    updated_at: isoTime(runtime.clock.nowMs()),
    version: current.version + 1,
  };
  return unitOfWork(runtime, teamId, (tx) => {
    roleStore.writeChange(tx, teamId, current, updated, () => concurrentChange(roleId));
    if (newName !== null) {
      roleStore.releaseName(tx, teamId, normalizeName(current.name));
      roleStore.claimName(tx, teamId, roleId, newName, () => nameTaken(name));
    }
    const role = publicRole(updated);
    tx.emit({ type: 'role.updated', projectId: null, data: { role } });
    return role;
  });
}

/**
 * Deletes a role of the team's own (`DELETE /v1/roles/{id}`) and emits `role.deleted` in the same
 * transaction. Errors: NOT_FOUND, CONFLICT (a built-in role; still assigned to members or groups —
 * checked by the transaction itself on the counter, so a concurrent assignment cannot slip through).
 */
export async function deleteRole(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  roleId: string,
): Promise<{ id: string; deleted: true }> {
  const teamId = principal.teamId;
  const current = await findRole(runtime.store, teamId, roleId);
  if (!current) throw notFound(roleId);
  if (current.built_in) throw builtInConflict(current);
  const stillAssigned = () =>
    new ProblemError(
      'CONFLICT',
      `Role ${current.name} is still assigned to team members or groups; take it away from them (POST /v1/team-members/{id}, POST /v1/groups/{id}) before deleting it.`,
    );
  if (current.assignment_count > 0) throw stillAssigned();
  const assignedOrChanged = () =>
    new ConcurrentChange(
      `Role ${current.name} was assigned or changed by another request meanwhile; read it again, take it away from its members and groups, and retry.`,
    );
  return unitOfWork(runtime, teamId, (tx) => {
    roleStore.delete(tx, teamId, current, normalizeName(current.name), assignedOrChanged);
    tx.emit({ type: 'role.deleted', projectId: null, data: { role: publicRole(current) } });
    return { id: roleId, deleted: true as const };
  });
}
