import { AsyncLocalStorage } from 'node:async_hooks';
import type { Item, TransactionItem } from './store.js';

/**
 * What a request contributes to the first transaction its operation commits (DESIGN D3, D5, D14): the
 * idempotency completion — so a crash between the effect and the completion can never run the effect
 * twice — and the request's activity entry, so a write costs one transaction. The pipelines (REST and
 * MCP) open the scope; `unitOfWork` consumes it once, with the value its work returned.
 */
export interface RequestScope {
  /** Items to add to the first transaction of the request, given what the unit of work returned. */
  itemsForEffect(result: unknown): TransactionItem[];
  /** Set by `unitOfWork` once it committed the items (the pipelines then skip their own writes). */
  committedWith?: { result: unknown };
}

const storage = new AsyncLocalStorage<RequestScope>();

/** Runs `work` with `scope` as the current request scope (see {@link RequestScope}). */
export function withRequestScope<T>(scope: RequestScope, work: () => Promise<T>): Promise<T> {
  return storage.run(scope, work);
}

/**
 * Takes the current request's items for its first transaction: returns them and marks the scope
 * committed-pending (the caller calls the returned `committed` after the commit). Returns null outside a
 * request or after the first transaction.
 */
export function takeRequestItems(result: unknown): { items: TransactionItem[]; committed(): void } | null {
  const scope = storage.getStore();
  if (!scope || scope.committedWith) return null;
  const items = scope.itemsForEffect(result);
  if (items.length === 0) return null;
  return { items, committed: () => (scope.committedWith = { result }) };
}

/**
 * Runs `work` outside any request scope: background work a request sets off (the local queue and outbox
 * relay) must never take that request's items.
 */
export function outsideRequestScope<T>(work: () => T): T {
  return storage.exit(work);
}

/** A Put of a ready item, for {@link RequestScope.itemsForEffect}. */
export function putItem(item: Item): TransactionItem {
  return { Put: { Item: item } };
}
