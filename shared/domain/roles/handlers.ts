import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { rolesModule } from './operations.js';
import { retryLostRaces } from './policy.js';
import {
  createRole as create,
  deleteRole as remove,
  getRole as read,
  listRoles as list,
  updateRole as update,
} from './repository.js';
import { narrowMemberTokens } from '../tokens/narrowing.js';

type Operations = typeof rolesModule.operations;

/** `GET /v1/roles` / `list_roles`. */
export const listRoles: OperationHandler<Operations['listRoles']> = async (input, { runtime, principal }) =>
  list(runtime.store, principal, input);

/** `GET /v1/roles/{id}` / `get_role`. */
export const getRole: OperationHandler<Operations['getRole']> = async (input, { runtime, principal }) =>
  read(runtime.store, principal, input.id);

/** `POST /v1/roles` (each write use case runs again when it lost a race: `retryLostRaces`). */
export const createRole: OperationHandler<Operations['createRole']> = async (input, { runtime, principal }) =>
  retryLostRaces(() => create(runtime, principal, input));

/** `POST /v1/roles/{id}`; then the members' tokens are narrowed to what the members hold now (`narrowMemberTokens`). */
export const updateRole: OperationHandler<Operations['updateRole']> = async (
  { id, ...changes },
  { runtime, principal },
) => {
  const result = await retryLostRaces(() => update(runtime, principal, id, changes));
  await narrowMemberTokens(runtime.store, principal.teamId);
  return result;
};

/** `DELETE /v1/roles/{id}`; then the members' tokens are narrowed (`narrowMemberTokens`). */
export const deleteRole: OperationHandler<Operations['deleteRole']> = async (input, { runtime, principal }) => {
  const result = await retryLostRaces(() => remove(runtime, principal, input.id));
  await narrowMemberTokens(runtime.store, principal.teamId);
  return result;
};

/** Every handler of the roles module. */
export const rolesHandlers = { listRoles, getRole, createRole, updateRole, deleteRole } satisfies HandlersOf<
  typeof rolesModule
>;
