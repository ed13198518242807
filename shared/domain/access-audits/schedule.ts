import { deadlineItem, type DeadlineHandler } from '../../deadlines/deadline.js';
import { anyHandler, type OperationHandler } from '../../operations/handler.js';
import { invokeOperation } from '../../operations/invoke.js';
import type { Runtime } from '../../runtime.js';
import { accessAuditStore } from '../../store/access-audits.js';
import { keys } from '../../store/keys.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import { createAccessAudit } from './audits.js';
import { ACCESS_AUDIT_INTERVAL_MS, accessAuditDeadline } from './first-schedule.js';
import { accessAuditsModule } from './operations.js';
import { auditPrincipal } from './worker.js';

/**
 * The daily access audit (DESIGN D34): a project's first audit puts its `project.access_audit` deadline, due a day
 * later; the deadline worker (every minute on AWS, the local timers locally) starts the project's audit through the
 * audit operation and moves the deadline a day on. A project whose schedule is `off` keeps its deadline (turning the
 * schedule on again needs nothing more) but is not audited; a deleted project's deadline goes.
 */

/** The audit operation run with the schedule as its trigger. */
const scheduledAudit: OperationHandler<typeof accessAuditsModule.operations.createAccessAudit> = (
  { project_id },
  { runtime, principal },
) => createAccessAudit(runtime, principal, project_id, {}, 'schedule');

/**
 * Applies a project's `project.access_audit` deadline: unless its schedule is `off`, starts its audit through the audit
 * operation (one already running, or an archived project: skipped this time), then moves the deadline a day on,
 * conditional on its due time (applied once); a deleted project's deadline is removed.
 */
export const applyScheduledAccessAudit: DeadlineHandler = async (unitRuntime, deadline) => {
  const runtime = unitRuntime as Runtime;
  const { teamId, subjectId: projectId } = deadline;
  const state = await accessAuditStore.readState(runtime.store, teamId, projectId);
  let gone = false;
  if (state.schedule === 'daily') {
    const outcome = await invokeOperation({
      runtime,
      principal: auditPrincipal({ id: `schedule-${deadline.dueAt}`, team_id: teamId, project_id: projectId }),
      operation: accessAuditsModule.operations.createAccessAudit,
      handler: anyHandler(scheduledAudit),
      surface: 'rest',
      requestId: `access-audit-schedule:${projectId}:${deadline.dueAt}`,
      decode: () => ({
        input: { project_id: projectId },
        idempotencyKey: null,
        fingerprint: [],
        cursorField: 'query.cursor',
      }),
    });
    gone = !outcome.ok && outcome.problem.code === 'NOT_FOUND';
  }
  const due = { condition: 'due_at = :due_at', values: { ':due_at': deadline.dueAt } };
  await unitOfWork(runtime, teamId, (tx) => {
    if (gone) tx.delete(keys.deadline(teamId, deadline.kind, projectId), due);
    else
      tx.put(
        deadlineItem(accessAuditDeadline(teamId, projectId, Date.parse(deadline.dueAt) + ACCESS_AUDIT_INTERVAL_MS)),
        due,
      );
  });
};
