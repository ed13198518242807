import type { Principal } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import type { StoredEvent } from '../../events/outbox.js';
import { newDeliveryId } from '../../ids.js';
import type { DeliveryMessage, Runtime } from '../../runtime.js';
import { WORKER_INDEX_SHARDS, entity, keys, secondaryIndex, sortKeyPrefix, workerIndexShard } from '../../store/keys.js';
import { ConditionFailedError, MAX_TRANSACTION_ITEMS, TransactionCanceledError, decodeCursor, encodeCursor, type Item, type Key, type Page, type Store, type TransactionItem } from '../../store/store.js';
import { LEASE_MS, MAX_ATTEMPT_LOG, MAX_SWEEP_SPACING_MS, OUTBOX_PAGE_SIZE, TIMER_EARLY_TOLERANCE_MS, WORKER_PAGE_SIZE, deliveryExpiresAt } from './policy.js';
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
    /** The replay job (DESIGN D25) that last brought it back to pending, if any. */
    last_replay_id?: string;
    /**
     * The exact POST body (the envelope JSON, redacted for the endpoint owner, DESIGN D10), written at
     * fan-out so an attempt does not read the event again.
     */
    body: string;
    /** Times the sweeper re-queued it since its last lease ({@link moveOverdueDelivery}); absent when none. */
    sweeper_requeues?: number;
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
    skipped_at: item.skipped_at ?? null,
    created_at: item.created_at,
  };
  if (withAttempts) delivery.attempt_log = (item.attempt_log ?? []).map(withAttemptDetail);
  return delivery;
}

/** An attempt record with every detail field, null where a record written before the detail existed lacks it. */
function withAttemptDetail(record: DeliveryAttempt): DeliveryAttempt {
  return { ...record, planned_at: record.planned_at ?? null, connect_ms: record.connect_ms ?? null, remote_address: record.remote_address ?? null, tls_version: record.tls_version ?? null };
}

/** The pending-deliveries index partition (one of {@link WORKER_INDEX_SHARDS} shards) of a delivery. */
function pendingIndexOf(deliveryId: string): string {
  return keys.pendingDeliveriesIndex(workerIndexShard(deliveryId));
}

/**
 * Sort key in the pending-deliveries index: the due time (epoch MILLISECONDS) zero-padded to 15 digits,
 * then the id ({@link keys.timeIndexSortKey}, the one definition of the shape; DESIGN D14).
 */
function dueSortKey(dueAtMs: number, deliveryId: string): string {
  return keys.timeIndexSortKey(dueAtMs, deliveryId);
}

/**
 * A new delivery item of `event` to one endpoint: pending, no attempt yet, attempt 1 due now, in the
 * pending-deliveries index; kept {@link deliveryExpiresAt} (30 days). `body` is the exact POST body
 * (`deliveryBody` of fan-out.ts: the envelope redacted for the endpoint owner), kept on the item so the
 * dispatcher sends it without reading the event. With `skipped` (the endpoint is
 * disabled, DESIGN D6) it is recorded as `skipped` instead: no attempt due, not in the pending index but
 * in the team's skipped-deliveries index (by `skipped_at`), where a replay job finds it.
 */
export function newDeliveryItem(clock: Clock, teamId: string, endpointId: string, event: Pick<StoredEvent, 'id' | 'type'>, body: string, options: { skipped?: boolean } = {}): StoredDelivery & Item {
  const nowMs = clock.nowMs();
  const id = newDeliveryId(nowMs);
  if (options.skipped) {
    return {
      ...keys.delivery(teamId, id),
      entity: entity.delivery,
      id,
      team_id: teamId,
      endpoint_id: endpointId,
      event_id: event.id,
      event_type: event.type,
      status: 'skipped',
      attempts: 0,
      next_attempt_at: null,
      last_attempt_at: null,
      dead_lettered_at: null,
      skipped_at: isoTime(nowMs),
      created_at: isoTime(nowMs),
      due_at_ms: null,
      lease_expires_at_ms: null,
      attempt_log: [],
      body,
      [INDEX_PK]: keys.skippedDeliveriesIndex(teamId),
      [INDEX_SK]: `${isoTime(nowMs)}#${id}`,
      expires_at: deliveryExpiresAt(nowMs),
    };
  }
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
    skipped_at: null,
    created_at: isoTime(nowMs),
    due_at_ms: nowMs,
    lease_expires_at_ms: null,
    attempt_log: [],
    body,
    [INDEX_PK]: pendingIndexOf(id),
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

/** One event's fan-out as written by {@link writeFanOuts}: the event and its new delivery items. */
export interface FanOutWrite {
  event: Pick<StoredEvent, 'id' | 'team_id'>;
  deliveries: readonly Item[];
}

/** The transaction items of one fan-out: the event's guarded "fanned out" mark, then its deliveries. */
function fanOutItems({ event, deliveries }: FanOutWrite, nowMs: number): TransactionItem[] {
  return [
    {
      Update: {
        Key: keys.event(event.team_id, event.id),
        UpdateExpression: `SET fanned_out_at = :now, delivery_count = :count REMOVE ${INDEX_PK}, ${INDEX_SK}`,
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(fanned_out_at)',
        ExpressionAttributeValues: { ':now': isoTime(nowMs), ':count': deliveries.length },
      },
    },
    ...deliveries.map((Item) => ({ Put: { Item, ConditionExpression: 'attribute_not_exists(pk)' } })),
  ];
}

/**
 * Writes the fan-outs of several events (DESIGN D6), packed into as few transactions as
 * {@link MAX_TRANSACTION_ITEMS} allows (1 + deliveries per event; one transaction after the other):
 * each event's "fanned out" mark (which also takes it out of the outbox index) guarded on the
 * mark being absent, and its new delivery items. When a transaction is cancelled (one of its events
 * already fanned out or gone, or a conflict) each of its events is written alone. Returns, per fan-out
 * in order, whether it was written (false: already fanned out, the event is gone, or a conflict: the
 * event stays in the outbox for the sweeper). Throws only on store errors.
 */
export async function writeFanOuts(store: Store, fanOuts: readonly FanOutWrite[], nowMs: number): Promise<boolean[]> {
  const packs: Array<{ first: number; items: TransactionItem[][] }> = [];
  fanOuts.forEach((fanOut, index) => {
    const items = fanOutItems(fanOut, nowMs);
    const last = packs.at(-1);
    if (last && last.items.flat().length + items.length <= MAX_TRANSACTION_ITEMS) last.items.push(items);
    else packs.push({ first: index, items: [items] });
  });
  const written: boolean[] = [];
  // One transaction at a time: the relay already reads shards in parallel, and route bundles that write a single delivery stay free of p-map.
  for (const pack of packs) (await writePack(store, pack.items)).forEach((result, offset) => (written[pack.first + offset] = result));
  return written;
}

/** One transaction of several fan-outs' items (an event without deliveries: its mark alone, one UpdateItem); when it is cancelled, each fan-out alone. */
async function writePack(store: Store, pack: readonly TransactionItem[][]): Promise<boolean[]> {
  try {
    const items = pack.flat();
    const only = items.length === 1 ? items[0] : undefined;
    if (only && 'Update' in only) await store.update(only.Update);
    else await store.transactWrite(items);
    return pack.map(() => true);
  } catch (error) {
    if (!isCancelled(error)) throw error;
    if (pack.length === 1) return [false];
    return Promise.all(pack.map(async (items) => (await writePack(store, [items]))[0]));
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
    const attributes = await store.update({ ...leaseUpdate(message, nowMs), ReturnValues: 'ALL_NEW' });
    return asDelivery(attributes!);
  } catch (error) {
    if (error instanceof ConditionFailedError) return null;
    throw error;
  }
}

/**
 * The lease update of {@link takeLease}. With `logRoom`, it also requires room for one more record in
 * the attempt log (fewer than {@link MAX_ATTEMPT_LOG}), so an outcome can append its record without
 * having read the log.
 */
function leaseUpdate(message: DeliveryMessage, nowMs: number, options: { logRoom?: boolean } = {}) {
  const condition =
    '(#status = :pending AND attempts = :previous AND due_at_ms <= :due_limit) OR (#status = :delivering AND attempts = :attempt AND lease_expires_at_ms < :now)';
  return {
    Key: keys.delivery(message.team_id, message.delivery_id),
    UpdateExpression: `SET #status = :delivering, attempts = :attempt, lease_expires_at_ms = :lease, ${INDEX_SK} = :sweep REMOVE sweeper_requeues`,
    ConditionExpression: options.logRoom ? `(${condition}) AND (attribute_not_exists(attempt_log) OR size(attempt_log) < :log_room)` : condition,
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
      ...(options.logRoom ? { ':log_room': MAX_ATTEMPT_LOG } : {}),
    },
  };
}

/** What {@link takeLeaseWithSlot} found: both taken, the delivery not leasable, the slot refused (the endpoint as found, absent when deleted), or a conflict. */
export type LeaseWithSlot = { kind: 'leased' } | { kind: 'lease_refused' } | { kind: 'slot_refused'; endpoint: Item | undefined } | { kind: 'conflict' };

/**
 * Takes the lease of attempt `message.attempt` ({@link takeLease}'s conditions, plus room in the attempt
 * log) and the endpoint's concurrency slot `slot` (a transaction item that asks for the endpoint as
 * found when its condition fails) in ONE TransactWriteItems, without reading the delivery
 * (DESIGN D7, D24). Nothing is written unless both are taken. Throws only on store errors.
 */
export async function takeLeaseWithSlot(store: Store, message: DeliveryMessage, slot: TransactionItem, nowMs: number): Promise<LeaseWithSlot> {
  try {
    await store.transactWrite([{ Update: leaseUpdate(message, nowMs, { logRoom: true }) }, slot]);
    return { kind: 'leased' };
  } catch (error) {
    if (error instanceof ConditionFailedError) {
      if (error.failedItems.includes(0)) return { kind: 'lease_refused' };
      return { kind: 'slot_refused', endpoint: error.itemsAsFound[1] };
    }
    if (error instanceof TransactionCanceledError) return { kind: 'conflict' };
    throw error;
  }
}

/**
 * Records an attempt's outcome on the delivery, on condition that the lease of this attempt is still
 * ours (`delivering` with `attempts = message.attempt`): the new status and timers of `transition`,
 * `last_attempt_at` and the attempt log: `log` (already holding `record`), or with `'append'` the stored
 * log plus `record` (for a lease taken with room in the log, {@link takeLeaseWithSlot}). A succeeded delivery leaves
 * the pending index; a pending one sits in it at its new due time. Returns false when the lease was
 * lost (it expired and another dispatcher took this attempt over: that one records the outcome).
 */
export async function writeAttemptOutcome(
  store: Store,
  message: DeliveryMessage,
  record: DeliveryAttempt,
  log: readonly DeliveryAttempt[] | 'append',
  transition: AttemptTransition,
  alongside?: TransactionItem,
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
      values: { ':pending': 'pending', ':next': isoTime(transition.nextAttemptAtMs), ':due': transition.dueAtMs, ':index': pendingIndexOf(message.delivery_id), ':sort': dueSortKey(transition.dueAtMs, message.delivery_id) },
    };
  } else {
    update = {
      expression: `#status = :pending, next_attempt_at = :null, due_at_ms = :due, lease_expires_at_ms = :null, ${INDEX_PK} = :index, ${INDEX_SK} = :sort`,
      values: { ':pending': 'pending', ':due': transition.dueAtMs, ':index': pendingIndexOf(message.delivery_id), ':sort': dueSortKey(transition.dueAtMs, message.delivery_id) },
    };
  }
  // A lease taken with room in the log (takeLeaseWithSlot) appends the record without having read the log.
  const appending = log === 'append';
  const logClause = appending ? 'attempt_log = list_append(if_not_exists(attempt_log, :no_log), :log)' : 'attempt_log = :log';
  const outcome = {
    Key: keys.delivery(message.team_id, message.delivery_id),
    UpdateExpression: `SET ${update.expression}, last_attempt_at = :attempted_at, ${logClause}${update.remove ? ` REMOVE ${update.remove}` : ''}`,
    ConditionExpression: '#status = :delivering AND attempts = :attempt',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ...update.values,
      ':null': null,
      ':delivering': 'delivering',
      ':attempt': message.attempt,
      ':attempted_at': record.attempted_at,
      ...(appending ? { ':log': [record], ':no_log': [] } : { ':log': log }),
    },
  };
  try {
    if (alongside) {
      try {
        await store.transactWrite([{ Update: outcome }, alongside]);
        return true;
      } catch (error) {
        // Only the companion's condition failed (its item is gone): record the outcome alone.
        if (!(error instanceof ConditionFailedError && !error.failedItems.includes(0))) throw error;
      }
    }
    await store.update(outcome);
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}

/**
 * Puts attempt `message.attempt` off without counting it (DESIGN D24: the endpoint's concurrency cap
 * was full): pending with `attempt - 1` attempts, due at `dueAtMs` (epoch ms), in the pending index at
 * that time. `leased`: the lease was taken and is given back (`delivering` with this attempt); otherwise
 * the delivery is still pending with `attempt - 1` attempts (the lease and slot transaction was refused
 * on the slot alone). Returns false when the delivery was no longer in that state.
 */
export async function writeDeferral(store: Store, message: DeliveryMessage & { kind: 'attempt' }, dueAtMs: number, options: { leased: boolean } = { leased: true }): Promise<boolean> {
  try {
    await store.update({
      Key: keys.delivery(message.team_id, message.delivery_id),
      UpdateExpression: `SET #status = :pending, attempts = :previous, next_attempt_at = :next, due_at_ms = :due, lease_expires_at_ms = :null, ${INDEX_PK} = :index, ${INDEX_SK} = :sort`,
      ConditionExpression: options.leased ? '#status = :delivering AND attempts = :attempt' : '#status = :pending AND attempts = :previous',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':pending': 'pending',
        ':previous': message.attempt - 1,
        ':next': isoTime(dueAtMs),
        ':due': dueAtMs,
        ':null': null,
        ':index': pendingIndexOf(message.delivery_id),
        ':sort': dueSortKey(dueAtMs, message.delivery_id),
        ...(options.leased ? { ':delivering': 'delivering', ':attempt': message.attempt } : {}),
      },
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
function requeueUpdate(delivery: { id: string; team_id: string; dead_lettered_at?: string }, from: 'dead' | 'skipped', nowMs: number, replayId?: string) {
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
export async function writeRequeue(store: Store, delivery: DeadLetterRef, nowMs: number, replayId?: string): Promise<boolean> {
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
export async function writeSkippedRequeue(store: Store, delivery: { id: string; team_id: string }, nowMs: number, replayId?: string): Promise<boolean> {
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
export async function writeRequeueGroup(store: Store, candidates: readonly ReplayCandidate[], status: 'dead' | 'skipped', nowMs: number, replayId: string): Promise<boolean> {
  if (candidates.length > REQUEUE_GROUP_SIZE[status]) throw new Error(`a re-queue group holds at most ${REQUEUE_GROUP_SIZE[status]} ${status} deliveries`);
  const items = candidates.flatMap((candidate) => (status === 'dead' ? deadRequeueItems(candidate, nowMs, replayId) : [{ Update: requeueUpdate(candidate, 'skipped', nowMs, replayId) }]));
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
  const filters: string[] = [];
  const values: Record<string, unknown> = {};
  if (source.endpointId) {
    filters.push('endpoint_id = :endpoint');
    values[':endpoint'] = source.endpointId;
  }
  if (source.eventType) {
    filters.push('event_type = :event_type');
    values[':event_type'] = source.eventType;
  }
  const filter = filters.length ? { FilterExpression: filters.join(' AND ') } : {};
  if (source.status === 'dead') {
    return {
      table: 'deadLetter' as const,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ...values, ':pk': keys.teamPartition(teamId), ':from': `${sortKeyPrefix.deadLetter}${source.sinceIso}`, ':to': `${sortKeyPrefix.deadLetter}${source.untilIso}#~` },
      ...filter,
    };
  }
  return {
    IndexName: secondaryIndex.name,
    KeyConditionExpression: `${INDEX_PK} = :pk AND ${INDEX_SK} BETWEEN :from AND :to`,
    ExpressionAttributeValues: { ...values, ':pk': keys.skippedDeliveriesIndex(teamId), ':from': source.sinceIso, ':to': `${source.untilIso}#~` },
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
    const result = await store.query({ ...replaySourceQuery(teamId, source), Select: 'COUNT', ExclusiveStartKey: startKey });
    count += result.count;
    startKey = result.lastEvaluatedKey;
  } while (startKey);
  return count;
}

/** One page (≤ `limit` read) of a replay source from `startKey`, oldest first. */
export async function queryReplaySource(store: Store, teamId: string, source: ReplaySource, startKey: Key | undefined, limit: number): Promise<{ items: ReplayCandidate[]; lastEvaluatedKey: Key | undefined }> {
  const result = await store.query({ ...replaySourceQuery(teamId, source), ExclusiveStartKey: startKey, Limit: limit });
  return {
    items: result.items.map((item) =>
      source.status === 'dead'
        ? { id: item.delivery_id as string, team_id: teamId, dead_lettered_at: item.dead_lettered_at as string }
        : { id: item.id as string, team_id: teamId, dead_lettered_at: '' },
    ),
    lastEvaluatedKey: result.lastEvaluatedKey,
  };
}

/**
 * One page (≤ {@link WORKER_PAGE_SIZE}) of shard `shard` of the pending-deliveries index: every delivery
 * (of any team) whose due time — next attempt, dead-letter timer or lease expiry — is before `beforeMs`.
 */
export async function queryOverdueDeliveries(store: Store, shard: number, beforeMs: number, startKey: Key | undefined): Promise<{ items: StoredDelivery[]; lastEvaluatedKey: Key | undefined }> {
  const result = await store.query({
    IndexName: secondaryIndex.name,
    KeyConditionExpression: `${INDEX_PK} = :index AND ${INDEX_SK} < :limit`,
    ExpressionAttributeValues: { ':index': keys.pendingDeliveriesIndex(shard), ':limit': dueSortKey(beforeMs, '') },
    ExclusiveStartKey: startKey,
    Limit: WORKER_PAGE_SIZE,
  });
  return { items: result.items.map(asDelivery), lastEvaluatedKey: result.lastEvaluatedKey };
}

/**
 * Moves an overdue delivery the sweeper is about to re-queue forward in the pending-deliveries index, so
 * the following sweeps do not read and re-queue it again while its recovery message waits in the queue
 * (DESIGN D7, D14). The new position is `nowMs` + `spacingMs` × 2^(re-queues by the
 * sweeper since its last lease), at most {@link MAX_SWEEP_SPACING_MS} (all MILLISECONDS): a row in a long
 * backlog is moved a few times, not once per sweep, and a lost message is still recovered within the
 * cap. Only the index sort key (`gsi1sk`, {@link dueSortKey}) and that count (`sweeper_requeues`, cleared
 * by the next lease) change: `due_at_ms`, which the lease condition of {@link takeLease} reads, stays.
 * `delivery` is a row exactly as {@link queryOverdueDeliveries} returned it (it carries the sort key
 * read); the one conditional update is guarded on the row still holding that sort key, status and
 * attempt count, so a row the dispatcher changed meanwhile (leased, succeeded, rescheduled,
 * dead-lettered) or that is gone is left alone. Returns true when moved, false when the row changed
 * (then no recovery message is needed). Throws only on store errors. 1 request.
 */
export async function moveOverdueDelivery(store: Store, delivery: StoredDelivery, spacingMs: number, nowMs: number): Promise<boolean> {
  const readSortKey = (delivery as unknown as Item)[INDEX_SK];
  if (typeof readSortKey !== 'string') return false; // not read from the index: nothing to move
  const toMs = nowMs + Math.min(spacingMs * 2 ** (delivery.sweeper_requeues ?? 0), MAX_SWEEP_SPACING_MS);
  try {
    await store.update({
      Key: keys.delivery(delivery.team_id, delivery.id),
      UpdateExpression: `SET ${INDEX_SK} = :sort, sweeper_requeues = if_not_exists(sweeper_requeues, :zero) + :one`,
      ConditionExpression: `${INDEX_SK} = :read AND #status = :status AND attempts = :attempts`,
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':sort': dueSortKey(toMs, delivery.id), ':read': readSortKey, ':status': delivery.status, ':attempts': delivery.attempts, ':zero': 0, ':one': 1 },
    });
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}

/**
 * One page (≤ {@link OUTBOX_PAGE_SIZE}) of shard `shard` of the outbox index: events (of any team) not
 * fanned out yet and created at or before `beforeMs` (epoch MILLISECONDS), oldest first. The bound is a
 * key condition (`sort key < {@link keys.timeIndexSortKey}(beforeMs + 1, '')`), so younger events are
 * not read at all (DESIGN D6, D14). Throws only on store errors.
 */
export async function queryOutbox(store: Store, shard: number, beforeMs: number, startKey: Key | undefined): Promise<{ items: StoredEvent[]; lastEvaluatedKey: Key | undefined }> {
  const result = await store.query({
    IndexName: secondaryIndex.name,
    KeyConditionExpression: `${INDEX_PK} = :outbox AND ${INDEX_SK} < :bound`,
    ExpressionAttributeValues: { ':outbox': keys.outboxIndex(shard), ':bound': keys.timeIndexSortKey(beforeMs + 1, '') },
    ExclusiveStartKey: startKey,
    Limit: OUTBOX_PAGE_SIZE,
  });
  return { items: result.items.map(asEvent), lastEvaluatedKey: result.lastEvaluatedKey };
}

/** Every shard number of the worker indexes, 0 … {@link WORKER_INDEX_SHARDS} − 1. */
export const WORKER_SHARDS: readonly number[] = Array.from({ length: WORKER_INDEX_SHARDS }, (_, shard) => shard);
