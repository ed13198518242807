import type { ActivityEntry, ActivitySurface } from '../domain/activity/schema.js';
import { entity, keys, sortKeyPrefix } from './keys.js';
import type { Store } from './store.js';
import { decodeCursor, encodeCursor, listFilter } from './pages.js';
import type { Item } from './requests.js';

/**
 * The activity log's persistence (DESIGN D3, D5): entries in the team's activity partition, sort key the entry id
 * (`act_` + a monotonic ULID), so newest first is a backward query; each kept until its TTL `expires_at`.
 */

/**
 * Which entries a page of the activity log holds: optionally one token's, one team member's, one operation's, one
 * surface's.
 */
export interface ActivityQuery {
  limit: number;
  cursor?: string;
  token_id?: string;
  member_id?: string;
  operation?: string;
  surface?: ActivitySurface;
}

/** The public entry of a stored item. */
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

/** The activity log adapter: an entry's stored item (with its TTL), its write, and a page of the team's entries. */
export const activityStore = {
  /** The stored item of `entry` for team `teamId`, kept until `expiresAt` (epoch SECONDS, the table's TTL). */
  item(teamId: string, entry: ActivityEntry, expiresAt: number): Item {
    return {
      pk: keys.activityPartition(teamId),
      sk: entry.id,
      entity: entity.activity,
      ...entry,
      expires_at: expiresAt,
    };
  },

  /** Writes one entry's item (made by {@link activityStore.item}): one PutItem. */
  async write(store: Store, item: Item): Promise<void> {
    await store.put({ Item: item });
  },

  /**
   * One page of the team's entries, newest first. A page holds `limit` entries whenever that many remain: with
   * filters it reads on (at most `maxReads` DynamoDB pages) and its cursor points just after its last entry.
   * `next_cursor` is null on the last page. Errors: VALIDATION_FAILED for a cursor of another list.
   */
  async page(
    store: Store,
    teamId: string,
    query: ActivityQuery,
    maxReads: number,
  ): Promise<{ data: ActivityEntry[]; next_cursor: string | null }> {
    const partition = keys.activityPartition(teamId);
    const filter = listFilter([
      { attribute: 'token_id', equals: query.token_id || undefined },
      { attribute: 'member_id', equals: query.member_id || undefined },
      { attribute: 'operation', equals: query.operation || undefined },
      { attribute: 'surface', equals: query.surface },
    ]);
    const data: ActivityEntry[] = [];
    let lastReturnedKey: Record<string, unknown> | undefined;
    let startKey = decodeCursor(query.cursor, partition, { sortKeyPrefix: sortKeyPrefix.activity });
    for (let reads = 0; ; reads++) {
      const result = await store.query({
        KeyConditionExpression: 'pk = :pk',
        FilterExpression: filter?.expression,
        ExpressionAttributeNames: filter?.names,
        ExpressionAttributeValues: { ':pk': partition, ...filter?.values },
        ScanIndexForward: false,
        Limit: filter ? 100 : query.limit - data.length,
        ExclusiveStartKey: startKey,
      });
      for (const item of result.items) {
        if (data.length === query.limit) return { data, next_cursor: encodeCursor(lastReturnedKey) };
        data.push(toEntry(item));
        lastReturnedKey = { pk: item.pk, sk: item.sk };
      }
      if (!result.lastEvaluatedKey) return { data, next_cursor: null };
      if (data.length === query.limit || reads + 1 >= maxReads)
        return { data, next_cursor: encodeCursor(result.lastEvaluatedKey) };
      startKey = result.lastEvaluatedKey;
    }
  },
};
