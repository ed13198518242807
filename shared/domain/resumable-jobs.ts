import type { PipelineMessage, Runtime } from '../runtime.js';
import type { Key } from '../store/requests.js';
import type { Store } from '../store/store.js';
import { SWEEP_GRACE_MS } from './webhook-deliveries/policy.js';

/**
 * Where a resumable job's progress counts as stalled (epoch ms): a job whose last progress (`updated_at`) is older than
 * this at `nowMs` has a crashed worker or a lost message, and the sweeper restarts it. `graceMs` default
 * {@link SWEEP_GRACE_MS}.
 */
export function stalledBefore(nowMs: number, graceMs: number = SWEEP_GRACE_MS): number {
  return nowMs - graceMs;
}

/** True when a job last progressed (`updatedAt`, ISO 8601) before {@link stalledBefore} `nowMs`. */
export function isStalled(updatedAt: string, nowMs: number): boolean {
  return Date.parse(updatedAt) < stalledBefore(nowMs);
}

/**
 * The one restart of the resumable jobs (replays, broadcasts, imports, access-code batches: DESIGN D6, D18, D32, D34):
 * the sweeper queues the next step of every job whose last progress is older than `beforeMs` (epoch ms), its worker
 * having crashed or its message been lost. `pageStalled` reads one page of such jobs (the job's store), `messageOf` is
 * its next step's queue message. Returns the number of jobs restarted.
 */
export async function restartStalledJobs<Job>(
  runtime: Pick<Runtime, 'store' | 'deliveryQueue'>,
  beforeMs: number,
  pageStalled: (
    store: Store,
    beforeMs: number,
    startKey: Key | undefined,
  ) => Promise<{ items: Job[]; lastEvaluatedKey: Key | undefined }>,
  messageOf: (job: Job) => PipelineMessage,
): Promise<number> {
  let count = 0;
  let startKey: Key | undefined;
  do {
    const page = await pageStalled(runtime.store, beforeMs, startKey);
    if (page.items.length) await runtime.deliveryQueue.send(page.items.map(messageOf), 0);
    count += page.items.length;
    startKey = page.lastEvaluatedKey;
  } while (startKey);
  return count;
}
