import { asDelivery, type StoredDelivery } from '../../domain/webhook-deliveries/stored.js';
import { INDEX_PK, INDEX_SK, dueSortKey, pendingIndexOf } from './indexes.js';
import type { ListWebhookDeliveriesQuery } from '../../domain/webhook-deliveries/schema.js';
import { entity, keys, sortKeyPrefix } from '../keys.js';
import { MAX_TRANSACTION_ITEMS, type Store } from '../store.js';
import { listFilter, queryPage, type Page } from '../pages.js';
import type { Item, TransactionItem } from '../requests.js';
import type { Transaction } from '../unit-of-work.js';
import { ITEM_EXISTS, ITEM_ABSENT } from '../expressions.js';
import { isCancelled } from './cancelled.js';

/**
 * The delivery item's persistence (DESIGN D6, D7, D14): `TEAM#<team>`, `DELIVERY#<dlv_ id>`. A pending delivery is
 * also in the sharded pending-deliveries index at its due time, a skipped one in its team's skipped-deliveries
 * index at its skip time (where replays find it). Reads, the team's list, and the writes that create deliveries.
 */

/** One event's fan-out as written by {@link deliveryStore.writeFanOuts}: the event and its new deliveries. */
export interface FanOutWrite {
  event: { id: string; team_id: string };
  deliveries: readonly StoredDelivery[];
}

/** The item of a new delivery (pending or skipped): its key, and its place in the pending or skipped index. */
function newItem(delivery: StoredDelivery): Item {
  const index =
    delivery.status === 'skipped'
      ? {
          [INDEX_PK]: keys.skippedDeliveriesIndex(delivery.team_id),
          [INDEX_SK]: `${delivery.skipped_at}#${delivery.id}`,
        }
      : { [INDEX_PK]: pendingIndexOf(delivery.id), [INDEX_SK]: dueSortKey(delivery.due_at_ms!, delivery.id) };
  return { ...keys.delivery(delivery.team_id, delivery.id), entity: entity.delivery, ...delivery, ...index };
}

/** The transaction items of one fan-out: the event's guarded "fanned out" mark, then its deliveries. */
function fanOutItems({ event, deliveries }: FanOutWrite, nowIso: string): TransactionItem[] {
  return [
    {
      Update: {
        Key: keys.event(event.team_id, event.id),
        UpdateExpression: `SET fanned_out_at = :now, delivery_count = :count REMOVE ${INDEX_PK}, ${INDEX_SK}`,
        ConditionExpression: `${ITEM_EXISTS} AND attribute_not_exists(fanned_out_at)`,
        ExpressionAttributeValues: { ':now': nowIso, ':count': deliveries.length },
      },
    },
    ...deliveries.map((delivery) => ({ Put: { Item: newItem(delivery), ConditionExpression: ITEM_ABSENT } })),
  ];
}

/**
 * One transaction of several fan-outs' items (an event without deliveries: its mark alone, one UpdateItem); when it is
 * cancelled, each fan-out alone.
 */
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
 * The delivery store adapter: a delivery's read and the team's list (Store port), a new delivery added to a
 * transaction, and the events' fan-out writes.
 */
export const deliveryStore = {
  /** The stored delivery (strongly consistent) or null. */
  async load(store: Store, teamId: string, deliveryId: string): Promise<StoredDelivery | null> {
    const item = await store.get(keys.delivery(teamId, deliveryId), { consistent: true });
    return item ? asDelivery(item) : null;
  },

  /**
   * One page of the team's deliveries, newest first, optionally only one endpoint's, status's and event type's (applied
   * by DynamoDB: a page may be short while `next_cursor` is set). Errors: VALIDATION_FAILED for a foreign cursor.
   */
  page(
    store: Store,
    teamId: string,
    query: Pick<ListWebhookDeliveriesQuery, 'limit' | 'cursor' | 'endpoint_id' | 'status' | 'event_type'>,
  ): Promise<Page<StoredDelivery>> {
    return queryPage(store, {
      partition: keys.teamPartition(teamId),
      sortKeyPrefix: sortKeyPrefix.delivery,
      ascending: false,
      limit: query.limit,
      cursor: query.cursor,
      filter: listFilter([
        { attribute: 'endpoint_id', equals: query.endpoint_id },
        { attribute: 'status', equals: query.status },
        { attribute: 'event_type', equals: query.event_type },
      ]),
      map: asDelivery,
    });
  },

  /** Adds a new delivery to `tx`, on condition that no item has its key. */
  insert(tx: Transaction, delivery: StoredDelivery): void {
    tx.put(newItem(delivery), { condition: ITEM_ABSENT });
  },

  /**
   * Writes several events' fan-outs (D6) in as few transactions as {@link MAX_TRANSACTION_ITEMS} allows, each
   * guarded on the event's "fanned out" mark (`nowIso`); a cancelled transaction is retried event by event.
   * Returns per fan-out whether it was written (false: already done, gone, or conflict). Throws on store errors.
   */
  async writeFanOuts(store: Store, fanOuts: readonly FanOutWrite[], nowIso: string): Promise<boolean[]> {
    const packs: Array<{ first: number; items: TransactionItem[][] }> = [];
    fanOuts.forEach((fanOut, index) => {
      const items = fanOutItems(fanOut, nowIso);
      const last = packs.at(-1);
      if (last && last.items.flat().length + items.length <= MAX_TRANSACTION_ITEMS) last.items.push(items);
      else packs.push({ first: index, items: [items] });
    });
    const written: boolean[] = [];
    // One transaction at a time: the relay already reads shards in parallel, and route bundles that write a single
    // delivery stay free of p-map.
    for (const pack of packs)
      (await writePack(store, pack.items)).forEach((result, offset) => (written[pack.first + offset] = result));
    return written;
  },
};
