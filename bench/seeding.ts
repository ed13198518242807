/**
 * Seeding for `npm run bench` (not measured): the items a use case would write, built by the
 * repositories' own functions on a {@link RecordingTransaction} instead of being copied here, then
 * written with BatchWriteItem (25 items per request) — much faster than one transaction per object, and
 * the same item shapes. Counter updates (`ADD … :one` / `:delta` of 1) that many seeded objects make on
 * one item (the team's usage, a project's or plan's live subscription count) are folded into one update
 * per item and counter expression, and unconditional number-only `ADD`s (the metrics counters) are summed.
 *
 * @module
 */
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { Store } from '../shared/store/store.js';
import type { Item, Key } from '../shared/store/requests.js';
import type { Principal } from '../shared/auth/principal.js';
import type { Plan } from '../shared/domain/plans/schema.js';
import { prepareSubscriber } from '../shared/domain/subscribers/repository.js';
import { addSubscriptionCreation, newSubscription } from '../shared/domain/subscriptions/creation.js';
import type { Subscription } from '../shared/domain/subscriptions/schema.js';
import type { Transaction, UnitOfWorkRuntime } from '../shared/store/unit-of-work.js';
import { runPool } from './measuring.js';

/** One recorded put: the item and its table. */
export interface RecordedPut {
  table: 'main' | 'deadLetter';
  item: Item;
}

/** One recorded update, as a unit of work would send it. */
export interface RecordedUpdate {
  table: 'main' | 'deadLetter';
  key: Key;
  expression: string;
  condition?: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}

/**
 * A {@link Transaction} that records puts and updates instead of committing them. Events (`emit`) are
 * left out (seeded objects have no webhook history), and so are condition checks; a delete is a
 * programming error here and throws.
 */
export interface RecordingTransaction extends Transaction {
  puts: RecordedPut[];
  updates: RecordedUpdate[];
}

/** Creates an empty {@link RecordingTransaction}. */
export function recordingTransaction(): RecordingTransaction {
  const puts: RecordedPut[] = [];
  const updates: RecordedUpdate[] = [];
  return {
    puts,
    updates,
    put(item, options = {}) {
      puts.push({ table: options.table ?? 'main', item });
    },
    update(key, update) {
      updates.push({
        table: update.table ?? 'main',
        key,
        expression: update.expression,
        condition: update.condition,
        names: update.names,
        values: update.values,
      });
    },
    delete() {
      throw new Error('bench seeding records no deletes');
    },
    check() {},
    emit(event) {
      // The stored event is not needed by any seeding caller; a placeholder keeps the signature.
      return {
        id: 'evt_seeded',
        type: event.type,
        created_at: '',
        api_version: '',
        project_id: event.projectId,
        data: event.data,
        team_id: '',
      };
    },
  };
}

/** Writes `puts` with BatchWriteItem, 25 per request, `concurrency` requests at a time, retrying unprocessed items. */
export async function batchWrite(store: Store, puts: readonly RecordedPut[], concurrency = 8): Promise<void> {
  const tableName = (table: RecordedPut['table']) =>
    table === 'deadLetter' ? store.deadLetterTableName : store.tableName;
  const batches: Array<readonly RecordedPut[]> = [];
  for (let index = 0; index < puts.length; index += 25) batches.push(puts.slice(index, index + 25));
  await runPool(batches.length, concurrency, async (index) => {
    let requestItems: Record<string, Array<{ PutRequest: { Item: Item } }>> = {};
    for (const { table, item } of batches[index])
      (requestItems[tableName(table)] ??= []).push({ PutRequest: { Item: item } });
    for (let attempt = 0; Object.keys(requestItems).length > 0; attempt++) {
      if (attempt > 10) throw new Error('BatchWriteItem kept returning unprocessed items');
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
      const result = await store.document.send(new BatchWriteCommand({ RequestItems: requestItems }));
      requestItems = (result.UnprocessedItems ?? {}) as typeof requestItems;
    }
  });
}

/** Placeholders of a counter increment of 1 in the repositories' update expressions. */
const INCREMENT_PLACEHOLDERS = [':one', ':delta'] as const;

/**
 * The value placeholders of an unconditional update's `ADD` clause when every one holds a number (counters such as the
 * metrics'), else null.
 */
function addedPlaceholders(update: RecordedUpdate): string[] | null {
  const clause = update.condition ? null : /(?:^|\s)ADD (.+)$/.exec(update.expression)?.[1];
  const placeholders = clause?.split(',').map((part) => part.trim().split(/\s+/)[1]);
  return placeholders?.every((name) => typeof update.values?.[name] === 'number') ? placeholders : null;
}

/**
 * Applies recorded counter updates folded per (item, expression): an update repeated `n` times is sent
 * once with its increment placeholder (`:one` or `:delta`, value 1) set to `n`, its condition kept; an
 * unconditional update adding numbers only (`ADD #a :a, …`, e.g. the metrics counters) is sent once per
 * (item, expression, other values) with its added values summed. Any other update is sent as recorded.
 * `concurrency` requests at a time (default one after the other). Returns the number of UpdateItem requests sent.
 */
export async function applyFoldedUpdates(
  store: Store,
  updates: readonly RecordedUpdate[],
  concurrency = 1,
): Promise<number> {
  const folded = new Map<string, { update: RecordedUpdate; count: number }>();
  const summed = new Map<string, RecordedUpdate>();
  const singles: RecordedUpdate[] = [];
  for (const update of updates) {
    const placeholder = INCREMENT_PLACEHOLDERS.find((name) => update.values?.[name] === 1);
    const added = placeholder ? null : addedPlaceholders(update);
    if (added) {
      const others = Object.entries(update.values ?? {}).filter(([name]) => !added.includes(name));
      const identity = JSON.stringify([update.table, update.key, update.expression, update.names, others]);
      const entry = summed.get(identity);
      if (entry)
        for (const name of added)
          entry.values![name] = (entry.values![name] as number) + (update.values![name] as number);
      else summed.set(identity, { ...update, values: { ...update.values } });
      continue;
    }
    if (!placeholder) {
      singles.push(update);
      continue;
    }
    const identity = JSON.stringify([update.table, update.key, update.expression, update.condition, update.names]);
    const entry = folded.get(identity);
    if (entry) entry.count++;
    else folded.set(identity, { update, count: 1 });
  }
  const requests = [
    ...[...folded.values()].map(({ update, count }) => {
      const placeholder = INCREMENT_PLACEHOLDERS.find((name) => update.values?.[name] === 1)!;
      return { ...update, values: { ...update.values, [placeholder]: count } };
    }),
    ...summed.values(),
    ...singles,
  ];
  await runPool(requests.length, concurrency, async (index) => {
    const update = requests[index];
    await store.update({
      table: update.table,
      Key: update.key,
      UpdateExpression: update.expression,
      ...(update.condition ? { ConditionExpression: update.condition } : {}),
      ...(update.names && Object.keys(update.names).length ? { ExpressionAttributeNames: update.names } : {}),
      ...(update.values && Object.keys(update.values).length ? { ExpressionAttributeValues: update.values } : {}),
    });
  });
  return requests.length;
}

/**
 * A store whose reads find nothing, for building a NEW subscription's writes with the repository's own
 * `addSubscriptionCreation` without reading: a new subscriber has no member, no other subscriptions and
 * no conversion marker, and the bench project has no platform resources (so the project read, which
 * only supplies resources, may find nothing too). Writes throw: they go through the recording transaction.
 */
export function readsNothingStore(store: Store): Store {
  const refuse = async () => {
    throw new Error('bench seeding writes through the recording transaction');
  };
  return {
    tableName: store.tableName,
    deadLetterTableName: store.deadLetterTableName,
    document: store.document,
    get: async () => undefined,
    query: async () => ({ items: [], lastEvaluatedKey: undefined, count: 0 }),
    batchGet: async () => [],
    put: refuse,
    update: refuse,
    delete: refuse,
    transactWrite: refuse,
  };
}

/**
 * Adds to `tx` what the domain writes for a new subscriber named `displayName` (no consent) with a subscription of
 * `plan` in project `projectId`, started at `atMs` (epoch ms) from `source`, `paymentProvider` set when given.
 * `seedRuntime` should read nothing ({@link readsNothingStore}): the items are new. Returns the subscription.
 */
export async function addSeededSubscription(
  tx: Transaction,
  seedRuntime: UnitOfWorkRuntime,
  principal: Principal,
  seed: {
    projectId: string;
    plan: Plan;
    displayName: string;
    source: Subscription['source'];
    atMs: number;
    paymentProvider?: Subscription['payment_provider'];
  },
): Promise<Subscription> {
  const newSubscriber = await prepareSubscriber(seedRuntime, principal, seed.projectId, {
    display_name: seed.displayName,
    consent: false,
  });
  const subscription: Subscription = {
    ...newSubscription({
      projectId: seed.projectId,
      subscriberId: newSubscriber.subscriber.id,
      plan: seed.plan,
      source: seed.source,
      nowMs: seed.atMs,
      startMs: seed.atMs,
      trialEndMs: null,
      endsAtMs: null,
    }),
    ...(seed.paymentProvider ? { payment_provider: seed.paymentProvider } : {}),
  };
  await addSubscriptionCreation(tx, seedRuntime, principal, {
    subscription,
    subscriber: newSubscriber.subscriber,
    plan: seed.plan,
    accessCode: null,
    newSubscriber,
  });
  return subscription;
}
