import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import * as imports from './imports.js';
import type { importsModule } from './operations.js';

type Operations = typeof importsModule.operations;

/** `POST /v1/projects/{project_id}/imports` (see `imports.createImport`). */
export const createImport: OperationHandler<Operations['createImport']> = (
  { project_id, ...request },
  { runtime, principal },
) => imports.createImport(runtime, principal, project_id, request);

/** `GET /v1/projects/{project_id}/imports` (see `imports.listImports`). */
export const listImports: OperationHandler<Operations['listImports']> = (
  { project_id, ...query },
  { runtime, principal },
) => imports.listImports(runtime, principal, project_id, query);

/** `GET /v1/projects/{project_id}/imports/{import_id}` (see `imports.getImport`). */
export const getImport: OperationHandler<Operations['getImport']> = (
  { project_id, import_id },
  { runtime, principal },
) => imports.getImport(runtime, principal, project_id, import_id);

/** The imports module's handlers by operation id. */
export const importsHandlers = { createImport, listImports, getImport } satisfies HandlersOf<typeof importsModule>;
