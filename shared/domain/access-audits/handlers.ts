import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import type { accessAuditsModule } from './operations.js';

/** The use cases, loaded on first use: the tool server and `$default` carry every handler, most never call these. */
const useCases = () => import('./audits.js');

type Operations = typeof accessAuditsModule.operations;

/** `POST /v1/projects/{project_id}/access-audits` (see `createAccessAudit` in `audits.ts`). */
export const createAccessAudit: OperationHandler<Operations['createAccessAudit']> = (
  { project_id, ...request },
  { runtime, principal },
) => useCases().then(({ createAccessAudit }) => createAccessAudit(runtime, principal, project_id, request));

/** `GET /v1/projects/{project_id}/access-audits/latest` (see `getLatestAccessAudit` in `audits.ts`). */
export const getLatestAccessAudit: OperationHandler<Operations['getLatestAccessAudit']> = (
  { project_id, ...query },
  { runtime, principal },
) => useCases().then(({ getLatestAccessAudit }) => getLatestAccessAudit(runtime, principal, project_id, query));

/** `POST /v1/projects/{project_id}/access-audits/findings/{finding_id}/repair` (see `repairAccessAuditFinding` in `audits.ts`). */
export const repairAccessAuditFinding: OperationHandler<Operations['repairAccessAuditFinding']> = (
  { project_id, finding_id },
  { runtime, principal },
) =>
  useCases().then(({ repairAccessAuditFinding }) =>
    repairAccessAuditFinding(runtime, principal, project_id, finding_id),
  );

/** The access audits module's handlers by operation id. */
export const accessAuditsHandlers = {
  createAccessAudit,
  getLatestAccessAudit,
  repairAccessAuditFinding,
} satisfies HandlersOf<typeof accessAuditsModule>;
