import type { Runtime } from '../../runtime.js';
import { importStore } from '../../store/imports.js';
import type { Key } from '../../store/requests.js';

/** The sweeper's part of imports (DESIGN D34), apart from the worker so the sweeper's bundle stays small (D23). */

/**
 * Queues the next page of every unfinished import whose last progress is older than `beforeMs` (epoch ms): its worker
 * crashed or its message was lost (the sweeper calls this). Returns the number of jobs restarted.
 */
export async function restartStalledImports(
  runtime: Pick<Runtime, 'store' | 'deliveryQueue'>,
  beforeMs: number,
): Promise<number> {
  let count = 0;
  let startKey: Key | undefined;
  do {
    const page = await importStore.pageStalled(runtime.store, beforeMs, startKey);
    if (page.items.length)
      await runtime.deliveryQueue.send(
        page.items.map((job) => ({
          kind: 'import_page' as const,
          team_id: job.team_id,
          project_id: job.project_id,
          import_id: job.id,
        })),
        0,
      );
    count += page.items.length;
    startKey = page.lastEvaluatedKey;
  } while (startKey);
  return count;
}
