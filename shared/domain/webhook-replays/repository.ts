import type { Principal } from '../../auth/principal.js';
import { HOUR_MS, isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { Runtime } from '../../runtime.js';
import { deliveryRequeues, type ReplaySource } from '../../store/webhook-deliveries/requeues.js';
import { replayJobStore } from '../../store/webhook-replays.js';
import type { ReplayDeadRequest } from '../webhook-deliveries/schema.js';
import type { StoredReplayJob } from './record.js';
import type { WebhookReplay } from './schema.js';

/**
 * Replay jobs (DESIGN D25): creation and reads. A job holds the filters, the counts and the cursor of the next
 * batch; `replayJobStore` (shared/store) keeps it, `worker.ts` runs its batches.
 */

/** The public view of a stored job. */
function publicReplayJob(job: StoredReplayJob): WebhookReplay {
  return {
    id: job.id,
    status: job.status,
    dry_run: job.dry_run,
    matched: job.matched,
    replayed: job.replayed,
    filters: job.filters,
    created_at: job.created_at,
    updated_at: job.updated_at,
    completed_at: job.completed_at ?? null,
  };
}

/** The source a job reads, from its filters. */
export function sourceOf(job: Pick<WebhookReplay, 'filters'>): ReplaySource {
  return {
    status: job.filters.status,
    sinceIso: job.filters.since,
    untilIso: job.filters.until,
    endpointId: job.filters.endpoint_id,
    eventType: job.filters.event_type,
  };
}

/**
 * Creates a replay job (D25) over `since_hours` back to `until` (≤ now); dry runs and empty jobs are stored
 * `completed`, others `running` with batch 1 queued. Returns the job (202). Throws VALIDATION_FAILED when `until`
 * precedes the window; otherwise only store or queue errors.
 */
export async function createReplayJob(
  runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>,
  principal: Principal,
  request: ReplayDeadRequest,
): Promise<WebhookReplay> {
  const nowMs = runtime.clock.nowMs();
  const now = isoTime(nowMs);
  const requestedUntil = request.until ? Date.parse(request.until) : nowMs;
  if (requestedUntil < nowMs - request.since_hours * HOUR_MS) {
    throw new ProblemError(
      'VALIDATION_FAILED',
      `until is before the start of the window (now minus ${request.since_hours} hours).`,
      {
        errors: [{ path: 'until', message: 'must not be before now minus since_hours' }],
      },
    );
  }
  const filters: WebhookReplay['filters'] = {
    status: request.status ?? 'dead',
    since_hours: request.since_hours,
    since: isoTime(nowMs - request.since_hours * HOUR_MS),
    until: isoTime(Math.min(requestedUntil, nowMs)),
    endpoint_id: request.endpoint_id ?? null,
    event_type: request.event_type ?? null,
  };
  const matched = await deliveryRequeues.countSource(runtime.store, principal.teamId, sourceOf({ filters }));
  const dryRun = request.dry_run ?? false;
  const done = dryRun || matched === 0;
  const job: StoredReplayJob = {
    id: newUuid(),
    team_id: principal.teamId,
    status: done ? 'completed' : 'running',
    dry_run: dryRun,
    matched,
    replayed: 0,
    filters,
    created_at: now,
    updated_at: now,
    completed_at: done ? now : null,
    cursor: null,
    batches: 0,
  };
  await replayJobStore.create(runtime.store, job, nowMs);
  if (!done)
    await runtime.deliveryQueue.send([{ kind: 'replay_batch', team_id: principal.teamId, replay_id: job.id }], 0);
  return publicReplayJob(job);
}

/** Reads one job of the principal's team. Errors: NOT_FOUND when absent or another team's. */
export async function getReplayJob(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  replayId: string,
): Promise<WebhookReplay> {
  const job = await replayJobStore.load(runtime.store, principal.teamId, replayId);
  if (!job) throw new ProblemError('NOT_FOUND', `No webhook replay ${replayId}.`);
  return publicReplayJob(job);
}

/**
 * Cancels a running job of the principal's team (no further batch starts; deliveries already re-queued stay so) and
 * returns it; a job cancelled before is returned as it is. Errors: NOT_FOUND when absent or another team's; CONFLICT
 * when the job has completed.
 */
export async function cancelReplayJob(
  runtime: Pick<Runtime, 'store' | 'clock'>,
  principal: Principal,
  replayId: string,
): Promise<WebhookReplay> {
  await replayJobStore.cancel(runtime.store, principal.teamId, replayId, runtime.clock.nowMs());
  const job = await getReplayJob(runtime, principal, replayId);
  if (job.status === 'completed')
    throw new ProblemError(
      'CONFLICT',
      `Webhook replay ${replayId} is completed; only a running replay can be cancelled.`,
    );
  return job;
}
