import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { projectsModule } from './operations.js';
import { createProject as create, getProject as read, listProjects as list } from './repository.js';

const operations = projectsModule.operations;

/** `POST /v1/projects` / `create_project`. */
export const createProject: OperationHandler<typeof operations.createProject> = async (input, { runtime, principal }) => create(runtime, principal, input);

/** `GET /v1/projects` / `list_projects`. */
export const listProjects: OperationHandler<typeof operations.listProjects> = async (input, { runtime, principal }) => list(runtime.store, principal, input);

/** `GET /v1/projects/{project_id}` / `get_project`. */
export const getProject: OperationHandler<typeof operations.getProject> = async (input, { runtime, principal }) => read(runtime.store, principal, input.project_id);

/** Every handler of the projects module. */
export const projectsHandlers = { createProject, listProjects, getProject } satisfies HandlersOf<typeof projectsModule>;
