import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Clock } from './clock.js';
import { isoTime } from './clock.js';
import { newUlid } from './ids.js';
import { keys } from './store/keys.js';
import type { Store } from './store/store.js';
import { decodeCursor, encodeCursor } from './store/store.js';

/** Activity entries are kept 400 days (TTL housekeeping). */
const ACTIVITY_RETENTION_SECONDS = 400 * 24 * 60 * 60;

/**
 * One activity-log entry (interface "Tool-server authorization" 3). Never holds request bodies,
 * so token secrets and webhook secrets cannot reach it.
 */
export interface ActivityEntry {
  id: string;
  occurred_at: string;
  /** The invoking token; null for an unauthenticated request. */
  token_id: string | null;
  surface: 'rest' | 'mcp';
  /** REST operation id or tool name. */
  operation: string;
  /** `ok` or the error code. */
  outcome: string;
  /** HTTP status (tool calls: the status of the error code, 200 when ok). */
  status: number;
  /** Milliseconds. */
  duration_ms: number;
  request_id: string;
}

/** Writes one activity entry for the team (one PutItem). */
export async function recordActivity(store: Store, clock: Clock, teamId: string, entry: Omit<ActivityEntry, 'id' | 'occurred_at'>): Promise<ActivityEntry> {
  const nowMs = clock.nowMs();
  const full: ActivityEntry = { id: `act_${newUlid(nowMs)}`, occurred_at: isoTime(nowMs), ...entry };
  await store.document.send(
    new PutCommand({
      TableName: store.tableName,
      Item: { pk: keys.activityPartition(teamId), sk: full.id, entity: 'activity', ...full, expires_at: Math.floor(nowMs / 1000) + ACTIVITY_RETENTION_SECONDS },
    }),
  );
  return full;
}

/**
 * Lists the team's activity, newest first, paged (DESIGN D12), optionally only one token's or one
 * operation's entries. Filters are applied by DynamoDB, so a page can hold fewer than `limit` entries
 * while `next_cursor` is still set.
 */
export async function listActivity(
  store: Store,
  teamId: string,
  query: { limit: number; cursor?: string; token_id?: string; operation?: string },
): Promise<{ data: ActivityEntry[]; next_cursor: string | null }> {
  const partition = keys.activityPartition(teamId);
  const filters: string[] = [];
  const values: Record<string, unknown> = { ':pk': partition };
  if (query.token_id) {
    filters.push('token_id = :token');
    values[':token'] = query.token_id;
  }
  if (query.operation) {
    filters.push('#operation = :operation');
    values[':operation'] = query.operation;
  }
  const result = await store.document.send(
    new QueryCommand({
      TableName: store.tableName,
      KeyConditionExpression: 'pk = :pk',
      FilterExpression: filters.length ? filters.join(' AND ') : undefined,
      ExpressionAttributeNames: query.operation ? { '#operation': 'operation' } : undefined,
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
      Limit: query.limit,
      ExclusiveStartKey: decodeCursor(query.cursor, partition),
    }),
  );
  const data = (result.Items ?? []).map((item) => ({
    id: item.id,
    occurred_at: item.occurred_at,
    token_id: item.token_id ?? null,
    surface: item.surface,
    operation: item.operation,
    outcome: item.outcome,
    status: item.status,
    duration_ms: item.duration_ms,
    request_id: item.request_id,
  })) as ActivityEntry[];
  return { data, next_cursor: encodeCursor(result.LastEvaluatedKey) };
}
