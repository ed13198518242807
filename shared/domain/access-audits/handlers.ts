import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import type { accessAuditsModule } from './operations.js';

/** The use cases, loaded on first use: the tool server and `$default` carry every handler, most never call these. */
const useCases = () => import('./audits.js');
/**
 * A finding's repair, loaded on first use: it reaches Stripe and the chat platforms, which the other use cases do
 * not.
 */
const repairUseCase = () => import('./repair-finding.js');

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

/**
 * `POST /v1/projects/{project_id}/access-audits/findings/{finding_id}/repair` (see `repairAccessAuditFinding` in
 * `repair-finding.ts`).
 */
export const repairAccessAuditFinding: OperationHandler<Operations['repairAccessAuditFinding']> = (
  { project_id, finding_id },
  { runtime, principal },
) =>
  repairUseCase().then(({ repairAccessAuditFinding }) =>
    repairAccessAuditFinding(runtime, principal, project_id, finding_id),
  );

/** The settings use cases, loaded on first use. */
const settings = () => import('./settings.js');

/** `GET /v1/projects/{project_id}/access-audit-settings` (see `getAccessAuditSettings` in `settings.ts`). */
export const getAccessAuditSettings: OperationHandler<Operations['getAccessAuditSettings']> = (
  { project_id },
  { runtime, principal },
) => settings().then(({ getAccessAuditSettings }) => getAccessAuditSettings(runtime, principal, project_id));

/** `POST /v1/projects/{project_id}/access-audit-settings` (see `updateAccessAuditSettings` in `settings.ts`). */
export const updateAccessAuditSettings: OperationHandler<Operations['updateAccessAuditSettings']> = (
  { project_id, ...request },
  { runtime, principal },
) =>
  settings().then(({ updateAccessAuditSettings }) =>
    updateAccessAuditSettings(runtime, principal, project_id, request),
  );

/** The access audits module's handlers by operation id. */
export const accessAuditsHandlers = {
  createAccessAudit,
  getLatestAccessAudit,
  repairAccessAuditFinding,
  getAccessAuditSettings,
  updateAccessAuditSettings,
} satisfies HandlersOf<typeof accessAuditsModule>;
