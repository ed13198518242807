import { AsyncLocalStorage } from 'node:async_hooks';
import type { ProblemError } from '../errors.js';
import { ConditionFailedError, MAX_TRANSACTION_ITEMS, type Store } from './store.js';
import type { Item, TransactionItem } from './requests.js';

/**
 * What a request contributes to the first transaction its operation commits (DESIGN D3, D5, D14): the
 * idempotency completion — so a crash between the effect and the completion can never run the effect
 * twice — and the request's activity entry, so a write costs one transaction. `invokeOperation` opens
 * the scope; `unitOfWork` consumes it once, with the value its work returned.
 */
export interface RequestScope {
  /** Items to add to the first transaction of the request, given what the unit of work returned. */
  itemsForEffect(result: unknown): RequestItem[];
  /** Set by `unitOfWork` once it committed the items (`invokeOperation` then skips its own writes). */
  committedWith?: { result: unknown };
  /** A condition the request's writes must meet (the billing lockdown, DESIGN D20); see {@link guardedStore}. */
  guard?: RequestGuard;
  /** Set once a write met {@link guard} (later writes of the request are not checked again). */
  guardPassed?: boolean;
}

/**
 * A condition every write of a request must meet (DESIGN D20: a locked team's creator writes are refused): `check`
 * joins the first TransactWriteItems (no extra request), its failure becomes `problem()`; a non-transactional write
 * (PutItem, UpdateItem, DeleteItem) is preceded by `verify`, one strongly consistent read.
 */
export interface RequestGuard {
  /** A ConditionCheck on an item no guarded operation writes (two operations on one item cancel a transaction). */
  check: Extract<TransactionItem, { ConditionCheck: unknown }>;
  /** The problem a failed check means. */
  problem(): ProblemError;
  /** The same condition by one read: resolves when it holds, throws {@link problem} otherwise. */
  verify(store: Store): Promise<void>;
}

/**
 * One item of {@link RequestScope.itemsForEffect}: a plain transaction item (a failed condition is a
 * ConditionFailedError, as for the unit of work's own items without a handler), or one with the problem its
 * failed condition means (the `'in-transaction'` idempotency record's IDEMPOTENCY_KEY_IN_USE, DESIGN D3),
 * which `unitOfWork` throws like an `onConditionFailed` of its own items.
 */
export type RequestItem = TransactionItem | { item: TransactionItem; onConditionFailed: () => ProblemError };

const storage = new AsyncLocalStorage<RequestScope>();

/** Runs `work` with `scope` as the current request scope (see {@link RequestScope}). */
export function withRequestScope<T>(scope: RequestScope, work: () => Promise<T>): Promise<T> {
  return storage.run(scope, work);
}

/**
 * Takes the current request's items for its first transaction: returns them, with `onFailed[i]` the
 * problem a failed condition of `items[i]` means (undefined: none, a ConditionFailedError), and `committed`
 * for the caller to call after the commit (it marks the scope committed). Returns null outside a request
 * or after the first transaction.
 */
export function takeRequestItems(
  result: unknown,
): { items: TransactionItem[]; onFailed: ((() => ProblemError) | undefined)[]; committed(): void } | null {
  const scope = storage.getStore();
  if (!scope || scope.committedWith) return null;
  const requested = scope.itemsForEffect(result);
  if (requested.length === 0) return null;
  const withHandler = (entry: RequestItem): entry is Extract<RequestItem, { item: TransactionItem }> => 'item' in entry;
  return {
    items: requested.map((entry) => (withHandler(entry) ? entry.item : entry)),
    onFailed: requested.map((entry) => (withHandler(entry) ? entry.onConditionFailed : undefined)),
    committed: () => (scope.committedWith = { result }),
  };
}

/**
 * Runs `work` outside any request scope: background work a request sets off (the local queue and outbox
 * relay) must never take that request's items.
 */
export function outsideRequestScope<T>(work: () => T): T {
  return storage.exit(work);
}

/**
 * Wraps `store` so the request's {@link RequestGuard} holds before its first write (a failed check answers the guard's
 * problem even if other conditions failed too). Bookkeeping writes (rate counter, idempotency claim, activity) and
 * reads are never guarded; outside a scope, without a guard or once it passed, calls go straight through.
 */
export function guardedStore(store: Store): Store {
  const pending = (): (RequestScope & { guard: RequestGuard }) | null => {
    const scope = storage.getStore();
    return scope?.guard && !scope.guardPassed ? (scope as RequestScope & { guard: RequestGuard }) : null;
  };
  const verifyFirst = async () => {
    const scope = pending();
    if (!scope) return;
    await scope.guard.verify(store);
    scope.guardPassed = true;
  };
  return {
    tableName: store.tableName,
    deadLetterTableName: store.deadLetterTableName,
    document: store.document,
    get: (key, options) => store.get(key, options),
    query: (request) => store.query(request),
    batchGet: (keys, options) => store.batchGet(keys, options),
    put: async (request) => {
      await verifyFirst();
      return store.put(request);
    },
    update: async (request) => {
      await verifyFirst();
      return store.update(request);
    },
    delete: async (request) => {
      await verifyFirst();
      return store.delete(request);
    },
    transactWrite: async (items) => {
      const scope = pending();
      if (!scope) return store.transactWrite(items);
      if (items.length >= MAX_TRANSACTION_ITEMS) {
        await verifyFirst();
        return store.transactWrite(items);
      }
      const guarded = [...items, scope.guard.check];
      try {
        await store.transactWrite(guarded);
      } catch (error) {
        if (error instanceof ConditionFailedError && error.failedItems.includes(guarded.length - 1))
          throw scope.guard.problem();
        throw error;
      }
      scope.guardPassed = true;
    },
  };
}

/** A Put of a ready item, for {@link RequestScope.itemsForEffect}. */
export function putItem(item: Item): TransactionItem {
  return { Put: { Item: item } };
}
