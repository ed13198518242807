import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { logger } from '../../logger.js';
import { anyHandler } from '../../operations/handler.js';
import { invokeOperation } from '../../operations/invoke.js';
import type { AccessAuditPageMessage, Runtime } from '../../runtime.js';
import { accessAuditStore, type AuditNext } from '../../store/access-audits.js';
import { loadProject, toProject } from '../projects/repository.js';
import { findingIdOf, type FindingDraft } from './decisions.js';
import { repairAccessAuditFinding } from './handlers.js';
import { accessAuditsModule } from './operations.js';
import { PHASE_PAGES, phaseApplies, type AuditContext } from './phases.js';
import type { StoredAccessAudit, StoredFinding } from './record.js';
import { ACCESS_AUDIT_PHASES, type AccessAuditPhase } from './schema.js';

/**
 * The access audit worker (DESIGN D34, run like an import job): one queue message per page — Stripe's subscriptions,
 * the platform's members, our subscriptions — each read at the cursor the job stores, so no invocation runs longer than
 * a page. Findings are stored by stable ids (a page run twice records each once); under the `repair` policy each new
 * finding is repaired through the repair operation; then the cursor moves on conditionally on the pages done and the
 * next page's message is sent. A worker that stopped mid-page leaves the cursor where it was: the sweeper sends the
 * message again.
 */

/** What one `access_audit_page` message did: a page done and the next queued, the last page done, failed, nothing. */
export type AccessAuditPageOutcome = 'audit_page' | 'audit_completed' | 'audit_failed' | 'skipped';

/** A provider read failed in a way worth retrying (429, 5xx, unreachable): the queue delivers the message again. */
export class AccessAuditPageRetry extends Error {}

/**
 * The principal an audit acts as: the job's team and project, holding what its repairs need
 * (`project-subscription:update`: the audit was authorised when it started).
 */
export function auditPrincipal(job: Pick<StoredAccessAudit, 'id' | 'team_id' | 'project_id'>): Principal {
  return {
    tokenId: `access-audit:${job.id}`,
    teamId: job.team_id,
    abilities: new Set(['project-subscription:update']),
    projectIds: [job.project_id],
  };
}

/** The first applicable phase after `phase` (from the first when null), or null after the last. */
function phaseAfter(context: AuditContext, phase: AccessAuditPhase | null): AccessAuditPhase | null {
  const start = phase === null ? 0 : ACCESS_AUDIT_PHASES.indexOf(phase) + 1;
  return ACCESS_AUDIT_PHASES.slice(start).find((candidate) => phaseApplies(context, candidate)) ?? null;
}

/** A draft as the stored, open finding of `job`. */
function storedFinding(job: StoredAccessAudit, draft: FindingDraft, nowMs: number): StoredFinding {
  return {
    id: findingIdOf(job.id, draft),
    audit_id: job.id,
    team_id: job.team_id,
    project_id: job.project_id,
    kind: draft.kind,
    status: 'open',
    detail: draft.detail,
    objects: {
      subscription_id: null,
      subscriber_id: null,
      plan_id: null,
      stripe_subscription_id: null,
      stripe_customer_id: null,
      member_id: null,
      platform_user_id: null,
      platform_role_id: null,
      ...draft.objects,
    },
    repair: draft.repair,
    repair_error: null,
    repaired_at: null,
    created_at: isoTime(nowMs),
  };
}

/**
 * Repairs each finding through the repair operation (the pipeline: authorization, activity); failures stay recorded.
 */
async function repairAll(runtime: Runtime, job: StoredAccessAudit, findings: readonly StoredFinding[]): Promise<void> {
  const operation = accessAuditsModule.operations.repairAccessAuditFinding;
  for (const finding of findings) {
    const outcome = await invokeOperation({
      runtime,
      principal: auditPrincipal(job),
      operation,
      handler: anyHandler(repairAccessAuditFinding),
      surface: 'rest',
      requestId: `access-audit:${job.id}:${finding.id}`,
      decode: () => ({
        input: { project_id: job.project_id, finding_id: finding.id },
        idempotencyKey: null,
        fingerprint: [],
        cursorField: 'query.cursor',
      }),
    });
    if (!outcome.ok)
      logger.info('access audit repair not applied', { finding_id: finding.id, code: outcome.problem.code });
  }
}

/**
 * Runs a job's next page and queues the one after. Returns the {@link AccessAuditPageOutcome}; throws {@link
 * AccessAuditPageRetry} (a provider busy or unreachable) and store errors, so the queue retries the message.
 */
export async function processAccessAuditPage(
  runtime: Runtime,
  message: AccessAuditPageMessage,
): Promise<AccessAuditPageOutcome> {
  const job = await accessAuditStore.load(runtime.store, message.team_id, message.project_id, message.audit_id);
  if (!job || (job.status !== 'queued' && job.status !== 'running')) return 'skipped';
  const principal = auditPrincipal(job);
  const project = await loadProject(runtime.store, principal, job.project_id)
    .then(toProject)
    .catch((error: unknown) => {
      if (error instanceof ProblemError && error.code === 'NOT_FOUND') return null;
      throw error;
    });
  if (!project) {
    await accessAuditStore.recordFailure(runtime.store, job, 'The project no longer exists.', runtime.clock.nowMs());
    return 'audit_failed';
  }
  const context: AuditContext = { runtime, principal, job, project };
  const phase = job.phase ?? phaseAfter(context, null)!;
  const page = await PHASE_PAGES[phase](context, job.cursor);
  if (!page.ok) {
    if (page.retryable) throw new AccessAuditPageRetry(page.reason);
    await accessAuditStore.recordFailure(runtime.store, job, page.reason, runtime.clock.nowMs());
    return 'audit_failed';
  }
  const findings = page.drafts.map((draft) => storedFinding(job, draft, runtime.clock.nowMs()));
  await accessAuditStore.putFindings(runtime.store, job, findings);
  if (job.policy === 'repair') await repairAll(runtime, job, findings);
  const following = phaseAfter(context, phase);
  const next: AuditNext =
    page.cursor !== null ? { phase, cursor: page.cursor } : following ? { phase: following, cursor: null } : null;
  const result = { findings, audited: page.audited, unlinkedMembers: page.unlinkedMembers };
  if (!(await accessAuditStore.recordPage(runtime.store, job, result, next, runtime.clock.nowMs()))) return 'skipped';
  if (!next) return 'audit_completed';
  await runtime.deliveryQueue.send([message], 0);
  return 'audit_page';
}
