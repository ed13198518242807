import type { Clock } from '../../clock.js';
import { isoTime } from '../../clock.js';
import { newUlid } from '../../ids.js';
import { activityStore, type ActivityQuery } from '../../store/activity.js';
import { sortKeyPrefix } from '../../store/keys.js';
import type { Store } from '../../store/store.js';
import type { Item } from '../../store/requests.js';
import type { ActivityEntry, NewActivityEntry } from './schema.js';
import { ttlAttribute } from '../../store/ttl.js';

/** Activity entries are kept 400 days (TTL housekeeping). */
const ACTIVITY_RETENTION_SECONDS = 400 * 24 * 60 * 60;
/** A filtered page reads at most this many DynamoDB pages before answering (with a cursor to continue). */
const MAX_FILTERED_READS = 10;
// Entry ids are monotonic ULIDs (`newUlid`): within one process, entries written in the same
// millisecond (or under a clock that stands still) still sort in write order, so "newest first" is exact.

/**
 * Writes one activity entry for the team (one PutItem): `act_` + a monotonic ULID of the clock's time.
 * `invokeOperation` calls it for every write with a principal (and every `tools/call`), whatever the
 * outcome. The entry holds no request or response body.
 */
export async function recordActivity(
  store: Store,
  clock: Clock,
  teamId: string,
  entry: NewActivityEntry,
): Promise<ActivityEntry> {
  const { entry: full, item } = activityItem(clock, teamId, entry);
  await activityStore.write(store, item);
  return full;
}

/**
 * The stored item of one activity entry (see {@link recordActivity}); `invokeOperation` also adds it to a
 * write's own transaction (`shared/store/request-scope.ts`), so a write costs one transaction.
 */
export function activityItem(
  clock: Clock,
  teamId: string,
  entry: NewActivityEntry,
): { entry: ActivityEntry; item: Item } {
  const nowMs = clock.nowMs();
  const full: ActivityEntry = {
    id: `${sortKeyPrefix.activity}${newUlid(nowMs)}`,
    occurred_at: isoTime(nowMs),
    ...entry,
    member_id: entry.member_id ?? null,
  };
  return {
    entry: full,
    item: activityStore.item(teamId, full, ttlAttribute(nowMs, ACTIVITY_RETENTION_SECONDS)),
  };
}

/**
 * Lists the team's activity, newest first, paged (DESIGN D12), optionally only one token's (`token_id`), one team
 * member's dashboard actions (`member_id`) and/or one operation's (`operation`, a REST operation id or tool name)
 * entries. A page holds `limit` entries whenever that many remain: with filters it reads on (at most {@link
 * MAX_FILTERED_READS} DynamoDB pages) and its cursor points just after its last entry. `next_cursor` is null on the
 * last page. Errors: VALIDATION_FAILED for a cursor of another list.
 */
export async function listActivity(
  store: Store,
  teamId: string,
  query: ActivityQuery,
): Promise<{ data: ActivityEntry[]; next_cursor: string | null }> {
  return activityStore.page(store, teamId, query, MAX_FILTERED_READS);
}
