import { ProblemError } from '../errors.js';
import { hookReceipts } from '../store/hook-receipts.js';
import { withRequestScope, type RequestScope } from '../store/request-scope.js';
import { ConditionFailedError, TransactionCanceledError, type Store } from '../store/store.js';

/**
 * Receipts of processed inbound updates and provider events (DESIGN D22: "idempotent on the provider's
 * event id"): one item per (team, source, project, provider id), written in the transaction of the
 * update's effect (through the request scope, like an idempotency completion) or alone when the update
 * changed nothing. A second delivery finds the receipt and changes nothing. Kept 30 days (TTL).
 */

/** Identifies one inbound update. */
export interface HookReceiptRef {
  teamId: string;
  source: string;
  projectId: string;
  /** The provider's id of the update or event (Telegram `update_id`, Stripe `evt_...`). */
  providerEventId: string;
}

/**
 * Stores the receipt of an update that changes nothing but must be answered once (a Discord interaction): true when
 * this call stored it, false when it existed already (a replay).
 */
export async function claimReceipt(store: Store, ref: HookReceiptRef, nowMs: number): Promise<boolean> {
  try {
    await hookReceipts.write(store, ref, nowMs);
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError || error instanceof TransactionCanceledError) return false;
    throw error;
  }
}

/** What {@link applyOnce} did: the work ran and its receipt is stored, or an earlier delivery's receipt was found. */
export type ReceiptOutcome = 'applied' | 'duplicate';

/** The problem of a receipt that another delivery of the same update stored meanwhile. */
const receivedMeanwhile = () =>
  new ProblemError('CONFLICT', 'Another delivery of this update was processed at the same time.');

/**
 * Runs `work` at most once per {@link HookReceiptRef} (DESIGN D22): the receipt joins the FIRST transaction `work`
 * commits (or is written alone), so a duplicate runs nothing. `work` must write its effect in ONE transaction (a second
 * commits without the receipt); it runs in the receipt's request scope, which it hands to the pipeline
 * (`invokeOperation`'s `within`). Other failures are thrown (5xx: the provider resends).
 */
export async function applyOnce(
  store: Store,
  ref: HookReceiptRef,
  nowMs: () => number,
  work: (scope: RequestScope) => Promise<void>,
): Promise<ReceiptOutcome> {
  if (await hookReceipts.exists(store, ref)) return 'duplicate';
  const scope: RequestScope = {
    itemsForEffect: () => [{ item: hookReceipts.item(ref, nowMs()), onConditionFailed: receivedMeanwhile }],
  };
  try {
    await withRequestScope(scope, () => work(scope));
    if (!scope.committedWith) await hookReceipts.write(store, ref, nowMs());
  } catch (error) {
    const raced =
      error instanceof ConditionFailedError ||
      error instanceof TransactionCanceledError ||
      error instanceof ProblemError;
    if (raced && (await hookReceipts.exists(store, ref))) return 'duplicate';
    throw error;
  }
  return 'applied';
}
