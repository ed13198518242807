/**
 * The time port (DESIGN §2). Domain code never calls `Date.now()` directly so tests can move time.
 */
export interface Clock {
  /** Current time in epoch milliseconds. */
  nowMs(): number;
}

/** One minute in milliseconds. */
export const MINUTE_MS = 60_000;
/** One hour in milliseconds. */
export const HOUR_MS = 3_600_000;
/** One day in milliseconds (24 hours: times are UTC, so no day is shorter or longer). */
export const DAY_MS = 86_400_000;

/** The real clock. */
export const systemClock: Clock = { nowMs: () => Date.now() };

/** A clock tests move by hand. */
export interface ManualClock extends Clock {
  /** Moves time forward by `milliseconds`. */
  advance(milliseconds: number): void;
  /** Sets the time (epoch milliseconds). */
  set(epochMs: number): void;
}

/**
 * Creates a {@link ManualClock} starting at `startMs` (epoch milliseconds; default the real current
 * time). Start near real time: DynamoDB Local runs a TTL deletion job, so items whose `expires_at`
 * lies in the real past can vanish mid-test.
 */
export function manualClock(startMs = Date.now()): ManualClock {
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
