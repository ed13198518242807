import type { Principal } from '../../auth/principal.js';
import { ProblemError } from '../../errors.js';
import type { Runtime } from '../../runtime.js';
import { accessAuditStore } from '../../store/access-audits.js';
import { loadProject, toProject } from '../projects/repository.js';
import { latestJob } from './audits.js';
import { publicFinding } from './record.js';
import { applyRepair } from './repairs.js';
import type { AccessAuditFinding } from './schema.js';

/**
 * `POST /v1/projects/{project_id}/access-audits/findings/{finding_id}/repair`: applies the finding's repair and answers
 * the finding (`repaired`; one repaired already is answered as it is). Errors: NOT_FOUND (project, or no such finding
 * of the latest audit); PROVIDER_UNAVAILABLE (Stripe or the platform could not be reached; try again); CONFLICT (the
 * repair does not apply: the reason; recorded on the finding as `repair_error`).
 */
export async function repairAccessAuditFinding(
  runtime: Runtime,
  principal: Principal,
  projectId: string,
  findingId: string,
): Promise<AccessAuditFinding> {
  const job = await latestJob(runtime, principal, projectId);
  const store = runtime.store;
  const load = () => accessAuditStore.loadFinding(store, principal.teamId, projectId, job.id, findingId);
  const finding = await load();
  if (!finding) throw new ProblemError('NOT_FOUND', `No finding ${findingId} in the latest audit of this project.`);
  if (finding.status === 'repaired') return publicFinding(finding);
  const project = toProject(await loadProject(store, principal, projectId));
  const outcome = await applyRepair(runtime, principal, project, finding);
  if (!outcome.ok) {
    await accessAuditStore.recordRepairError(store, finding, outcome.reason);
    throw new ProblemError(outcome.retryable ? 'PROVIDER_UNAVAILABLE' : 'CONFLICT', outcome.reason);
  }
  await accessAuditStore.markRepaired(store, finding, runtime.clock.nowMs());
  return publicFinding((await load())!);
}
