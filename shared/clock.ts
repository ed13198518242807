/**
 * The time port (DESIGN §2). Domain code never calls `Date.now()` directly so tests can move time.
 */
export interface Clock {
  /** Current time in epoch milliseconds. */
  nowMs(): number;
}

/** The real clock. */
export const systemClock: Clock = { nowMs: () => Date.now() };

/** A clock tests move by hand. */
export interface ManualClock extends Clock {
  /** Moves time forward by `milliseconds`. */
  advance(milliseconds: number): void;
  /** Sets the time (epoch milliseconds). */
  set(epochMs: number): void;
}

/** Creates a {@link ManualClock} starting at `startMs` (epoch milliseconds). */
export function manualClock(startMs = Date.parse('2026-05-01T00:00:00.000Z')): ManualClock {
  let current = startMs;
  return {
    nowMs: () => current,
    advance: (milliseconds) => {
      current += milliseconds;
    },
    set: (epochMs) => {
      current = epochMs;
    },
  };
}

/** ISO 8601 UTC string with `Z` for an epoch-millisecond time (DESIGN D12). */
export function isoTime(epochMs: number): string {
  return new Date(epochMs).toISOString();
}
