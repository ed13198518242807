import { isoTime } from '../../clock.js';
import { deadlineItem, type Deadline } from '../../deadlines/deadline.js';
import type { Item } from '../../store/requests.js';

/**
 * When projects are audited on their own (DESIGN D34): daily, from a day after the project's first audit on. Apart
 * from the schedule's handler so the audit routes' bundles carry only this.
 */

/** How often a project is audited on the schedule: daily (MILLISECONDS). */
export const ACCESS_AUDIT_INTERVAL_MS = 24 * 60 * 60 * 1000;

/** The schedule deadline of project `projectId`, due at `dueAtMs` (epoch ms). */
export function accessAuditDeadline(teamId: string, projectId: string, dueAtMs: number): Deadline {
  return { teamId, kind: 'project.access_audit', subjectId: projectId, projectId, dueAt: isoTime(dueAtMs) };
}

/** The deadline item of a project's first daily audit, a day after `nowMs` (epoch ms): written with its first audit. */
export function firstAccessAuditDeadline(teamId: string, projectId: string, nowMs: number): Item {
  return deadlineItem(accessAuditDeadline(teamId, projectId, nowMs + ACCESS_AUDIT_INTERVAL_MS));
}
