import type { Clock } from '../../clock.js';
import { isoTime } from '../../clock.js';
import { newUlid } from '../../ids.js';
import { entity, keys, sortKeyPrefix } from '../../store/keys.js';
import type { Store } from '../../store/store.js';
import { decodeCursor, encodeCursor } from '../../store/pages.js';
import type { Item } from '../../store/requests.js';
import type { ActivityEntry, NewActivityEntry } from './schema.js';

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
  await store.put({ Item: item });
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
    item: {
      pk: keys.activityPartition(teamId),
      sk: full.id,
      entity: entity.activity,
      ...full,
      expires_at: Math.floor(nowMs / 1000) + ACTIVITY_RETENTION_SECONDS,
    },
  };
}

/**
 * Lists the team's activity, newest first, paged (DESIGN D12), optionally only one token's
 * (`token_id`), one team member's dashboard actions (`member_id`) and/or one operation's (`operation`, a REST operation id or tool name) entries.
 * A page holds `limit` entries whenever that many remain: with filters it reads on (at most
 * {@link MAX_FILTERED_READS} DynamoDB pages) and its cursor points just after its last entry.
 * `next_cursor` is null on the last page. Errors: VALIDATION_FAILED for a cursor of another list.
 */
export async function listActivity(
  store: Store,
  teamId: string,
  query: { limit: number; cursor?: string; token_id?: string; member_id?: string; operation?: string },
): Promise<{ data: ActivityEntry[]; next_cursor: string | null }> {
  const partition = keys.activityPartition(teamId);
  const filters: string[] = [];
  const values: Record<string, unknown> = { ':pk': partition };
  if (query.token_id) {
    filters.push('token_id = :token');
    values[':token'] = query.token_id;
  }
  if (query.member_id) {
    filters.push('member_id = :member');
    values[':member'] = query.member_id;
  }
  if (query.operation) {
    filters.push('#operation = :operation');
    values[':operation'] = query.operation;
  }
  const data: ActivityEntry[] = [];
  let lastReturnedKey: Record<string, unknown> | undefined;
  let startKey = decodeCursor(query.cursor, partition, { sortKeyPrefix: sortKeyPrefix.activity });
  for (let reads = 0; ; reads++) {
    const result = await store.query({
      KeyConditionExpression: 'pk = :pk',
      FilterExpression: filters.length ? filters.join(' AND ') : undefined,
      ExpressionAttributeNames: query.operation ? { '#operation': 'operation' } : undefined,
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
      Limit: filters.length ? 100 : query.limit - data.length,
      ExclusiveStartKey: startKey,
    });
    for (const item of result.items) {
      if (data.length === query.limit) return { data, next_cursor: encodeCursor(lastReturnedKey) };
      data.push(toEntry(item));
      lastReturnedKey = { pk: item.pk, sk: item.sk };
    }
    if (!result.lastEvaluatedKey) return { data, next_cursor: null };
    if (data.length === query.limit || reads + 1 >= MAX_FILTERED_READS)
      return { data, next_cursor: encodeCursor(result.lastEvaluatedKey) };
    startKey = result.lastEvaluatedKey;
  }
}

function toEntry(item: Item): ActivityEntry {
  return {
    id: item.id,
    occurred_at: item.occurred_at,
    token_id: item.token_id ?? null,
    member_id: item.member_id ?? null,
    surface: item.surface,
    operation: item.operation,
    outcome: item.outcome,
    status: item.status,
    duration_ms: item.duration_ms,
    request_id: item.request_id,
  } as ActivityEntry;
}
