import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { newAccessAuditStateItem } from '../../store/access-audit-schedule.js';
import { projectStore } from '../../store/projects.js';
import { ACCESS_AUDIT_INTERVAL_MS } from '../access-audits/first-schedule.js';
import { countUsage, withinTierLimit } from '../billing/repository.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { DEFAULT_TIME_ZONE, type Project } from './schema.js';

/**
 * Creating a project (DESIGN D6, D20, D34): the project item, its id-to-team lookup item, the team's project counter
 * and its access audit state (audited daily from a day on), in one transaction with `project.created`.
 */

/**
 * Creates a project in the principal's team and emits `project.created` in the same transaction
 * (DESIGN D6), counting it against the tier's project limit (D20). A project-scoped token cannot create
 * projects (its scope names existing projects only): TOKEN_MISSING_ABILITY. Beyond the tier's limit:
 * TIER_LIMIT_REACHED (with `billing.usage_limit_reached` once per period).
 */
export async function createProject(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  input: { name: string; platform_type: Project['platform_type']; description?: string; time_zone?: string },
): Promise<Project> {
  if (principal.projectIds !== null)
    throw new ProblemError('TOKEN_MISSING_ABILITY', 'A project-scoped token cannot create projects.');
  const nowMs = runtime.clock.nowMs();
  const now = isoTime(nowMs);
  const project: Project = {
    id: newUuid(),
    name: input.name,
    platform_type: input.platform_type,
    description: input.description ?? null,
    status: 'active',
    bot: null,
    payment_provider: null,
    resources: [],
    time_zone: input.time_zone ?? DEFAULT_TIME_ZONE,
    archived_at: null,
    created_at: now,
    updated_at: now,
  };
  // D20: the team's project counter rises in the same transaction, within the tier's limit.
  return withinTierLimit(runtime, principal.teamId, 'projects', () =>
    unitOfWork(runtime, principal.teamId, (tx) => {
      countUsage(tx, principal.teamId, 'projects', 1);
      projectStore.create(tx, principal.teamId, project);
      tx.put(newAccessAuditStateItem(principal.teamId, project.id, nowMs + ACCESS_AUDIT_INTERVAL_MS));
      tx.emit({ type: 'project.created', projectId: project.id, data: { project } });
      return project;
    }),
  );
}
