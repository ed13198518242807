import { isoTime } from '../../clock.js';
import { keys, secondaryIndex, sortKeyPrefix } from '../../store/keys.js';
import { ConditionFailedError, type Store } from '../../store/store.js';
import { listFilter } from '../../store/pages.js';
import type { Key, TransactionItem } from '../../store/requests.js';
import { deliveryExpiresAt } from './policy.js';
import {
  INDEX_PK,
  INDEX_SK,
  dueSortKey,
  isCancelled,
  parseStoredDeadLetterRef,
  parseStoredDeliveryId,
  pendingIndexOf,
  type DeadLetterRef,
  type StoredDelivery,
  type StoredDeliveryAttempt,
} from './stored.js';

/** Dead-lettering and re-queueing (DESIGN D7, D25): dead → pending, skipped → pending, and the replay sources. */

/**
 * Moves a delivery to `dead` and copies it to the dead-letter table, in one transaction (DESIGN D7):
 * `dead_lettered_at` = `nowMs`, `attempts` and the attempt log `log` as given, no timers, out of the
 * pending index; guarded on the delivery still having the status and attempts it was read with.
 * Returns false when the transaction was cancelled (the delivery changed meanwhile).
 */
export async function writeDead(
  store: Store,
  delivery: StoredDelivery,
  log: readonly StoredDeliveryAttempt[],
  attempts: number,
  nowMs: number,
): Promise<boolean> {
  const deadLetteredAt = isoTime(nowMs);
  try {
    await store.transactWrite([
      {
        Update: {
          Key: keys.delivery(delivery.team_id, delivery.id),
          UpdateExpression: `SET #status = :dead, dead_lettered_at = :at, attempts = :attempts, next_attempt_at = :null, due_at_ms = :null, lease_expires_at_ms = :null, attempt_log = :log REMOVE ${INDEX_PK}, ${INDEX_SK}`,
          ConditionExpression: '#status = :expected_status AND attempts = :expected_attempts',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':dead': 'dead',
            ':at': deadLetteredAt,
            ':attempts': attempts,
            ':null': null,
            ':log': log,
            ':expected_status': delivery.status,
            ':expected_attempts': delivery.attempts,
          },
        },
      },
      {
        Put: {
          table: 'deadLetter',
          Item: {
            ...keys.deadLetter(delivery.team_id, deadLetteredAt, delivery.id),
            delivery_id: delivery.id,
            team_id: delivery.team_id,
            endpoint_id: delivery.endpoint_id,
            event_id: delivery.event_id,
            event_type: delivery.event_type,
            attempts,
            dead_lettered_at: deadLetteredAt,
            // The copy is lean (the delivery row keeps the attempt log), so a replay counts and reads 10,000 of them in a few pages.
            expires_at: deliveryExpiresAt(nowMs),
          },
        },
      },
    ]);
    return true;
  } catch (error) {
    if (isCancelled(error)) return false;
    throw error;
  }
}

/**
 * The conditional update bringing a `from` delivery (dead or skipped) back to `pending` (interface
 * "States", DESIGN D6, D25): attempts 0, attempt 1 due `nowMs`, out of the dead-letter or skipped index
 * and into the pending index, retention restarted from now (TTL housekeeping), on condition that it is
 * still `from` — a dead one with this `dead_lettered_at` — and, with `replayId` (a replay job), that this
 * job has not replayed it before (the row then records the job), so one job never replays a delivery twice.
 */
function requeueUpdate(
  delivery: { id: string; team_id: string; dead_lettered_at?: string },
  from: 'dead' | 'skipped',
  nowMs: number,
  replayId?: string,
) {
  const dead = from === 'dead';
  return {
    Key: keys.delivery(delivery.team_id, delivery.id),
    UpdateExpression: `SET #status = :pending, attempts = :zero, next_attempt_at = :next, due_at_ms = :now, ${INDEX_PK} = :index, ${INDEX_SK} = :sort, expires_at = :expires${dead ? ', dead_lettered_at = :null' : ''}${replayId ? ', last_replay_id = :replay' : ''}`,
    ConditionExpression: `#status = :from${dead ? ' AND dead_lettered_at = :dead_lettered_at' : ''}${replayId ? ' AND (attribute_not_exists(last_replay_id) OR last_replay_id <> :replay)' : ''}`,
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':pending': 'pending',
      ':zero': 0,
      ':next': isoTime(nowMs),
      ':now': nowMs,
      ':index': pendingIndexOf(delivery.id),
      ':sort': dueSortKey(nowMs, delivery.id),
      ':expires': deliveryExpiresAt(nowMs),
      ':from': from,
      ...(dead ? { ':null': null, ':dead_lettered_at': delivery.dead_lettered_at } : {}),
      ...(replayId ? { ':replay': replayId } : {}),
    },
  };
}

/** The transaction items of a dead → pending transition: {@link requeueUpdate} and the deletion of the dead-letter copy. Two items. */
function deadRequeueItems(delivery: DeadLetterRef, nowMs: number, replayId?: string): TransactionItem[] {
  return [
    { Update: requeueUpdate(delivery, 'dead', nowMs, replayId) },
    { Delete: { table: 'deadLetter', Key: keys.deadLetter(delivery.team_id, delivery.dead_lettered_at, delivery.id) } },
  ];
}

/**
 * The dead → pending transition in one transaction (see {@link deadRequeueItems}). Returns false when
 * the transaction was cancelled (already re-queued). The caller queues attempt 1.
 */
export async function writeRequeue(
  store: Store,
  delivery: DeadLetterRef,
  nowMs: number,
  replayId?: string,
): Promise<boolean> {
  try {
    await store.transactWrite(deadRequeueItems(delivery, nowMs, replayId));
    return true;
  } catch (error) {
    if (isCancelled(error)) return false;
    throw error;
  }
}

/**
 * The skipped → pending transition (DESIGN D6, D25), one conditional update ({@link requeueUpdate}).
 * Returns false when the condition failed.
 */
export async function writeSkippedRequeue(
  store: Store,
  delivery: { id: string; team_id: string },
  nowMs: number,
  replayId?: string,
): Promise<boolean> {
  try {
    await store.update(requeueUpdate(delivery, 'skipped', nowMs, replayId));
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}

/** Deliveries one {@link writeRequeueGroup} transaction re-queues at most: dead ones take two items each, skipped ones one (TransactWriteItems holds 100). */
export const REQUEUE_GROUP_SIZE = { dead: 50, skipped: 100 } as const;

/**
 * Re-queues a group of a replay job's candidates (at most {@link REQUEUE_GROUP_SIZE} of `status`) in ONE
 * transaction: each candidate's transition as in {@link writeRequeue} / {@link writeSkippedRequeue}, all
 * or none. Returns false when the transaction was cancelled — one of them was re-queued already (by this
 * job in an earlier run, or by a retry) or changed meanwhile — and nothing was written: the caller then
 * re-queues them one by one. DESIGN D25; 1 request for up to 50 (dead) or 100 (skipped) deliveries.
 */
export async function writeRequeueGroup(
  store: Store,
  candidates: readonly ReplayCandidate[],
  status: 'dead' | 'skipped',
  nowMs: number,
  replayId: string,
): Promise<boolean> {
  if (candidates.length > REQUEUE_GROUP_SIZE[status])
    throw new Error(`a re-queue group holds at most ${REQUEUE_GROUP_SIZE[status]} ${status} deliveries`);
  const items = candidates.flatMap((candidate) =>
    status === 'dead'
      ? deadRequeueItems(candidate, nowMs, replayId)
      : [{ Update: requeueUpdate(candidate, 'skipped', nowMs, replayId) }],
  );
  try {
    await store.transactWrite(items);
    return true;
  } catch (error) {
    if (isCancelled(error)) return false;
    throw error;
  }
}

/** Which deliveries a replay job reads (DESIGN D25): a status, a time window (ISO, inclusive) and optional endpoint and event filters. */
export interface ReplaySource {
  status: 'dead' | 'skipped';
  sinceIso: string;
  untilIso: string;
  endpointId: string | null;
  eventType: string | null;
}

/** A delivery a replay job found: its id and, for dead ones, the key of its dead-letter copy. */
export type ReplayCandidate = DeadLetterRef;

/**
 * The query of a replay source: dead deliveries by key range on the team's dead-letter copies, skipped
 * ones by key range on the team's skipped-deliveries index; both by time, filtered by endpoint and event.
 */
function replaySourceQuery(teamId: string, source: ReplaySource) {
  const condition = listFilter([
    { attribute: 'endpoint_id', equals: source.endpointId ?? undefined },
    { attribute: 'event_type', equals: source.eventType ?? undefined },
  ]);
  const values = condition?.values ?? {};
  const filter = condition ? { FilterExpression: condition.expression, ExpressionAttributeNames: condition.names } : {};
  if (source.status === 'dead') {
    return {
      table: 'deadLetter' as const,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ...values,
        ':pk': keys.teamPartition(teamId),
        ':from': `${sortKeyPrefix.deadLetter}${source.sinceIso}`,
        ':to': `${sortKeyPrefix.deadLetter}${source.untilIso}#~`,
      },
      ...filter,
    };
  }
  return {
    IndexName: secondaryIndex.name,
    KeyConditionExpression: `${INDEX_PK} = :pk AND ${INDEX_SK} BETWEEN :from AND :to`,
    ExpressionAttributeValues: {
      ...values,
      ':pk': keys.skippedDeliveriesIndex(teamId),
      ':from': source.sinceIso,
      ':to': `${source.untilIso}#~`,
    },
    ...filter,
  };
}

/**
 * Counts the deliveries of a replay source, page after page (1 MB each) with `Select: COUNT`, so no item
 * travels back: the dead-letter copies are lean, so 10,000 take a few pages.
 */
export async function countReplaySource(store: Store, teamId: string, source: ReplaySource): Promise<number> {
  let count = 0;
  let startKey: Key | undefined;
  do {
    const result = await store.query({
      ...replaySourceQuery(teamId, source),
      Select: 'COUNT',
      ExclusiveStartKey: startKey,
    });
    count += result.count;
    startKey = result.lastEvaluatedKey;
  } while (startKey);
  return count;
}

/** One page (≤ `limit` read) of a replay source from `startKey`, oldest first. */
export async function queryReplaySource(
  store: Store,
  teamId: string,
  source: ReplaySource,
  startKey: Key | undefined,
  limit: number,
): Promise<{ items: ReplayCandidate[]; lastEvaluatedKey: Key | undefined }> {
  const result = await store.query({ ...replaySourceQuery(teamId, source), ExclusiveStartKey: startKey, Limit: limit });
  return {
    items: result.items.map((item) => {
      if (source.status !== 'dead')
        return { id: parseStoredDeliveryId(item).id, team_id: teamId, dead_lettered_at: '' };
      const copy = parseStoredDeadLetterRef(item);
      return { id: copy.delivery_id, team_id: teamId, dead_lettered_at: copy.dead_lettered_at };
    }),
    lastEvaluatedKey: result.lastEvaluatedKey,
  };
}
