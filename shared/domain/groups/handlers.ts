import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { retryLostRaces } from '../roles/policy.js';
import { groupsModule } from './operations.js';
import {
  createGroup as create,
  deleteGroup as remove,
  getGroup as read,
  listGroups as list,
  updateGroup as update,
} from './repository.js';
import { narrowMemberTokens } from '../tokens/narrowing.js';

type Operations = typeof groupsModule.operations;

/** `GET /v1/groups` / `list_groups`. */
export const listGroups: OperationHandler<Operations['listGroups']> = async (input, { runtime, principal }) =>
  list(runtime.store, principal, input);

/** `GET /v1/groups/{id}` / `get_group`. */
export const getGroup: OperationHandler<Operations['getGroup']> = async (input, { runtime, principal }) =>
  read(runtime.store, principal, input.id);

/** `POST /v1/groups` (each write use case runs again when it lost a race: `retryLostRaces`). */
export const createGroup: OperationHandler<Operations['createGroup']> = async (input, { runtime, principal }) =>
  retryLostRaces(() => create(runtime, principal, input));

/**
 * `POST /v1/groups/{id}`; then the members' tokens are narrowed to what the members hold now (`narrowMemberTokens`).
 */
export const updateGroup: OperationHandler<Operations['updateGroup']> = async (
  { id, ...changes },
  { runtime, principal },
) => {
  const result = await retryLostRaces(() => update(runtime, principal, id, changes));
  await narrowMemberTokens(runtime.store, principal.teamId);
  return result;
};

/** `DELETE /v1/groups/{id}`; then the members' tokens are narrowed (`narrowMemberTokens`). */
export const deleteGroup: OperationHandler<Operations['deleteGroup']> = async (input, { runtime, principal }) => {
  const result = await retryLostRaces(() => remove(runtime, principal, input.id));
  await narrowMemberTokens(runtime.store, principal.teamId);
  return result;
};

/** Every handler of the groups module. */
export const groupsHandlers = { listGroups, getGroup, createGroup, updateGroup, deleteGroup } satisfies HandlersOf<
  typeof groupsModule
>;
