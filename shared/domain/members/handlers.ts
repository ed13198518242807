import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { membersModule } from './operations.js';
import { getMember as read, listMembers as list } from './repository.js';

type Operations = typeof membersModule.operations;

/** `GET /v1/projects/{project_id}/members`. */
export const listMembers: OperationHandler<Operations['listMembers']> = async (
  { project_id, ...query },
  { runtime, principal },
) => list(runtime.store, principal, project_id, query);

/** `GET /v1/members/{id}`. */
export const getMember: OperationHandler<Operations['getMember']> = async (input, { runtime, principal }) =>
  read(runtime.store, principal, input.id);

/** Every handler of the members module. */
export const membersHandlers = { listMembers, getMember } satisfies HandlersOf<typeof membersModule>;
