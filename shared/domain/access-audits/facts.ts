import { defineFacts } from '../define-facts.js';

/**
 * Access audits' keys (DESIGN D34; no abilities of their own: the interface fixes the catalogue). A project's audit
 * jobs share its audits partition with the project's audit state (the latest and the running audit, the policy); an
 * audit's findings are in a partition of their own; a job still to finish is in a sparse index by the time of its last
 * progress, so the sweeper restarts a stalled one.
 */
export const accessAuditsFacts = defineFacts({
  keys: {
    /** An audit job in its project's audits partition. */
    accessAudit: (teamId: string, projectId: string, auditId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#AUDITS`,
      sk: `AUDIT#${auditId}`,
    }),
    /** A project's audit state: its latest audit, the running one (the one-at-a-time guard) and its policy. */
    accessAuditState: (teamId: string, projectId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#AUDITS`,
      sk: 'AUDIT_STATE',
    }),
    /** One finding of an audit. */
    accessAuditFinding: (teamId: string, projectId: string, auditId: string, findingId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#AUDIT#${auditId}`,
      sk: `FINDING#${findingId}`,
    }),
    /** Partition of one audit's findings. */
    accessAuditFindingsPartition: (teamId: string, projectId: string, auditId: string) =>
      `TEAM#${teamId}#PROJECT#${projectId}#AUDIT#${auditId}`,
    /** Sparse GSI partition of audits still to finish. */
    runningAccessAuditsIndex: 'AUDIT_RUNNING',
    /** Sparse GSI partition of the projects audited on a schedule, by the time of their next run. */
    scheduledAccessAuditsIndex: 'AUDIT_SCHEDULED',
  },
  sortKeyPrefix: { accessAuditFinding: 'FINDING#' },
  entity: {
    accessAudit: 'access_audit',
    accessAuditState: 'access_audit_state',
    accessAuditFinding: 'access_audit_finding',
  },
});
