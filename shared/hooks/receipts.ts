import { entity, keys } from '../store/keys.js';
import type { Store, TransactionItem } from '../store/store.js';

/**
 * Receipts of processed inbound updates and provider events (DESIGN D22: "idempotent on the provider's
 * event id"): one item per (team, source, project, provider id), written in the transaction of the
 * update's effect (through the request scope, like an idempotency completion) or alone when the update
 * changed nothing. A second delivery finds the receipt and changes nothing. Kept 30 days (TTL).
 */

/** How long a receipt is kept, in seconds (Telegram retries an update for at most 24 hours; Stripe for 3 days). */
export const HOOK_RECEIPT_RETENTION_SECONDS = 30 * 24 * 3600;

/** Identifies one inbound update. */
export interface HookReceiptRef {
  teamId: string;
  source: string;
  projectId: string;
  /** The provider's id of the update or event (Telegram `update_id`, Stripe `evt_...`). */
  providerEventId: string;
}

/** The conditional put of a receipt (fails when it exists), as a transaction item. */
export function receiptPut(ref: HookReceiptRef, nowMs: number): TransactionItem {
  return {
    Put: {
      Item: {
        ...keys.hookReceipt(ref.teamId, ref.source, ref.projectId, ref.providerEventId),
        entity: entity.hookReceipt,
        team_id: ref.teamId,
        source: ref.source,
        received_at: new Date(nowMs).toISOString(),
        expires_at: Math.floor(nowMs / 1000) + HOOK_RECEIPT_RETENTION_SECONDS,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/** True when the update was processed already (strongly consistent read). */
export async function hasReceipt(store: Store, ref: HookReceiptRef): Promise<boolean> {
  return (await store.get(keys.hookReceipt(ref.teamId, ref.source, ref.projectId, ref.providerEventId), { projection: 'pk' })) !== undefined;
}
