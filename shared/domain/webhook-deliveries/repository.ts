import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import type { StoredEvent } from '../../events/outbox.js';
import { newDeliveryId } from '../../ids.js';
import type { DeliveryMessage, Runtime } from '../../runtime.js';
import { entity, keys, secondaryIndex, sortKeyPrefix } from '../../store/keys.js';
import { ConditionFailedError, TransactionCanceledError, decodeCursor, encodeCursor, type Item, type Key, type Page, type Store } from '../../store/store.js';
import { LEASE_MS, OUTBOX_PAGE_SIZE, TIMER_EARLY_TOLERANCE_MS, WORKER_PAGE_SIZE, deliveryExpiresAt } from './policy.js';
import type { DeliveryAttempt, ListWebhookDeliveriesQuery, WebhookDelivery } from './schema.js';
import type { AttemptTransition, DeliveryState } from './state-machine.js';

/**
 * Persistence of webhook deliveries (DESIGN D7, D14) over the Store port. A delivery item lives in the
 * team's partition (`TEAM#<team>`, `DELIVERY#<dlv_ id>`); while it waits for an attempt (or its lease
 * or dead-letter timer) it is also in the sparse pending-deliveries index at its due time, so the
 * sweeper finds lost timers. Dead deliveries are copied to the dead-letter table. The expressions of
 * the hot paths (lease, attempt record, dead-lettering) are written out here by hand.
 */

/** Attribute names of the sparse index (`gsi1pk`, `gsi1sk`), written into the expressions below. */
const INDEX_PK = secondaryIndex.partitionKey;
const INDEX_SK = secondaryIndex.sortKey;

/** A delivery as stored: the public fields plus its team, timers, lease and the whole attempt log. */
export type StoredDelivery = WebhookDelivery &
  DeliveryState & {
    team_id: string;
    /** Epoch MILLISECONDS of the next attempt (pending) or of dead-lettering (pending after attempt 8). */
    due_at_ms: number | null;
    /** Epoch MILLISECONDS at which an in-flight attempt's lease runs out; null when not delivering. */
    lease_expires_at_ms: number | null;
    attempt_log: DeliveryAttempt[];
  };

/** Which delivery a dead-letter copy names, as replay-dead reads it. */
export interface DeadLetterRef {
  id: string;
  team_id: string;
  /** ISO time; part of the dead-letter copy's key. */
  dead_lettered_at: string;
}

/** A stored delivery item as read (items are written only by this module). */
const asDelivery = (item: Item) => item as unknown as StoredDelivery;
/** A stored event item as read (written by the unit of work's `tx.emit`). */
const asEvent = (item: Item) => item as unknown as StoredEvent;

/**
 * True for a failed condition and for a cancelled transaction (a condition, or a conflict with another
 * transaction): the callers treat both as "someone else got there first", as they always did.
 */
function isCancelled(error: unknown): boolean {
  return error instanceof ConditionFailedError || error instanceof TransactionCanceledError;
}

/** The public view of a stored delivery; `withAttempts` adds `attempt_log` (single reads). */
export function publicDelivery(item: StoredDelivery, withAttempts: boolean): WebhookDelivery {
  const delivery: WebhookDelivery = {
    id: item.id,
    endpoint_id: item.endpoint_id,
    event_id: item.event_id,
    event_type: item.event_type,
    status: item.status,
    attempts: item.attempts,
    next_attempt_at: item.next_attempt_at ?? null,
    last_attempt_at: item.last_attempt_at ?? null,
    dead_lettered_at: item.dead_lettered_at ?? null,
    created_at: item.created_at,
  };
  if (withAttempts) delivery.attempt_log = item.attempt_log ?? [];
  return delivery;
}

/** Sort key in the pending-deliveries index: the due time (epoch ms) zero-padded to 15 digits, then the id. */
export function dueSortKey(dueAtMs: number, deliveryId: string): string {
  return `${String(Math.max(0, Math.floor(dueAtMs))).padStart(15, '0')}#${deliveryId}`;
}

/**
 * A new delivery item of `event` to one endpoint: pending, no attempt yet, attempt 1 due now, in the
 * pending-deliveries index; kept {@link deliveryExpiresAt} (30 days).
 */
export function newDeliveryItem(clock: Clock, teamId: string, endpointId: string, event: Pick<StoredEvent, 'id' | 'type'>): StoredDelivery & Item {
  const nowMs = clock.nowMs();
  const id = newDeliveryId(nowMs);
  return {
    ...keys.delivery(teamId, id),
    entity: entity.delivery,
    id,
    team_id: teamId,
    endpoint_id: endpointId,
    event_id: event.id,
    event_type: event.type,
    status: 'pending',
    attempts: 0,
    next_attempt_at: isoTime(nowMs),
    last_attempt_at: null,
    dead_lettered_at: null,
    created_at: isoTime(nowMs),
    due_at_ms: nowMs,
    lease_expires_at_ms: null,
    attempt_log: [],
    [INDEX_PK]: keys.pendingDeliveriesIndex,
    [INDEX_SK]: dueSortKey(nowMs, id),
    expires_at: deliveryExpiresAt(nowMs),
  };
}

/** Reads a stored delivery (strongly consistent) or null. */
export async function loadDelivery(store: Store, teamId: string, deliveryId: string): Promise<StoredDelivery | null> {
  const item = await store.get(keys.delivery(teamId, deliveryId), { consistent: true });
  return item ? asDelivery(item) : null;
}

/** Reads a stored event (eventually consistent: an event never changes after fan-out) or null. */
export async function loadEvent(store: Store, teamId: string, eventId: string): Promise<StoredEvent | null> {
  const item = await store.get(keys.event(teamId, eventId), { consistent: false });
  return item ? asEvent(item) : null;
}

/** Reads one delivery of the principal's team with its attempt records. Errors: NOT_FOUND when absent or foreign. */
export async function getDelivery(runtime: Pick<Runtime, 'store'>, principal: Principal, deliveryId: string): Promise<WebhookDelivery> {
  const delivery = await loadDelivery(runtime.store, principal.teamId, deliveryId);
  if (!delivery) throw new ProblemError('NOT_FOUND', `No webhook delivery ${deliveryId}.`);
  return publicDelivery(delivery, true);
}

/**
 * Lists the team's deliveries, newest first, optionally filtered by endpoint, status and event type,
 * paged (DESIGN D12). Filters are applied by DynamoDB, so a page may be short while `next_cursor` is
 * set. Errors: VALIDATION_FAILED for a cursor of another list.
 */
export async function listDeliveries(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  query: Pick<ListWebhookDeliveriesQuery, 'limit' | 'cursor' | 'endpoint_id' | 'status' | 'event_type'>,
): Promise<Page<WebhookDelivery>> {
  const partition = keys.teamPartition(principal.teamId);
  const filters: string[] = [];
  const values: Record<string, unknown> = { ':pk': partition, ':prefix': sortKeyPrefix.delivery };
  const names: Record<string, string> = {};
  if (query.endpoint_id) {
    filters.push('endpoint_id = :endpoint');
    values[':endpoint'] = query.endpoint_id;
  }
  if (query.status) {
    filters.push('#status = :status');
    names['#status'] = 'status';
    values[':status'] = query.status;
  }
  if (query.event_type) {
    filters.push('event_type = :event_type');
    values[':event_type'] = query.event_type;
  }
  const result = await runtime.store.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    FilterExpression: filters.length ? filters.join(' AND ') : undefined,
    ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
    ExpressionAttributeValues: values,
    ScanIndexForward: false,
    Limit: query.limit,
    ExclusiveStartKey: decodeCursor(query.cursor, partition, { sortKeyPrefix: sortKeyPrefix.delivery }),
  });
  return { data: result.items.map((item) => publicDelivery(asDelivery(item), false)), next_cursor: encodeCursor(result.lastEvaluatedKey) };
}

/**
 * Writes a fan-out in one transaction (DESIGN D6): the event's "fanned out" mark (which also takes it
 * out of the outbox index) guarded on the mark being absent, and the new delivery items. Returns false
 * when the transaction was cancelled (already fanned out, the event is gone, or a conflict: the event
 * stays in the outbox for the sweeper).
 */
export async function writeFanOut(store: Store, event: Pick<StoredEvent, 'id' | 'team_id'>, deliveries: readonly Item[], nowMs: number): Promise<boolean> {
  try {
    await store.transactWrite([
      {
        Update: {
          Key: keys.event(event.team_id, event.id),
          UpdateExpression: `SET fanned_out_at = :now, delivery_count = :count REMOVE ${INDEX_PK}, ${INDEX_SK}`,
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(fanned_out_at)',
          ExpressionAttributeValues: { ':now': isoTime(nowMs), ':count': deliveries.length },
        },
      },
      ...deliveries.map((Item) => ({ Put: { Item, ConditionExpression: 'attribute_not_exists(pk)' } })),
    ]);
    return true;
  } catch (error) {
    if (isCancelled(error)) return false;
    throw error;
  }
}

/**
 * Takes the `delivering` lease for attempt `message.attempt` with one conditional update, so a
 * duplicate or stale message never causes a second concurrent attempt (DESIGN D7). Succeeds when the
 * delivery is pending with `attempt - 1` attempts made and due (up to {@link TIMER_EARLY_TOLERANCE_MS}
 * early), or when a previous holder of this same attempt crashed (its lease expired). The lease lasts
 * {@link LEASE_MS}. Returns the delivery after the update, or null when it is not ours.
 */
export async function takeLease(store: Store, message: DeliveryMessage, nowMs: number): Promise<StoredDelivery | null> {
  try {
    const attributes = await store.update({
      Key: keys.delivery(message.team_id, message.delivery_id),
      UpdateExpression: `SET #status = :delivering, attempts = :attempt, lease_expires_at_ms = :lease, ${INDEX_SK} = :sweep`,
      ConditionExpression:
        '(#status = :pending AND attempts = :previous AND due_at_ms <= :due_limit) OR (#status = :delivering AND attempts = :attempt AND lease_expires_at_ms < :now)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':delivering': 'delivering',
        ':pending': 'pending',
        ':attempt': message.attempt,
        ':previous': message.attempt - 1,
        ':lease': nowMs + LEASE_MS,
        ':now': nowMs,
        ':due_limit': nowMs + TIMER_EARLY_TOLERANCE_MS,
        // While in flight the row sits in the pending index at its lease expiry, so the sweeper re-queues a crashed attempt.
        ':sweep': dueSortKey(nowMs + LEASE_MS, message.delivery_id),
      },
      ReturnValues: 'ALL_NEW',
    });
    return asDelivery(attributes!);
  } catch (error) {
    if (error instanceof ConditionFailedError) return null;
    throw error;
  }
}

/**
 * Records an attempt's outcome on the delivery, on condition that the lease of this attempt is still
 * ours (`delivering` with `attempts = message.attempt`): the new status and timers of `transition`,
 * `last_attempt_at` and the attempt log `log` (already holding `record`). A succeeded delivery leaves
 * the pending index; a pending one sits in it at its new due time. Returns false when the lease was
 * lost (it expired and another dispatcher took this attempt over: that one records the outcome).
 */
export async function writeAttemptOutcome(
  store: Store,
  message: DeliveryMessage,
  record: DeliveryAttempt,
  log: readonly DeliveryAttempt[],
  transition: AttemptTransition,
): Promise<boolean> {
  let update: { expression: string; values: Record<string, unknown>; remove?: string };
  if (transition.outcome === 'succeeded') {
    update = {
      expression: '#status = :succeeded, next_attempt_at = :null, due_at_ms = :null, lease_expires_at_ms = :null',
      values: { ':succeeded': 'succeeded' },
      remove: `${INDEX_PK}, ${INDEX_SK}`,
    };
  } else if (transition.outcome === 'retry_scheduled') {
    update = {
      expression: `#status = :pending, next_attempt_at = :next, due_at_ms = :due, lease_expires_at_ms = :null, ${INDEX_PK} = :index, ${INDEX_SK} = :sort`,
      values: { ':pending': 'pending', ':next': isoTime(transition.nextAttemptAtMs), ':due': transition.dueAtMs, ':index': keys.pendingDeliveriesIndex, ':sort': dueSortKey(transition.dueAtMs, message.delivery_id) },
    };
  } else {
    update = {
      expression: `#status = :pending, next_attempt_at = :null, due_at_ms = :due, lease_expires_at_ms = :null, ${INDEX_PK} = :index, ${INDEX_SK} = :sort`,
      values: { ':pending': 'pending', ':due': transition.dueAtMs, ':index': keys.pendingDeliveriesIndex, ':sort': dueSortKey(transition.dueAtMs, message.delivery_id) },
    };
  }
  try {
    await store.update({
      Key: keys.delivery(message.team_id, message.delivery_id),
      UpdateExpression: `SET ${update.expression}, last_attempt_at = :attempted_at, attempt_log = :log${update.remove ? ` REMOVE ${update.remove}` : ''}`,
      ConditionExpression: '#status = :delivering AND attempts = :attempt',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ...update.values, ':null': null, ':delivering': 'delivering', ':attempt': message.attempt, ':attempted_at': record.attempted_at, ':log': log },
    });
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}

/**
 * Moves a delivery to `dead` and copies it to the dead-letter table, in one transaction (DESIGN D7):
 * `dead_lettered_at` = `nowMs`, `attempts` and the attempt log `log` as given, no timers, out of the
 * pending index; guarded on the delivery still having the status and attempts it was read with.
 * Returns false when the transaction was cancelled (the delivery changed meanwhile).
 */
export async function writeDead(store: Store, delivery: StoredDelivery, log: readonly DeliveryAttempt[], attempts: number, nowMs: number): Promise<boolean> {
  const deadLetteredAt = isoTime(nowMs);
  try {
    await store.transactWrite([
      {
        Update: {
          Key: keys.delivery(delivery.team_id, delivery.id),
          UpdateExpression: `SET #status = :dead, dead_lettered_at = :at, attempts = :attempts, next_attempt_at = :null, due_at_ms = :null, lease_expires_at_ms = :null, attempt_log = :log REMOVE ${INDEX_PK}, ${INDEX_SK}`,
          ConditionExpression: '#status = :expected_status AND attempts = :expected_attempts',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: { ':dead': 'dead', ':at': deadLetteredAt, ':attempts': attempts, ':null': null, ':log': log, ':expected_status': delivery.status, ':expected_attempts': delivery.attempts },
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
            attempt_log: log,
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
 * The dead → pending transition in one transaction (interface "States"): the delivery row is reset
 * (attempts 0, due `nowMs`, back in the pending index, retention restarted) on condition that it is
 * still dead with this `dead_lettered_at`, and its dead-letter copy is deleted. Returns false when the
 * transaction was cancelled (already re-queued). The caller queues attempt 1.
 */
export async function writeRequeue(store: Store, delivery: DeadLetterRef, nowMs: number): Promise<boolean> {
  try {
    await store.transactWrite([
      {
        Update: {
          Key: keys.delivery(delivery.team_id, delivery.id),
          // A re-queued delivery lives another retention period from now (TTL housekeeping).
          UpdateExpression: `SET #status = :pending, attempts = :zero, next_attempt_at = :next, due_at_ms = :now, dead_lettered_at = :null, ${INDEX_PK} = :index, ${INDEX_SK} = :sort, expires_at = :expires`,
          ConditionExpression: '#status = :dead AND dead_lettered_at = :dead_lettered_at',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: {
            ':pending': 'pending',
            ':zero': 0,
            ':next': isoTime(nowMs),
            ':now': nowMs,
            ':null': null,
            ':index': keys.pendingDeliveriesIndex,
            ':sort': dueSortKey(nowMs, delivery.id),
            ':dead': 'dead',
            ':dead_lettered_at': delivery.dead_lettered_at,
            ':expires': deliveryExpiresAt(nowMs),
          },
        },
      },
      { Delete: { table: 'deadLetter', Key: keys.deadLetter(delivery.team_id, delivery.dead_lettered_at, delivery.id) } },
    ]);
    return true;
  } catch (error) {
    if (isCancelled(error)) return false;
    throw error;
  }
}

/**
 * One page (≤ {@link WORKER_PAGE_SIZE}) of the team's dead-letter copies whose `dead_lettered_at` is at
 * or after `sinceIso`, oldest first, by key range on the dead-letter table.
 */
export async function queryDeadLetters(store: Store, teamId: string, sinceIso: string, startKey: Key | undefined): Promise<{ items: DeadLetterRef[]; lastEvaluatedKey: Key | undefined }> {
  const result = await store.query({
    table: 'deadLetter',
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': keys.teamPartition(teamId), ':from': `${sortKeyPrefix.deadLetter}${sinceIso}`, ':to': `${sortKeyPrefix.deadLetter}~` },
    ExclusiveStartKey: startKey,
    Limit: WORKER_PAGE_SIZE,
  });
  return {
    items: result.items.map((item) => ({ id: item.delivery_id as string, team_id: teamId, dead_lettered_at: item.dead_lettered_at as string })),
    lastEvaluatedKey: result.lastEvaluatedKey,
  };
}

/**
 * One page (≤ {@link WORKER_PAGE_SIZE}) of the pending-deliveries index: every delivery (of any team)
 * whose due time — next attempt, dead-letter timer or lease expiry — is before `beforeMs` (epoch ms).
 */
export async function queryOverdueDeliveries(store: Store, beforeMs: number, startKey: Key | undefined): Promise<{ items: StoredDelivery[]; lastEvaluatedKey: Key | undefined }> {
  const result = await store.query({
    IndexName: secondaryIndex.name,
    KeyConditionExpression: `${INDEX_PK} = :index AND ${INDEX_SK} < :limit`,
    ExpressionAttributeValues: { ':index': keys.pendingDeliveriesIndex, ':limit': dueSortKey(beforeMs, '') },
    ExclusiveStartKey: startKey,
    Limit: WORKER_PAGE_SIZE,
  });
  return { items: result.items.map(asDelivery), lastEvaluatedKey: result.lastEvaluatedKey };
}

/** One page (≤ {@link OUTBOX_PAGE_SIZE}) of the outbox index: events (of any team) not fanned out yet, oldest first. */
export async function queryOutbox(store: Store, startKey: Key | undefined): Promise<{ items: StoredEvent[]; lastEvaluatedKey: Key | undefined }> {
  const result = await store.query({
    IndexName: secondaryIndex.name,
    KeyConditionExpression: `${INDEX_PK} = :outbox`,
    ExpressionAttributeValues: { ':outbox': keys.outboxIndex },
    ExclusiveStartKey: startKey,
    Limit: OUTBOX_PAGE_SIZE,
  });
  return { items: result.items.map(asEvent), lastEvaluatedKey: result.lastEvaluatedKey };
}
