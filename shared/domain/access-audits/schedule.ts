import { anyHandler, type OperationHandler } from '../../operations/handler.js';
import { invokeOperation } from '../../operations/invoke.js';
import type { Runtime } from '../../runtime.js';
import { accessAuditScheduleStore, type ScheduledAccessAudit } from '../../store/access-audit-schedule.js';
import { projectStore } from '../../store/projects.js';
import { STRIPE } from '../payments/stripe-event-context.js';
import { toProject } from '../projects/repository.js';
import type { Project } from '../projects/schema.js';
import { createAccessAudit } from './audits.js';
import { ACCESS_AUDIT_INTERVAL_MS } from './first-schedule.js';
import { accessAuditsModule } from './operations.js';
import { parseAccessAuditState } from './record.js';
import { auditPrincipal } from './worker.js';

/**
 * The daily access audit (DESIGN D34): a project's creation puts its audit state in the schedule index, due a day
 * later; the deadline worker's run (every minute on AWS, the local timers locally) starts the project's audit through
 * the audit operation and moves it a day on. A project never audited with nothing to compare (not billed through
 * Stripe, no bot watching a linked resource) costs one project read and the move. A project whose schedule is `off`
 * is out of the index (no read or write a day); `daily` puts it back, a day on. A deleted project's state goes.
 */

/** The audit operation run with the schedule as its trigger. */
const scheduledAudit: OperationHandler<typeof accessAuditsModule.operations.createAccessAudit> = (
  { project_id },
  { runtime, principal },
) => createAccessAudit(runtime, principal, project_id, {}, 'schedule');

/**
 * Whether an audit of `project` compares anything: it is billed through Stripe, or its bot watches a linked resource.
 */
function hasSomethingToAudit(project: Project): boolean {
  return project.payment_provider?.provider === STRIPE || (project.bot !== null && project.resources.length > 0);
}

/**
 * Whether the schedule audits the project now: its schedule is `daily` and it was audited before or has something to
 * audit; `gone` when the project no longer exists.
 */
async function auditedNow(runtime: Runtime, scheduled: ScheduledAccessAudit) {
  const state = parseAccessAuditState(scheduled.state);
  if (state.schedule !== 'daily') return { audit: false, gone: false };
  if (state.latest_audit_id) return { audit: true, gone: false };
  const item = await projectStore.read(runtime.store, scheduled.teamId, scheduled.projectId);
  return { audit: item !== undefined && hasSomethingToAudit(toProject(item)), gone: item === undefined };
}

/**
 * Applies a project's due daily audit: when {@link auditedNow}, starts its audit through the audit operation (one
 * already running, or an archived project: skipped this time), then moves the schedule a day on, conditional on its due
 * time (applied once); a deleted project's audit state is removed.
 */
export async function applyScheduledAccessAudit(runtime: Runtime, scheduled: ScheduledAccessAudit): Promise<void> {
  const { teamId, projectId, dueAt } = scheduled;
  if (parseAccessAuditState(scheduled.state).schedule === 'off') {
    // Left in the index by an older writer: it goes, and the project costs nothing more a day.
    await accessAuditScheduleStore.unschedule(runtime.store, scheduled);
    return;
  }
  const now = await auditedNow(runtime, scheduled);
  let gone = now.gone;
  if (now.audit) {
    const outcome = await invokeOperation({
      runtime,
      principal: auditPrincipal({ id: `schedule-${dueAt}`, team_id: teamId, project_id: projectId }),
      operation: accessAuditsModule.operations.createAccessAudit,
      handler: anyHandler(scheduledAudit),
      surface: 'rest',
      requestId: `access-audit-schedule:${projectId}:${dueAt}`,
      decode: () => ({
        input: { project_id: projectId },
        idempotencyKey: null,
        fingerprint: [],
        cursorField: 'query.cursor',
      }),
    });
    gone = !outcome.ok && outcome.problem.code === 'NOT_FOUND';
  }
  if (gone) await accessAuditScheduleStore.remove(runtime.store, scheduled);
  else await accessAuditScheduleStore.move(runtime.store, scheduled, Date.parse(dueAt) + ACCESS_AUDIT_INTERVAL_MS);
}
