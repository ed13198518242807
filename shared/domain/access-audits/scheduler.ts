import pMap from 'p-map';
import { logger } from '../../logger.js';
import type { Runtime } from '../../runtime.js';
import { accessAuditScheduleStore } from '../../store/access-audit-schedule.js';
import type { Key } from '../../store/requests.js';

/**
 * The daily access audits' run (DESIGN D34), beside the deadline worker's: pages the projects whose audit is due and
 * hands each to the schedule's handler, loaded on first use so the worker's entry stays small.
 */

/** Most projects one run handles (the rest wait for the next run, a minute later). */
const MAX_PER_RUN = 500;
/** Projects handled at the same time. */
const CONCURRENCY = 4;

/**
 * Starts the daily audits due at `nowMs` (epoch ms), oldest first, ≤ {@link MAX_PER_RUN}; answers how many were handled
 * and how many failed (logged; each stays due and is tried again by the next run). Throws only when the index is
 * unreadable.
 */
export async function startDueAccessAudits(
  runtime: Runtime,
  nowMs: number,
): Promise<{ applied: number; failed: number }> {
  const result = { applied: 0, failed: 0 };
  let startKey: Key | undefined;
  do {
    const page = await accessAuditScheduleStore.pageDue(runtime.store, nowMs, startKey);
    if (page.items.length === 0) break;
    const { applyScheduledAccessAudit } = await import('./schedule.js');
    await pMap(
      page.items,
      async (scheduled) => {
        try {
          await applyScheduledAccessAudit(runtime, scheduled);
          result.applied++;
        } catch (error) {
          result.failed++;
          logger.error('daily access audit failed', { project_id: scheduled.projectId, error: error as Error });
        }
      },
      { concurrency: CONCURRENCY },
    );
    startKey = page.lastEvaluatedKey;
  } while (startKey && result.applied + result.failed < MAX_PER_RUN);
  return result;
}
