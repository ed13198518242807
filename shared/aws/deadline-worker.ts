import { startDueAccessAudits } from '../domain/access-audits/scheduler.js';
import { applyDueDeadlines, type DeadlineRunResult } from '../deadlines/worker.js';
import { logger } from '../logger.js';
import type { Runtime } from '../runtime.js';

/**
 * The deadline worker Lambda (DESIGN D15; an EventBridge Scheduler `rate(1 minute)` schedule invokes it
 * with no payload worth reading): applies the deadlines due now (`applyDueDeadlines`), then starts the daily access
 * audits due now (`startDueAccessAudits`, D34), and logs the counts.
 * Handler failures are logged per deadline and retried by the next run; it throws only when the index
 * cannot be read (the schedule does not retry: the next minute's run does the same work).
 */
export function createDeadlineWorkerHandler(getRuntime: () => Runtime) {
  return async (): Promise<DeadlineRunResult> => {
    const runtime = getRuntime();
    const nowMs = runtime.clock.nowMs();
    const result = await applyDueDeadlines(runtime, nowMs);
    logger.info('deadlines applied', { ...result });
    logger.info('daily access audits handled', await startDueAccessAudits(runtime, nowMs));
    return result;
  };
}
