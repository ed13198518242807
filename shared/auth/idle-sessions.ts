import type { Key } from '../store/requests.js';
import { idleSessions } from '../store/idle-sessions.js';
import type { Store } from '../store/store.js';

/**
 * What the dashboard's sessions (DESIGN D21) and the subscriber portal's sessions (D27) share: one-time
 * links and sessions that end by idleness, kept as items DynamoDB's TTL removes a day after they expire.
 */

/** A session's last-seen time is written at most this often (milliseconds), so most reads stay reads. */
const SESSION_TOUCH_INTERVAL_MS = 60 * 1000;

/**
 * Moves the last-seen time of the session item `key` (read as `session`) to `nowMs` when it was written
 * at least a minute ago, with its TTL pushed to `idleMs` after now, unless the item is gone (or revoked, with
 * `unlessRevoked`): a session ended meanwhile is left as it is. Mutates `session`.
 */
export async function touchSession(
  store: Store,
  key: Key,
  session: { last_seen_at_ms: number },
  nowMs: number,
  idleMs: number,
  options: { unlessRevoked?: boolean } = {},
): Promise<void> {
  if (nowMs - session.last_seen_at_ms < SESSION_TOUCH_INTERVAL_MS) return;
  await idleSessions.touch(store, key, nowMs, idleMs, options);
  session.last_seen_at_ms = nowMs;
}
