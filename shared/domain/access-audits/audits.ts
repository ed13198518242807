import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { Runtime } from '../../runtime.js';
import { accessAuditStore } from '../../store/access-audits.js';
import { loadProject, toProject } from '../projects/repository.js';
import { ACCESS_AUDIT_INTERVAL_MS } from './first-schedule.js';
import { publicAccessAudit, publicFinding, zeroCounts, type StoredAccessAudit } from './record.js';
import type { AccessAudit, CreateAccessAuditRequest, LatestAccessAudit } from './schema.js';

/**
 * Access audits (DESIGN D34): `POST` starts one (one at a time per project) and answers at once with the queued job;
 * `worker.ts` runs it page by page. `latest` reads the last one with a page of its findings; a finding's repair
 * (`repair-finding.ts`) runs the repair it names.
 */

/** Who started an audit: a request, or the daily schedule. */
export type AuditTrigger = StoredAccessAudit['trigger'];

/**
 * `POST /v1/projects/{project_id}/access-audits`: sets the policy and schedule given, stores a queued job and queues
 * its first page (a project's first audit puts its next daily audit a day on); answers the job (202). Errors: NOT_FOUND
 * (project absent, foreign or out of scope); CONFLICT (an audit of the project is running: named; or the project is
 * archived).
 */
export async function createAccessAudit(
  runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>,
  principal: Principal,
  projectId: string,
  request: CreateAccessAuditRequest,
  trigger: AuditTrigger = 'request',
): Promise<AccessAudit> {
  const project = toProject(await loadProject(runtime.store, principal, projectId));
  if (project.status !== 'active')
    throw new ProblemError('CONFLICT', `Project ${projectId} is ${project.status}: unarchive it before auditing.`);
  const state = await accessAuditStore.readState(runtime.store, principal.teamId, projectId);
  const nowMs = runtime.clock.nowMs();
  const now = isoTime(nowMs);
  const job: StoredAccessAudit = {
    id: newUuid(),
    team_id: principal.teamId,
    project_id: projectId,
    status: 'queued',
    policy: request.policy ?? state.policy,
    trigger,
    phase: null,
    cursor: null,
    pages: 0,
    error: null,
    created_at: now,
    updated_at: now,
    completed_at: null,
    ...zeroCounts(),
  };
  // The project's first audit puts its next daily audit a day on (and schedules a project created unscheduled).
  const next = { atMs: nowMs + ACCESS_AUDIT_INTERVAL_MS, move: !state.latest_audit_id };
  const started = await accessAuditStore.start(runtime.store, job, request, nowMs, next);
  if (!started.started)
    throw new ProblemError(
      'CONFLICT',
      `Audit ${started.runningAuditId} of project ${projectId} is running; follow it with GET /v1/projects/${projectId}/access-audits/latest and start another once it ends.`,
    );
  await runtime.deliveryQueue.send(
    [{ kind: 'access_audit_page', team_id: principal.teamId, project_id: projectId, audit_id: job.id }],
    0,
  );
  return publicAccessAudit(job);
}

/** The project's latest audit job. Errors: NOT_FOUND (project, or no audit yet). */
export async function latestJob(runtime: Pick<Runtime, 'store'>, principal: Principal, projectId: string) {
  await loadProject(runtime.store, principal, projectId);
  const state = await accessAuditStore.readState(runtime.store, principal.teamId, projectId);
  const job = state.latest_audit_id
    ? await accessAuditStore.load(runtime.store, principal.teamId, projectId, state.latest_audit_id)
    : null;
  if (!job)
    throw new ProblemError(
      'NOT_FOUND',
      `Project ${projectId} has not been audited yet; start an audit with POST /v1/projects/${projectId}/access-audits.`,
    );
  return job;
}

/**
 * `GET /v1/projects/{project_id}/access-audits/latest`: the latest audit (status, counts per kind) with a page of its
 * findings. Errors: NOT_FOUND (project, or never audited); VALIDATION_FAILED (cursor of another list).
 */
export async function getLatestAccessAudit(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  projectId: string,
  query: { limit: number; cursor?: string },
): Promise<LatestAccessAudit> {
  const job = await latestJob(runtime, principal, projectId);
  const page = await accessAuditStore.listFindings(runtime.store, principal.teamId, projectId, job.id, query);
  return { ...publicAccessAudit(job), findings: page.data.map(publicFinding), next_cursor: page.next_cursor };
}
