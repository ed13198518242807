import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { projectsModule } from './operations.js';
import {
  archiveProject as archive,
  unarchiveProject as unarchive,
  unlinkResource,
  updateProject as update,
} from './changes.js';
import { createProject as create } from './creation.js';
import { deleteProject as remove } from './deletion.js';
import { getProject as read, listProjects as list } from './repository.js';
import { connectBot, disconnectBot } from './bot.js';
import { linkCheckedResource } from './discord.js';
import { connectPaymentProvider, disconnectPaymentProvider } from './payment-provider.js';

type Operations = typeof projectsModule.operations;

/** `POST /v1/projects` / `create_project`. */
export const createProject: OperationHandler<Operations['createProject']> = async (input, { runtime, principal }) =>
  create(runtime, principal, input);

/** `GET /v1/projects` / `list_projects`. */
export const listProjects: OperationHandler<Operations['listProjects']> = async (input, { runtime, principal }) =>
  list(runtime.store, principal, input);

/** `GET /v1/projects/{project_id}` / `get_project`. */
export const getProject: OperationHandler<Operations['getProject']> = async (input, { runtime, principal }) =>
  read(runtime.store, principal, input.project_id);

/** `POST /v1/projects/{project_id}` / `update_project`. */
export const updateProject: OperationHandler<Operations['updateProject']> = async (
  { project_id, ...changes },
  { runtime, principal },
) => update(runtime, principal, project_id, changes);

/** `POST /v1/projects/{project_id}/archive`. */
export const archiveProject: OperationHandler<Operations['archiveProject']> = async (input, { runtime, principal }) =>
  archive(runtime, principal, input.project_id);

/** `POST /v1/projects/{project_id}/unarchive`. */
export const unarchiveProject: OperationHandler<Operations['unarchiveProject']> = async (
  input,
  { runtime, principal },
) => unarchive(runtime, principal, input.project_id);

/** `DELETE /v1/projects/{project_id}`. */
export const deleteProject: OperationHandler<Operations['deleteProject']> = async (input, { runtime, principal }) =>
  remove(runtime, principal, input.project_id);

/** `PUT /v1/projects/{project_id}/bot`. */
export const connectProjectBot: OperationHandler<Operations['connectProjectBot']> = async (
  { project_id, ...input },
  { runtime, principal },
) => connectBot(runtime, principal, project_id, input);

/** `DELETE /v1/projects/{project_id}/bot`. */
export const disconnectProjectBot: OperationHandler<Operations['disconnectProjectBot']> = async (
  input,
  { runtime, principal },
) => disconnectBot(runtime, principal, input.project_id);

/** `POST /v1/projects/{project_id}/resources`. */
export const linkProjectResource: OperationHandler<Operations['linkProjectResource']> = async (
  { project_id, ...resource },
  { runtime, principal },
) => linkCheckedResource(runtime, principal, project_id, resource);

/** `DELETE /v1/projects/{project_id}/resources/{resource_id}`. */
export const unlinkProjectResource: OperationHandler<Operations['unlinkProjectResource']> = async (
  input,
  { runtime, principal },
) => unlinkResource(runtime, principal, input.project_id, input.resource_id);

/** `PUT /v1/projects/{project_id}/payment-provider`. */
export const connectProjectPaymentProvider: OperationHandler<Operations['connectProjectPaymentProvider']> = async (
  { project_id, ...input },
  { runtime, principal },
) => connectPaymentProvider(runtime, principal, project_id, input);

/** `DELETE /v1/projects/{project_id}/payment-provider`. */
export const disconnectProjectPaymentProvider: OperationHandler<
  Operations['disconnectProjectPaymentProvider']
> = async (input, { runtime, principal }) => disconnectPaymentProvider(runtime, principal, input.project_id);

/** Every handler of the projects module. */
export const projectsHandlers = {
  createProject,
  listProjects,
  getProject,
  updateProject,
  archiveProject,
  unarchiveProject,
  deleteProject,
  connectProjectBot,
  disconnectProjectBot,
  linkProjectResource,
  unlinkProjectResource,
  connectProjectPaymentProvider,
  disconnectProjectPaymentProvider,
} satisfies HandlersOf<typeof projectsModule>;
