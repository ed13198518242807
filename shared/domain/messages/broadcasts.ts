import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { Runtime } from '../../runtime.js';
import { broadcastStore } from '../../store/broadcasts.js';
import type { Page } from '../../store/pages.js';
import { loadProject, toProject } from '../projects/repository.js';
import { sampleContext } from '../message-templates/sample.js';
import { publicBroadcast, type StoredBroadcast } from './broadcast-record.js';
import type { Broadcast, CreateBroadcastRequest } from './broadcast-schema.js';

/**
 * Broadcasts (DESIGN D32): a creator's message to the consenting subscribers whose subscriptions match an audience.
 * Creating one checks its texts and answers at once with a running job; `broadcast-worker.ts` queues its messages in
 * batches, one queue message per batch, and the message worker counts what was sent or failed.
 */

/**
 * Throws VALIDATION_FAILED naming `subject` or `body` (with Liquid's line and column) when either does not render
 * against the sample context of a broadcast (unknown variables and filters included).
 */
async function requireRenderableTexts(
  project: Parameters<typeof sampleContext>[1],
  request: Pick<CreateBroadcastRequest, 'subject' | 'body'>,
  nowMs: number,
): Promise<void> {
  // Liquid is loaded on first use, in its own chunk, as the template save does (DESIGN D23).
  const { requireRenderable } = await import('../message-templates/validation.js');
  try {
    requireRenderable(
      { email: { subject: request.subject, body: request.body } },
      sampleContext('broadcast', project, nowMs),
    );
  } catch (error) {
    if (!(error instanceof ProblemError) || !error.errors) throw error;
    const errors = error.errors.map((fieldError) => ({ ...fieldError, path: fieldError.path.replace(/^email\./, '') }));
    throw new ProblemError('VALIDATION_FAILED', `The broadcast does not render: ${errors[0].message}`, { errors });
  }
}

/**
 * `POST /v1/projects/{project_id}/broadcasts`: checks the texts, stores a running job and queues its first batch.
 * Answers the job (202). Errors: NOT_FOUND (project absent, foreign or outside the token's projects),
 * VALIDATION_FAILED (a text that does not render, with line and column).
 */
export async function createBroadcast(
  runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>,
  principal: Principal,
  projectId: string,
  request: CreateBroadcastRequest,
): Promise<Broadcast> {
  const project = toProject(await loadProject(runtime.store, principal, projectId));
  const nowMs = runtime.clock.nowMs();
  await requireRenderableTexts(project, request, nowMs);
  const now = isoTime(nowMs);
  const job: StoredBroadcast = {
    id: newUuid(),
    team_id: principal.teamId,
    project_id: projectId,
    status: 'running',
    audience: request.audience,
    delivery: request.delivery,
    subject: request.subject,
    body: request.body,
    queued: 0,
    skipped: 0,
    sent: 0,
    failed: 0,
    created_at: now,
    updated_at: now,
    completed_at: null,
    cursor: null,
    batches: 0,
  };
  await broadcastStore.create(runtime.store, job, nowMs);
  await runtime.deliveryQueue.send(
    [{ kind: 'broadcast_batch', team_id: principal.teamId, project_id: projectId, broadcast_id: job.id }],
    0,
  );
  return publicBroadcast(job);
}

/** `GET /v1/projects/{project_id}/broadcasts/{id}`: the job and its counts. Errors: NOT_FOUND. */
export async function getBroadcast(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  projectId: string,
  broadcastId: string,
): Promise<Broadcast> {
  await loadProject(runtime.store, principal, projectId);
  const job = await broadcastStore.load(runtime.store, principal.teamId, projectId, broadcastId);
  if (!job) throw new ProblemError('NOT_FOUND', `No broadcast ${broadcastId} in this project.`);
  return publicBroadcast(job);
}

/** `GET /v1/projects/{project_id}/broadcasts`: a page of the project's broadcasts, newest first. Errors: NOT_FOUND. */
export async function listBroadcasts(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  projectId: string,
  query: { limit: number; cursor?: string },
): Promise<Page<Broadcast>> {
  await loadProject(runtime.store, principal, projectId);
  const page = await broadcastStore.listPage(runtime.store, principal.teamId, projectId, query);
  return { data: page.data.map(publicBroadcast), next_cursor: page.next_cursor };
}
