import type { Clock } from '../../clock.js';
import { isoTime } from '../../clock.js';
import type { StoredEvent } from '../../events/outbox.js';
import { newDeliveryId } from '../../ids.js';
import { entity, keys } from '../../store/keys.js';
import { MAX_TRANSACTION_ITEMS, type Store } from '../../store/store.js';
import type { Item, TransactionItem } from '../../store/requests.js';
import { deliveryExpiresAt } from './policy.js';
import { INDEX_PK, INDEX_SK, dueSortKey, isCancelled, pendingIndexOf, type StoredDelivery } from './stored.js';

/** Creation of webhook deliveries (DESIGN D6, D14): a new delivery item and the fan-out transactions that write them. */

/**
 * New pending delivery of `event` to one endpoint, attempt 1 due now, kept {@link deliveryExpiresAt} (30 days); `body` is the exact redacted POST body.
 * With `skipped` (disabled endpoint, D6) it goes to the skipped-deliveries index instead, where replays find it.
 */
export function newDeliveryItem(
  clock: Clock,
  teamId: string,
  endpointId: string,
  event: Pick<StoredEvent, 'id' | 'type'>,
  body: string,
  options: { skipped?: boolean } = {},
): StoredDelivery & Item {
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
 * Writes several events' fan-outs (D6) in as few transactions as {@link MAX_TRANSACTION_ITEMS} allows, each guarded on the event's mark; a cancelled
 * transaction is retried event by event. Returns per fan-out whether it was written (false: already done, gone, or conflict). Throws on store errors.
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
  for (const pack of packs)
    (await writePack(store, pack.items)).forEach((result, offset) => (written[pack.first + offset] = result));
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
