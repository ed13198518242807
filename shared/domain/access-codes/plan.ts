import type { Principal } from '../../auth/principal.js';
import { ProblemError } from '../../errors.js';
import { readProjectAndPlan } from '../../store/access-codes/reads.js';
import { checkPlanOfProjectActive } from '../../store/access-codes/writes.js';
import type { Store } from '../../store/store.js';
import type { Transaction } from '../../store/unit-of-work.js';

/** The project and plan codes are generated for, and the check that keeps them so until the batch is written. */
export interface PlanOfProject {
  id: string;
  /** Adds condition checks to a unit of work: the project is still active, the plan still active and in it. */
  check(tx: Transaction): void;
}

/**
 * Reads project and plan in one BatchGetItem by key builders (not the plans module: keeps its adapters out of this
 * bundle) and requires both active (D18). Errors: NOT_FOUND (project absent; plan absent or not of this project),
 * CONFLICT (archived project; inactive plan).
 */
export async function requirePlanOfProject(
  store: Store,
  principal: Pick<Principal, 'teamId'>,
  projectId: string,
  planId: string,
): Promise<PlanOfProject> {
  const teamId = principal.teamId;
  const { project, plan } = await readProjectAndPlan(store, teamId, projectId, planId);
  if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  if (!plan || plan.project_id !== projectId)
    throw new ProblemError('NOT_FOUND', `No plan ${planId} in project ${projectId}.`);
  if (project.status !== 'active')
    throw new ProblemError(
      'CONFLICT',
      `Project ${projectId} is ${String(project.status)}; codes can be generated only in an active project.`,
    );
  if (plan.status !== 'active')
    throw new ProblemError(
      'CONFLICT',
      `Plan ${planId} is ${String(plan.status)}; codes can be generated only for an active plan (activate it first).`,
    );
  const changed = () =>
    new ProblemError(
      'CONFLICT',
      `Project ${projectId} or plan ${planId} changed meanwhile (archived, deactivated or deleted); read them again and retry.`,
    );
  return {
    id: planId,
    check: (tx) => checkPlanOfProjectActive(tx, teamId, projectId, planId, changed),
  };
}
