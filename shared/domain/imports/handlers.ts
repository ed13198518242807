import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import type { importsModule } from './operations.js';

/** The use cases, loaded on first use: the tool server and `$default` carry every handler, most never call these. */
const useCases = () => import('./imports.js');

type Operations = typeof importsModule.operations;

/** `POST /v1/projects/{project_id}/imports` (see `createImport` in `imports.ts`). */
export const createImport: OperationHandler<Operations['createImport']> = (
  { project_id, ...request },
  { runtime, principal },
) => useCases().then(({ createImport }) => createImport(runtime, principal, project_id, request));

/** `GET /v1/projects/{project_id}/imports` (see `listImports` in `imports.ts`). */
export const listImports: OperationHandler<Operations['listImports']> = (
  { project_id, ...query },
  { runtime, principal },
) => useCases().then(({ listImports }) => listImports(runtime, principal, project_id, query));

/** `GET /v1/projects/{project_id}/imports/{import_id}` (see `getImport` in `imports.ts`). */
export const getImport: OperationHandler<Operations['getImport']> = (
  { project_id, import_id },
  { runtime, principal },
) => useCases().then(({ getImport }) => getImport(runtime, principal, project_id, import_id));

/** The imports module's handlers by operation id. */
export const importsHandlers = { createImport, listImports, getImport } satisfies HandlersOf<typeof importsModule>;
