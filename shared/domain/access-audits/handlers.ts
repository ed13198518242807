import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import * as audits from './audits.js';
import type { accessAuditsModule } from './operations.js';

type Operations = typeof accessAuditsModule.operations;

/** `POST /v1/projects/{project_id}/access-audits` (see `audits.createAccessAudit`). */
export const createAccessAudit: OperationHandler<Operations['createAccessAudit']> = (
  { project_id, ...request },
  { runtime, principal },
) => audits.createAccessAudit(runtime, principal, project_id, request);

/** `GET /v1/projects/{project_id}/access-audits/latest` (see `audits.getLatestAccessAudit`). */
export const getLatestAccessAudit: OperationHandler<Operations['getLatestAccessAudit']> = (
  { project_id, ...query },
  { runtime, principal },
) => audits.getLatestAccessAudit(runtime, principal, project_id, query);

/** `POST /v1/projects/{project_id}/access-audits/findings/{finding_id}/repair` (see `audits.repairAccessAuditFinding`). */
export const repairAccessAuditFinding: OperationHandler<Operations['repairAccessAuditFinding']> = (
  { project_id, finding_id },
  { runtime, principal },
) => audits.repairAccessAuditFinding(runtime, principal, project_id, finding_id);

/** The access audits module's handlers by operation id. */
export const accessAuditsHandlers = {
  createAccessAudit,
  getLatestAccessAudit,
  repairAccessAuditFinding,
} satisfies HandlersOf<typeof accessAuditsModule>;
