import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { Runtime } from '../../runtime.js';
import { importStore } from '../../store/imports.js';
import type { Page } from '../../store/pages.js';
import { getPlan } from '../plans/repository.js';
import { loadProject, toProject } from '../projects/repository.js';
import { publicImport, zeroCounts, type StoredImport } from './record.js';
import type { CreateImportRequest, Import } from './schema.js';

/**
 * Imports (DESIGN D34): `POST` checks the project and the mapping and answers at once with a queued job;
 * `worker.ts` reads Stripe page by page and imports each object.
 */

/**
 * `POST /v1/projects/{project_id}/imports`: stores a queued job and queues its first page; answers the job (202).
 * Errors: NOT_FOUND (project absent, foreign or out of scope); CONFLICT (the project is not connected to Stripe, or is
 * archived); VALIDATION_FAILED (`plan_mapping` names a plan not of this project).
 */
export async function createImport(
  runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>,
  principal: Principal,
  projectId: string,
  request: CreateImportRequest,
): Promise<Import> {
  const project = toProject(await loadProject(runtime.store, principal, projectId));
  if (project.payment_provider?.provider !== 'stripe')
    throw new ProblemError(
      'CONFLICT',
      `Project ${projectId} is not connected to Stripe; connect it with PUT /v1/projects/${projectId}/payment-provider, then import.`,
    );
  if (project.status !== 'active')
    throw new ProblemError('CONFLICT', `Project ${projectId} is ${project.status}: unarchive it before importing.`);
  const mapping = request.plan_mapping ?? {};
  for (const [priceId, planId] of Object.entries(mapping)) {
    const plan = await getPlan(runtime.store, principal, planId).catch(() => null);
    if (!plan || plan.project_id !== projectId)
      throw new ProblemError('VALIDATION_FAILED', `plan_mapping.${priceId} names no plan of this project.`, {
        errors: [{ path: `plan_mapping.${priceId}`, message: `no plan ${planId} in project ${projectId}` }],
      });
  }
  const nowMs = runtime.clock.nowMs();
  const now = isoTime(nowMs);
  const job: StoredImport = {
    id: newUuid(),
    team_id: principal.teamId,
    project_id: projectId,
    dry_run: request.dry_run,
    status: 'queued',
    plan_mapping: mapping,
    kind: null,
    starting_after: null,
    pages: 0,
    skipped: [],
    error: null,
    created_at: now,
    updated_at: now,
    completed_at: null,
    ...zeroCounts(),
  };
  await importStore.create(runtime.store, job, nowMs);
  await runtime.deliveryQueue.send(
    [{ kind: 'import_page', team_id: principal.teamId, project_id: projectId, import_id: job.id }],
    0,
  );
  return publicImport(job);
}

/** `GET /v1/projects/{project_id}/imports/{import_id}`: the job and its counts. Errors: NOT_FOUND. */
export async function getImport(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  projectId: string,
  importId: string,
): Promise<Import> {
  await loadProject(runtime.store, principal, projectId);
  const job = await importStore.load(runtime.store, principal.teamId, projectId, importId);
  if (!job) throw new ProblemError('NOT_FOUND', `No import ${importId} in this project.`);
  return publicImport(job);
}

/** `GET /v1/projects/{project_id}/imports`: a page of the project's imports, newest first. Errors: NOT_FOUND. */
export async function listImports(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  projectId: string,
  query: { limit: number; cursor?: string },
): Promise<Page<Import>> {
  await loadProject(runtime.store, principal, projectId);
  const page = await importStore.listPage(runtime.store, principal.teamId, projectId, query);
  return { data: page.data.map(publicImport), next_cursor: page.next_cursor };
}
