/**
 * The Store's own request vocabulary (DESIGN §2, D14): the DynamoDB request fields this code base uses,
 * by their DynamoDB names, without `TableName` (`table` picks the table; default the main one). Only
 * `store.ts` turns them into lib-dynamodb commands, so no `@aws-sdk` type crosses the {@link Store} port.
 */

/** An item or key as the document client reads and writes it. */
export type Item = Record<string, unknown>;
/** A primary key: `{ pk, sk }`. */
export type Key = Record<string, unknown>;
/** Which of the two tables (see `table-definition.ts`): the main single table or the dead-letter table. */
export type TableChoice = 'main' | 'deadLetter';

/** The placeholders of an expression: `#name` → attribute name, `:value` → value. */
interface ExpressionPlaceholders {
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

/** A conditional write: the condition, and whether a failed one reports the item as it was. */
interface ConditionalRequest extends ExpressionPlaceholders {
  table?: TableChoice;
  ConditionExpression?: string;
  /** 'ALL_OLD': a failed condition's {@link ConditionFailedError} carries the item as it was. */
  ReturnValuesOnConditionCheckFailure?: 'ALL_OLD' | 'NONE';
}

/** A PutItem request (alone or in a transaction). */
export interface PutRequest extends ConditionalRequest {
  Item: Item;
}

/** An UpdateItem request inside a transaction (which returns no attributes). */
interface TransactionUpdateRequest extends ConditionalRequest {
  Key: Key;
  UpdateExpression: string;
}

/** An UpdateItem request; `ReturnValues` picks the `Attributes` {@link Store.update} returns. */
export interface UpdateRequest extends TransactionUpdateRequest {
  ReturnValues?: 'NONE' | 'ALL_OLD' | 'UPDATED_OLD' | 'ALL_NEW' | 'UPDATED_NEW';
}

/** A DeleteItem request inside a transaction, or the condition of a transaction's ConditionCheck. */
interface KeyedConditionRequest extends ConditionalRequest {
  Key: Key;
}

/** A DeleteItem request; `ReturnValues: 'ALL_OLD'` returns the deleted item. */
export interface DeleteRequest extends KeyedConditionRequest {
  ReturnValues?: 'NONE' | 'ALL_OLD';
}

/** A transaction's ConditionCheck: a condition on an item the transaction does not write. */
interface ConditionCheckRequest extends KeyedConditionRequest {
  ConditionExpression: string;
}

/** A Query request (one page): of the main table or a global secondary index (`IndexName`). */
export interface QueryRequest extends ExpressionPlaceholders {
  table?: TableChoice;
  IndexName?: string;
  KeyConditionExpression: string;
  FilterExpression?: string;
  ProjectionExpression?: string;
  /** Most items evaluated (before the filter) in this page. */
  Limit?: number;
  /** The previous page's `lastEvaluatedKey`. */
  ExclusiveStartKey?: Key;
  /** false = descending sort key. Default true. */
  ScanIndexForward?: boolean;
  /** Strongly consistent (main table only). Default false. */
  ConsistentRead?: boolean;
  /** 'COUNT': only the count is returned, no items. */
  Select?: 'ALL_ATTRIBUTES' | 'ALL_PROJECTED_ATTRIBUTES' | 'SPECIFIC_ATTRIBUTES' | 'COUNT';
}

/** One element of a TransactWriteItems request. */
export type TransactionItem =
  | { Put: PutRequest }
  | { Update: TransactionUpdateRequest }
  | { Delete: KeyedConditionRequest }
  | { ConditionCheck: ConditionCheckRequest };
