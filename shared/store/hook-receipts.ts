import type { HookReceiptRef } from '../hooks/receipts.js';
import { ITEM_ABSENT } from './expressions.js';
import { entity, keys } from './keys.js';
import type { TransactionItem } from './requests.js';
import type { Store } from './store.js';
import { ttlAttribute } from './ttl.js';

/**
 * The receipts of processed inbound updates and provider events (DESIGN D22): one item per (team, source, project,
 * provider id), written only if absent, kept {@link HOOK_RECEIPT_RETENTION_SECONDS} (TTL).
 */

/** How long a receipt is kept, in seconds (Telegram retries an update for at most 24 hours; Stripe for 3 days). */
const HOOK_RECEIPT_RETENTION_SECONDS = 30 * 24 * 3600;

/** The key of the receipt of `ref`. */
const receiptKey = (ref: HookReceiptRef) =>
  keys.hookReceipt(ref.teamId, ref.source, ref.projectId, ref.providerEventId);

/** The hook receipts' adapter: the receipt's write (alone or in a transaction) and whether one exists. */
export const hookReceipts = {
  /**
   * The receipt of `ref`, received at `nowMs` (epoch ms), as a transaction item: a Put only if absent, whose failed
   * condition (the receipt exists) fails the transaction.
   */
  item(ref: HookReceiptRef, nowMs: number): TransactionItem {
    return {
      Put: {
        Item: {
          ...receiptKey(ref),
          entity: entity.hookReceipt,
          team_id: ref.teamId,
          source: ref.source,
          received_at: new Date(nowMs).toISOString(),
          expires_at: ttlAttribute(nowMs, HOOK_RECEIPT_RETENTION_SECONDS),
        },
        ConditionExpression: ITEM_ABSENT,
      },
    };
  },

  /**
   * Writes the receipt of `ref` alone (a one-item TransactWriteItems of {@link item}): throws ConditionFailedError
   * (or TransactionCanceledError) when it exists.
   */
  write(store: Store, ref: HookReceiptRef, nowMs: number): Promise<void> {
    return store.transactWrite([hookReceipts.item(ref, nowMs)]);
  },

  /** True when the receipt of `ref` exists (one strongly consistent GetItem of its key only). */
  async exists(store: Store, ref: HookReceiptRef): Promise<boolean> {
    return (await store.get(receiptKey(ref), { projection: 'pk' })) !== undefined;
  },
};
