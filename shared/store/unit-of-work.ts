import type { Clock } from '../clock.js';
import { outboxItem, type EventToEmit, type StoredEvent } from '../events/outbox.js';
import type { ProblemError } from '../errors.js';
import { isTransactionConflict, retryOnLostRace } from './optimistic.js';
import { takeRequestItems } from './request-scope.js';
import { ConditionFailedError, type Store } from './store.js';
import type { DeleteRequest, Item, Key, TableChoice, TransactionItem } from './requests.js';

/** What a failed condition of one transaction item means to the caller (e.g. NOT_FOUND or CONFLICT). */
type OnConditionFailed = () => ProblemError;

/** The guard of one write of a {@link Transaction}: a ConditionExpression with its names and values, and its table. */
interface WriteOptions {
  condition?: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
  table?: TableChoice;
  /** The refusal a failed `condition` becomes; without it, a failed condition is a lost race. */
  onConditionFailed?: OnConditionFailed;
}

/** The writes of one unit of work; see {@link unitOfWork}. */
export interface Transaction {
  /** Puts an item; `condition` (a ConditionExpression) guards it. */
  put(item: Item, options?: WriteOptions): void;
  /** Updates an item with an UpdateExpression (`SET ...`, `ADD ...`, `REMOVE ...`). */
  update(key: Key, update: WriteOptions & { expression: string }): void;
  /** Deletes an item. */
  delete(key: Key, options?: WriteOptions): void;
  /**
   * Checks a condition on an item without writing it (without `onConditionFailed`, a failed check throws {@link
   * ConditionFailedError}: a lost race).
   */
  check(key: Key, check: WriteOptions & { condition: string }): void;
  /** Appends a webhook event to the outbox in this transaction (DESIGN D6); returns the stored event. */
  emit(event: EventToEmit): StoredEvent;
}

/** What {@link unitOfWork} needs of the runtime. */
export interface UnitOfWorkRuntime {
  store: Store;
  clock: Clock;
  /**
   * Called after a transaction that emitted events committed, with the events it wrote to the outbox (the local relay
   * fans them out).
   */
  eventsCommitted(events?: readonly StoredEvent[]): void;
}

/**
 * Commits the writes `work` describes as ONE TransactWriteItems with its events (DESIGN D6, D14), plus the request's
 * idempotency completion and activity entry on its first unit. A failed condition throws that item's
 * `onConditionFailed` problem (else {@link ConditionFailedError}); a concurrency cancel is resent up to `MAX_ATTEMPTS`.
 * Returns `work`'s result.
 */
export async function unitOfWork<T>(
  runtime: UnitOfWorkRuntime,
  teamId: string,
  work: (tx: Transaction) => T | Promise<T>,
): Promise<T> {
  const items: TransactionItem[] = [];
  const onFailed: (OnConditionFailed | undefined)[] = [];
  const emitted: StoredEvent[] = [];
  const expressionParts = (options: WriteOptions) => ({
    ...(options.condition ? { ConditionExpression: options.condition } : {}),
    ...(options.names && Object.keys(options.names).length ? { ExpressionAttributeNames: options.names } : {}),
    ...(options.values && Object.keys(options.values).length ? { ExpressionAttributeValues: options.values } : {}),
  });
  const tx: Transaction = {
    put(item, options = {}) {
      items.push({ Put: { table: options.table, Item: item, ...expressionParts(options) } });
      onFailed.push(options.onConditionFailed);
    },
    update(key, update) {
      items.push({
        Update: { table: update.table, Key: key, UpdateExpression: update.expression, ...expressionParts(update) },
      });
      onFailed.push(update.onConditionFailed);
    },
    delete(key, options = {}) {
      const request: DeleteRequest & { Key: Key } = { table: options.table, Key: key, ...expressionParts(options) };
      items.push({ Delete: request });
      onFailed.push(options.onConditionFailed);
    },
    check(key, check) {
      items.push({
        ConditionCheck: {
          table: check.table,
          Key: key,
          ConditionExpression: check.condition,
          ...expressionParts({ names: check.names, values: check.values }),
        },
      });
      onFailed.push(check.onConditionFailed);
    },
    emit(event) {
      const { event: stored, item } = outboxItem(runtime.clock, teamId, event);
      items.push({ Put: { Item: item, ConditionExpression: 'attribute_not_exists(pk)' } });
      onFailed.push(undefined);
      if (!event.deliveredDirectly) emitted.push(stored);
      return stored;
    },
  };
  const result = await work(tx);
  if (items.length === 0) return result;
  // The first transaction of a request also stores its idempotency completion and activity entry (D3, D5).
  const request = takeRequestItems(result);
  if (request) {
    items.push(...request.items);
    onFailed.push(...request.onFailed);
  }
  try {
    // One write, no event and no request items: sent as that single write, not a transaction.
    if (items.length === 1 && !('ConditionCheck' in items[0])) {
      const only = items[0];
      if ('Put' in only) await runtime.store.put(only.Put);
      else if ('Update' in only) await runtime.store.update(only.Update);
      else await runtime.store.delete(only.Delete);
    } else {
      // A transaction cancelled for a concurrent one wrote nothing: the same items are sent again (D14).
      await retryOnLostRace(() => runtime.store.transactWrite(items), { retryable: isTransactionConflict });
    }
  } catch (error) {
    if (error instanceof ConditionFailedError) {
      const failedIndex = items.length === 1 ? 0 : error.failedItems[0];
      const problem = failedIndex === undefined ? undefined : onFailed[failedIndex]?.();
      if (problem) throw problem;
    }
    throw error;
  }
  request?.committed();
  if (emitted.length > 0) runtime.eventsCommitted(emitted);
  return result;
}
