import { randomUUID } from 'node:crypto';
import { isoTime } from '../../shared/clock.js';
import { zeroCounts, type StoredAccessAudit } from '../../shared/domain/access-audits/record.js';
import type { Runtime } from '../../shared/runtime.js';
import { accessAuditStore } from '../../shared/store/access-audits.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** A finished access audit of team B's project with one open finding, stored as the audit job stores them. */
async function seedAudit(runtime: Runtime, teamId: string, projectId: string): Promise<string> {
  const nowMs = runtime.clock.nowMs();
  const now = isoTime(nowMs);
  const job: StoredAccessAudit = {
    id: randomUUID(),
    team_id: teamId,
    project_id: projectId,
    status: 'queued',
    policy: 'report',
    trigger: 'request',
    phase: null,
    cursor: null,
    pages: 0,
    error: null,
    created_at: now,
    updated_at: now,
    completed_at: null,
    ...zeroCounts(),
  };
  await accessAuditStore.start(runtime.store, job, {}, nowMs);
  const finding = {
    id: randomUUID(),
    audit_id: job.id,
    team_id: teamId,
    project_id: projectId,
    kind: 'role_without_entitlement' as const,
    status: 'open' as const,
    detail: 'Member 700000000000000077 holds paid role 800000000000000001 and is linked to no subscriber.',
    objects: {
      subscription_id: null,
      subscriber_id: null,
      plan_id: null,
      stripe_subscription_id: null,
      stripe_customer_id: null,
      member_id: null,
      platform_user_id: '700000000000000077',
      platform_role_id: '800000000000000001',
    },
    repair: { action: 'remove_role' as const, description: 'Remove role 800000000000000001 from the member.' },
    repair_error: null,
    repaired_at: null,
    created_at: now,
  };
  await accessAuditStore.putFindings(runtime.store, job, [finding]);
  await accessAuditStore.recordPage(
    runtime.store,
    job,
    { findings: [finding], audited: {}, unlinkedMembers: 1 },
    null,
    nowMs,
  );
  return finding.id;
}

export default defineIsolationCases<{ findingOfB: string }>({
  seed: async (runtime, w) => ({ findingOfB: await seedAudit(runtime, w.b.team.id, w.b.project.id) }),
  secretsOfB: (extra) => [extra.findingOfB],
  operations: {
    createAccessAudit: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    getLatestAccessAudit: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    getAccessAuditSettings: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    updateAccessAuditSettings: {
      foreign: { input: (w) => ({ project_id: w.b.project.id, policy: 'repair' }), expect: NOT_FOUND },
    },
    repairAccessAuditFinding: {
      foreign: {
        input: (w, extra) => ({ project_id: w.b.project.id, finding_id: extra.findingOfB }),
        expect: NOT_FOUND,
      },
    },
  },
});
