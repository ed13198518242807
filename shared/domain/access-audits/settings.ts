import type { Principal } from '../../auth/principal.js';
import type { Runtime } from '../../runtime.js';
import { accessAuditScheduleStore } from '../../store/access-audit-schedule.js';
import { accessAuditStore } from '../../store/access-audits.js';
import { loadProject } from '../projects/repository.js';
import { ACCESS_AUDIT_INTERVAL_MS } from './first-schedule.js';
import { parseAccessAuditState, type AccessAuditState } from './record.js';
import type { AccessAuditSettings, UpdateAccessAuditSettingsRequest } from './schema.js';

/**
 * A project's access audit settings (DESIGN D34): its policy and daily schedule, read and changed without running an
 * audit (an audit request may change them too).
 */

/** The public settings of a project's audit state. */
function publicSettings(projectId: string, state: AccessAuditState): AccessAuditSettings {
  return {
    project_id: projectId,
    policy: state.policy,
    schedule: state.schedule,
    next_audit_at: state.next_audit_at ?? null,
  };
}

/**
 * `GET /v1/projects/{project_id}/access-audit-settings`. Errors: NOT_FOUND (project absent, foreign or out of scope).
 */
export async function getAccessAuditSettings(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  projectId: string,
): Promise<AccessAuditSettings> {
  await loadProject(runtime.store, principal, projectId);
  return publicSettings(projectId, await accessAuditStore.readState(runtime.store, principal.teamId, projectId));
}

/**
 * `POST /v1/projects/{project_id}/access-audit-settings`: sets the policy and schedule given (a field left out keeps
 * its value; a project not on the daily schedule yet is put on it, a day on) and answers the settings; runs no audit.
 * Errors: NOT_FOUND (project absent, foreign or out of scope).
 */
export async function updateAccessAuditSettings(
  runtime: Pick<Runtime, 'store' | 'clock'>,
  principal: Principal,
  projectId: string,
  request: UpdateAccessAuditSettingsRequest,
): Promise<AccessAuditSettings> {
  await loadProject(runtime.store, principal, projectId);
  const item = await accessAuditScheduleStore.updateSettings(
    runtime.store,
    principal.teamId,
    projectId,
    request,
    runtime.clock.nowMs() + ACCESS_AUDIT_INTERVAL_MS,
  );
  return publicSettings(projectId, parseAccessAuditState(item));
}
