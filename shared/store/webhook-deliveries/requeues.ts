import { isoTime } from '../../clock.js';
import {
  parseStoredDeadLetterRef,
  parseStoredDeliveryId,
  type DeadLetterRef,
  type StoredDelivery,
  type StoredDeliveryAttempt,
} from '../../domain/webhook-deliveries/stored.js';
import { INDEX_PK, INDEX_SK, dueSortKey, pendingIndexOf } from './indexes.js';
import { keys, secondaryIndex, sortKeyPrefix } from '../keys.js';
import { MAX_TRANSACTION_ITEMS, type Store } from '../store.js';
import { listFilter } from '../pages.js';
import type { Key, TransactionItem } from '../requests.js';
import { conditionally } from '../expressions.js';
import { isCancelled } from './cancelled.js';

/**
 * Dead-lettering and re-queueing on the delivery items (DESIGN D7, D25): dead → pending, skipped → pending, and
 * the replay sources (the team's dead-letter copies, its skipped-deliveries index). `expiresAt` is the TTL
 * (epoch SECONDS) the retention policy gives what is written.
 */

/**
 * Which deliveries a replay job reads (DESIGN D25): a status, a time window (ISO, inclusive) and optional endpoint and
 * event filters.
 */
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
 * The conditional update bringing a `from` delivery (dead or skipped) back to `pending`: attempts 0, attempt 1 due
 * `nowMs`, out of the dead-letter or skipped index and into the pending index, retention restarted, on condition
 * that it is still `from` — a dead one with this `dead_lettered_at` — and, with `replayId`, that this job has not
 * replayed it before (the row then records the job).
 */
function requeueUpdate(
  delivery: { id: string; team_id: string; dead_lettered_at?: string },
  from: 'dead' | 'skipped',
  nowMs: number,
  expiresAt: number,
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
      ':expires': expiresAt,
      ':from': from,
      ...(dead ? { ':null': null, ':dead_lettered_at': delivery.dead_lettered_at } : {}),
      ...(replayId ? { ':replay': replayId } : {}),
    },
  };
}

/**
 * The transaction items of a dead → pending transition: {@link requeueUpdate} and the deletion of the dead-letter copy.
 */
function deadRequeueItems(delivery: DeadLetterRef, nowMs: number, expiresAt: number, replayId?: string) {
  return [
    { Update: requeueUpdate(delivery, 'dead', nowMs, expiresAt, replayId) },
    {
      Delete: {
        table: 'deadLetter' as const,
        Key: keys.deadLetter(delivery.team_id, delivery.dead_lettered_at, delivery.id),
      },
    },
  ] satisfies TransactionItem[];
}

/** Runs one transaction; false when it was cancelled (a condition failed or a concurrent transaction won). */
async function transaction(store: Store, items: readonly TransactionItem[]): Promise<boolean> {
  try {
    await store.transactWrite(items);
    return true;
  } catch (error) {
    if (isCancelled(error)) return false;
    throw error;
  }
}

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
 * Deliveries one {@link deliveryRequeues.requeueGroup} re-queues at most: dead ones take two transaction items each,
 * skipped ones one.
 */
export const REQUEUE_GROUP_SIZE = { dead: MAX_TRANSACTION_ITEMS / 2, skipped: MAX_TRANSACTION_ITEMS } as const;

/**
 * The dead-letter and re-queue adapter: a delivery moved to `dead`, dead or skipped ones back to pending (one by one or
 * a replay's group), and a replay source counted and paged; every method takes the Store port.
 */
export const deliveryRequeues = {
  /**
   * Moves a delivery to `dead` and copies it (lean: no attempt log) to the dead-letter table, in one transaction
   * (DESIGN D7): `dead_lettered_at` = `nowMs`, `attempts` and the attempt log `log` as given, no timers, out of the
   * pending index; guarded on the status and attempts it was read with. Returns false when the transaction was
   * cancelled.
   */
  markDead(
    store: Store,
    delivery: StoredDelivery,
    log: readonly StoredDeliveryAttempt[],
    attempts: number,
    nowMs: number,
    expiresAt: number,
  ): Promise<boolean> {
    const deadLetteredAt = isoTime(nowMs);
    return transaction(store, [
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
            expires_at: expiresAt,
          },
        },
      },
    ]);
  },

  /**
   * Dead → pending in one transaction ({@link requeueUpdate} and the copy's deletion). False when cancelled (already
   * re-queued).
   */
  requeueDead(
    store: Store,
    delivery: DeadLetterRef,
    nowMs: number,
    expiresAt: number,
    replayId?: string,
  ): Promise<boolean> {
    return transaction(store, deadRequeueItems(delivery, nowMs, expiresAt, replayId));
  },

  /** Skipped → pending, one conditional update ({@link requeueUpdate}). False when the condition failed. */
  requeueSkipped(
    store: Store,
    delivery: { id: string; team_id: string },
    nowMs: number,
    expiresAt: number,
    replayId?: string,
  ): Promise<boolean> {
    return conditionally(store.update(requeueUpdate(delivery, 'skipped', nowMs, expiresAt, replayId)));
  },

  /**
   * Re-queues a group of a replay job's candidates (at most {@link REQUEUE_GROUP_SIZE} of `status`) in ONE
   * transaction, all or none. Returns false when it was cancelled (one was re-queued already or changed meanwhile):
   * nothing was written, and the caller re-queues them one by one.
   */
  requeueGroup(
    store: Store,
    candidates: readonly ReplayCandidate[],
    status: 'dead' | 'skipped',
    nowMs: number,
    expiresAt: number,
    replayId: string,
  ): Promise<boolean> {
    if (candidates.length > REQUEUE_GROUP_SIZE[status])
      throw new Error(`a re-queue group holds at most ${REQUEUE_GROUP_SIZE[status]} ${status} deliveries`);
    const items = candidates.flatMap((candidate) =>
      status === 'dead'
        ? deadRequeueItems(candidate, nowMs, expiresAt, replayId)
        : [{ Update: requeueUpdate(candidate, 'skipped', nowMs, expiresAt, replayId) }],
    );
    return transaction(store, items);
  },

  /**
   * Counts the deliveries of a replay source, page after page (1 MB each) with `Select: COUNT`, so no item travels
   * back.
   */
  async countSource(store: Store, teamId: string, source: ReplaySource): Promise<number> {
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
  },

  /** One page (≤ `limit` read) of a replay source from `startKey`, oldest first. */
  async pageSource(
    store: Store,
    teamId: string,
    source: ReplaySource,
    startKey: Key | undefined,
    limit: number,
  ): Promise<{ items: ReplayCandidate[]; lastEvaluatedKey: Key | undefined }> {
    const result = await store.query({
      ...replaySourceQuery(teamId, source),
      ExclusiveStartKey: startKey,
      Limit: limit,
    });
    return {
      items: result.items.map((item) => {
        if (source.status !== 'dead')
          return { id: parseStoredDeliveryId(item).id, team_id: teamId, dead_lettered_at: '' };
        const copy = parseStoredDeadLetterRef(item);
        return { id: copy.delivery_id, team_id: teamId, dead_lettered_at: copy.dead_lettered_at };
      }),
      lastEvaluatedKey: result.lastEvaluatedKey,
    };
  },
};
