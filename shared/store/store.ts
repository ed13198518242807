import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
  type DeleteCommandInput,
  type PutCommandInput,
  type QueryCommandInput,
  type TransactWriteCommandInput,
  type UpdateCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import pRetry from 'p-retry';
import type {
  DeleteRequest,
  Item,
  Key,
  PutRequest,
  QueryRequest,
  TableChoice,
  TransactionItem,
  UpdateRequest,
} from './requests.js';

/**
 * The DynamoDB adapter (DESIGN §2, D14): the only module of the domain's persistence that talks to the
 * AWS SDK. Repositories and the unit of work call its methods with DynamoDB expressions but never import
 * `@aws-sdk/*`; a failed condition surfaces as {@link ConditionFailedError}, whatever the command.
 * The same adapter serves AWS and DynamoDB Local; only the endpoint differs.
 */

/**
 * A condition expression was false (DynamoDB's ConditionalCheckFailedException, or a cancelled
 * transaction). `failedItems` holds, for a transaction, the indexes of the items whose condition failed.
 */
export class ConditionFailedError extends Error {
  readonly failedItems: readonly number[];
  /** The item as it was, when the request asked for it (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`). */
  readonly item: Item | undefined;
  /**
   * For a transaction: by item index, the items whose condition failed as they were, for those items
   * that asked for it (`ReturnValuesOnConditionCheckFailure: 'ALL_OLD'`); undefined elsewhere.
   */
  readonly itemsAsFound: readonly (Item | undefined)[];
  constructor(failedItems: readonly number[] = [], item?: Item, itemsAsFound: readonly (Item | undefined)[] = []) {
    super('A DynamoDB condition was not met.');
    this.name = 'ConditionFailedError';
    this.failedItems = failedItems;
    this.item = item;
    this.itemsAsFound = itemsAsFound;
  }
}

/**
 * A transaction was cancelled for another reason than a failed condition (a conflict with a concurrent
 * transaction, throttling): nothing was written; `reasons` holds DynamoDB's cancellation codes.
 */
export class TransactionCanceledError extends Error {
  readonly reasons: readonly string[];
  constructor(reasons: readonly string[]) {
    super(`The DynamoDB transaction was cancelled (${reasons.join(', ') || 'no reason given'}).`);
    this.name = 'TransactionCanceledError';
    this.reasons = reasons;
  }
}

/** DynamoDB's most items per TransactWriteItems. */
export const MAX_TRANSACTION_ITEMS = 100;

/** The DynamoDB port every repository uses (one instance per process; see {@link createStore}). */
export interface Store {
  /** Main single table (see `table-definition.ts`). */
  readonly tableName: string;
  /** Dead-letter table of dead deliveries. */
  readonly deadLetterTableName: string;
  /** The document client: for the table tools in `shared/store/` and for tests, never for domain code. */
  readonly document: DynamoDBDocumentClient;
  /** GetItem; undefined when absent. `consistent` defaults to true. */
  get(
    key: Key,
    options?: { consistent?: boolean; table?: TableChoice; projection?: string },
  ): Promise<Item | undefined>;
  /** PutItem. Throws {@link ConditionFailedError}. */
  put(request: PutRequest): Promise<void>;
  /** UpdateItem; returns `Attributes` (per `ReturnValues`). Throws {@link ConditionFailedError}. */
  update(request: UpdateRequest): Promise<Item | undefined>;
  /** DeleteItem; returns `Attributes` (per `ReturnValues`). Throws {@link ConditionFailedError}. */
  delete(request: DeleteRequest): Promise<Item | undefined>;
  /**
   * One Query request: its items, `LastEvaluatedKey` and `Count` (the items matched in this page after any
   * filter; with `Select: 'COUNT'` the items are not returned and only the count is).
   */
  query(request: QueryRequest): Promise<{ items: Item[]; lastEvaluatedKey: Key | undefined; count: number }>;
  /**
   * BatchGetItem of up to 100 keys, strongly consistent, re-requesting unprocessed keys with
   * exponential back-off (p-retry, at most 6 rounds). Items come back in no particular order. A key given
   * twice is read once (DynamoDB refuses a request with duplicate keys; ids from a request may repeat).
   */
  batchGet(keys: readonly Key[], options?: { table?: TableChoice }): Promise<Item[]>;
  /**
   * TransactWriteItems (≤ 100 items, both tables allowed). Throws {@link ConditionFailedError} naming the
   * failed items, or {@link TransactionCanceledError} for any other cancellation.
   */
  transactWrite(items: readonly TransactionItem[]): Promise<void>;
}

/** Options for {@link createStore}. */
export interface StoreOptions {
  /** DynamoDB endpoint (DynamoDB Local); unset on AWS. */
  endpoint?: string;
  tableName: string;
  deadLetterTableName: string;
  /** An existing low-level client to wrap (tests and the bench count requests through its middleware stack). */
  client?: DynamoDBClient;
  /** A document client to send every command through instead (tests: fault injection and gates). */
  document?: Pick<DynamoDBDocumentClient, 'send'>;
  /**
   * Waits between retries of DynamoDB Local's lock timeouts, in MILLISECONDS (default 25 growing to 1,000; tests
   * shorten them).
   */
  lockTimeoutWaitMs?: { min: number; max: number };
}

function translate(error: unknown): unknown {
  if (error instanceof ConditionalCheckFailedException)
    return new ConditionFailedError([], error.Item ? unmarshall(error.Item) : undefined);
  if (error instanceof TransactionCanceledException) {
    const reasons = error.CancellationReasons ?? [];
    const failed = reasons.flatMap((reason, index) => (reason.Code === 'ConditionalCheckFailed' ? [index] : []));
    if (failed.length > 0)
      return new ConditionFailedError(
        failed,
        undefined,
        reasons.map((reason) => (reason.Item ? unmarshall(reason.Item) : undefined)),
      );
    return new TransactionCanceledError(reasons.map((reason) => reason.Code ?? 'None'));
  }
  // DynamoDB Local's lock timeout on a transaction: AWS cancels such a transaction with TransactionConflict.
  // Same meaning — nothing was written, retry — so callers see one error for both.
  if (isLocalLockTimeout(error)) return new TransactionCanceledError(['TransactionConflict']);
  return error;
}

/**
 * True for DynamoDB Local's (never AWS's) 500 "…too long waiting for a lock…": under load it answers an
 * operation that waited too long for an item lock (a hot item: a rate counter, a redeemed code, a
 * transaction's items) with it. Nothing was written.
 */
function isLocalLockTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'InternalServerError' && /waiting for a lock/.test(error.message);
}

/**
 * Retries of a single-item operation or query that met {@link isLocalLockTimeout} (after the SDK's own
 * three attempts, whose shared retry quota a burst of hot-item requests can empty). AWS serves such a read
 * or write (reads take no locks there; writes to one item queue), so retrying keeps DynamoDB Local's
 * answer the same as AWS's. 8 retries, jittered, waiting from `min` growing to `max` MILLISECONDS
 * (25 ms to 1 s unless {@link StoreOptions.lockTimeoutWaitMs} says otherwise: a few seconds at most).
 */
const LOCK_TIMEOUT_RETRIES = 8;
const LOCK_TIMEOUT_WAIT_MS = { min: 25, max: 1_000 } as const;

/**
 * The low-level DynamoDB client {@link createStore} uses unless given one: for `endpoint` (DynamoDB
 * Local) with region `AWS_REGION` or `local` and the environment's or dummy credentials; the SDK's
 * defaults (the Lambda's region and role) without it.
 */
export function dynamoDbClient(endpoint: string | undefined): DynamoDBClient {
  return new DynamoDBClient(
    endpoint
      ? {
          endpoint,
          region: process.env.AWS_REGION ?? 'local',
          credentials: {
            accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? 'local',
            secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? 'local',
          },
        }
      : {},
  );
}

/** Builds a {@link Store}. With `endpoint` it uses dummy credentials and region `local` unless AWS_REGION is set. */
export function createStore(options: StoreOptions): Store {
  const document = (options.document ??
    DynamoDBDocumentClient.from(options.client ?? dynamoDbClient(options.endpoint), {
      marshallOptions: { removeUndefinedValues: true },
    })) as DynamoDBDocumentClient;
  const tableOf = (table: TableChoice | undefined) =>
    table === 'deadLetter' ? options.deadLetterTableName : options.tableName;
  /** The one conversion of a Store request to its lib-dynamodb command input: `table` becomes `TableName`. */
  const withTable = <T extends { table?: TableChoice }>(request: T): Omit<T, 'table'> & { TableName: string } => {
    const { table, ...rest } = request;
    return { ...rest, TableName: tableOf(table) };
  };
  const send = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw translate(error);
    }
  };
  /**
   * {@link send} for one item or one query: DynamoDB Local's lock timeouts are retried (see {@link
   * LOCK_TIMEOUT_RETRIES}).
   */
  const wait = options.lockTimeoutWaitMs ?? LOCK_TIMEOUT_WAIT_MS;
  const lockTimeoutRetry = {
    retries: LOCK_TIMEOUT_RETRIES,
    minTimeout: wait.min,
    maxTimeout: wait.max,
    randomize: true,
    shouldRetry: ({ error }: { error: Error }) => isLocalLockTimeout(error),
  };
  const sendOne = <T>(run: () => Promise<T>): Promise<T> => send(() => pRetry(run, lockTimeoutRetry));
  return {
    tableName: options.tableName,
    deadLetterTableName: options.deadLetterTableName,
    document,
    get: async (key, getOptions = {}) =>
      (
        await sendOne(() =>
          document.send(
            new GetCommand({
              TableName: tableOf(getOptions.table),
              Key: key,
              ConsistentRead: getOptions.consistent ?? true,
              ProjectionExpression: getOptions.projection,
            }),
          ),
        )
      ).Item,
    put: async (request) => {
      await sendOne(() => document.send(new PutCommand(withTable(request) satisfies PutCommandInput)));
    },
    update: async (request) =>
      (await sendOne(() => document.send(new UpdateCommand(withTable(request) satisfies UpdateCommandInput))))
        .Attributes,
    delete: async (request) =>
      (await sendOne(() => document.send(new DeleteCommand(withTable(request) satisfies DeleteCommandInput))))
        .Attributes,
    query: async (request) => {
      const result = await sendOne(() =>
        document.send(new QueryCommand(withTable(request) satisfies QueryCommandInput)),
      );
      return {
        items: result.Items ?? [],
        lastEvaluatedKey: result.LastEvaluatedKey,
        count: result.Count ?? result.Items?.length ?? 0,
      };
    },
    batchGet: async (keys, batchOptions = {}) => {
      const tableName = tableOf(batchOptions.table);
      const items: Item[] = [];
      let pending: Key[] = [...new Map(keys.map((key) => [`${String(key.pk)}\u0000${String(key.sk)}`, key])).values()];
      if (pending.length === 0) return items;
      await pRetry(
        async () => {
          const result = await document.send(
            new BatchGetCommand({ RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true } } }),
          );
          items.push(...(result.Responses?.[tableName] ?? []));
          pending = (result.UnprocessedKeys?.[tableName]?.Keys as Key[] | undefined) ?? [];
          if (pending.length > 0) throw new Error(`${pending.length} keys unprocessed`);
        },
        { retries: 5, minTimeout: 25, maxTimeout: 1_000 },
      );
      return items;
    },
    transactWrite: async (items) => {
      const TransactItems: TransactWriteCommandInput['TransactItems'] = items.map((item) => {
        if ('Put' in item) return { Put: withTable(item.Put) };
        if ('Update' in item) return { Update: withTable(item.Update) };
        if ('Delete' in item) return { Delete: withTable(item.Delete) };
        return { ConditionCheck: withTable(item.ConditionCheck) };
      });
      await send(() => document.send(new TransactWriteCommand({ TransactItems })));
    },
  };
}

/**
 * The item of `items` (e.g. a {@link Store.batchGet} answer, in no particular order) stored under `key`, or undefined.
 */
export function itemWithKey(items: readonly Item[], key: Key): Item | undefined {
  return items.find((item) => item.pk === key.pk && item.sk === key.sk);
}
