/**
 * Measuring helpers of `npm run bench`: latency summaries of samples (ms), rounding for printing, and a pool that runs
 * tasks at a bounded concurrency.
 *
 * @module
 */

/** Nearest-rank percentile (`p` in 0–100) of samples sorted ascending; NaN when empty. */
function percentile(sortedAscending: readonly number[], p: number): number {
  if (sortedAscending.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sortedAscending.length);
  return sortedAscending[Math.min(sortedAscending.length - 1, Math.max(0, rank - 1))];
}

/** Summary of latency samples in milliseconds. */
export interface LatencySummary {
  count: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
  mean: number;
}

/** Summarises samples (milliseconds): count, p50, p99, min, max, mean. */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
  };
}

/** Rounds to `digits` decimals (for printing and the JSON line). */
export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/**
 * Runs `task(i)` for i in 0..count-1 with at most `concurrency` in flight; resolves when all are done
 * (rejects on the first failure, after the tasks in flight settle).
 */
export async function runPool(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const failures: unknown[] = []; // the first failure only
  const worker = async () => {
    while (failures.length === 0 && next < count) {
      const index = next++;
      try {
        await task(index);
      } catch (error) {
        if (failures.length === 0) failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  if (failures.length > 0) throw failures[0];
}
