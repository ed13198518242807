import { ProblemError } from '../errors.js';
import type { Item, Key } from './requests.js';
import { secondaryIndex } from './keys.js';
import type { Store } from './store.js';

/**
 * The paged lists of the repositories (DESIGN D12, D14): the opaque cursor of a page, the one paged
 * partition query, and the optional filters of a list.
 */

/** Opaque list cursor: base64url JSON of DynamoDB's LastEvaluatedKey (DESIGN D12). */
export function encodeCursor(lastEvaluatedKey: Key | undefined): string | null {
  return lastEvaluatedKey ? Buffer.from(JSON.stringify(lastEvaluatedKey)).toString('base64url') : null;
}

/** What a list expects its cursors to look like (see {@link decodeCursor}). */
export interface CursorShape {
  /** The attribute holding the query's partition key (`pk`, or `gsi1pk` for the index). */
  partitionAttribute?: string;
  /** Every attribute DynamoDB's LastEvaluatedKey has for this query (default `pk`, `sk`). */
  keyAttributes?: readonly string[];
  /** Prefix the sort key `sk` must start with (the list's item type, e.g. `PROJECT#`). */
  sortKeyPrefix?: string;
}

/**
 * Decodes a cursor made by {@link encodeCursor} for a list whose partition key is
 * `expectedPartitionKey`. Returns undefined for no cursor. Throws ProblemError VALIDATION_FAILED
 * (field `cursor`; the edges rename it `query.cursor` / `arguments.cursor`) when it does not decode,
 * when its partition key is not `expectedPartitionKey` (a cursor never reads another team's data), or
 * when its attributes or sort key do not have this list's shape.
 */
export function decodeCursor(
  cursor: string | undefined,
  expectedPartitionKey: string,
  shape: CursorShape = {},
): Key | undefined {
  if (!cursor) return undefined;
  const partitionAttribute = shape.partitionAttribute ?? 'pk';
  const keyAttributes = shape.keyAttributes ?? ['pk', 'sk'];
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  const key = parsed as Record<string, unknown> | null;
  const valid =
    key !== null &&
    typeof key === 'object' &&
    !Array.isArray(key) &&
    key[partitionAttribute] === expectedPartitionKey &&
    Object.keys(key).length === keyAttributes.length &&
    keyAttributes.every(
      (attribute) => typeof key[attribute] === 'string' && key[attribute].length > 0 && key[attribute].length <= 1024,
    ) &&
    (shape.sortKeyPrefix === undefined || (key.sk as string).startsWith(shape.sortKeyPrefix));
  if (!valid) {
    throw new ProblemError('VALIDATION_FAILED', 'The cursor is not valid for this list.', {
      errors: [{ path: 'cursor', message: 'Use the next_cursor of the previous page of this same list.' }],
    });
  }
  return key;
}

/** A page of a list (DESIGN D12): items mapped to their public shape and the opaque cursor of the next page. */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** What {@link queryPage} reads: one partition's items whose sort key starts with `sortKeyPrefix`. */
export interface PageQuery<T> {
  partition: string;
  /**
   * Read the secondary index instead of the table: `partition` is an index partition, read whole (its index sort key
   * orders the page); `sortKeyPrefix` then only checks cursors.
   */
  index?: boolean;
  /** Sort-key prefix of the list's item type (`begins_with`); omitted for a partition of one type. */
  sortKeyPrefix?: string;
  /**
   * Sort keys from `from` to `to` (inclusive, `BETWEEN`) instead of `begins_with`: a time range of ULID-keyed items.
   * Cursors are still checked against `sortKeyPrefix`.
   */
  sortKeyRange?: { from: string; to: string };
  limit: number;
  cursor?: string;
  /** false = newest first (descending sort key). Default true. */
  ascending?: boolean;
  /** Strongly consistent read (main-table queries only). Default false. */
  consistent?: boolean;
  /** Maps a stored item to its public shape. */
  map: (item: Item) => T;
  /** A FilterExpression with its names and values (a filtered page may hold fewer than `limit`). */
  filter?: { expression: string; names?: Record<string, string>; values?: Record<string, unknown> };
}

/**
 * The one paged `begins_with` query of the repositories (DESIGN D12, D14): reads one page of a
 * partition, checks the cursor against this list's partition and item type ({@link decodeCursor}) and
 * maps the items. Errors: VALIDATION_FAILED for a cursor of another list.
 */
export async function queryPage<T>(store: Store, query: PageQuery<T>): Promise<Page<T>> {
  const values: Record<string, unknown> = { ':pk': query.partition, ...(query.filter?.values ?? {}) };
  let keyCondition = 'pk = :pk';
  if (query.index) {
    keyCondition = '#index_pk = :pk';
  } else if (query.sortKeyRange) {
    keyCondition = 'pk = :pk AND sk BETWEEN :from AND :to';
    values[':from'] = query.sortKeyRange.from;
    values[':to'] = query.sortKeyRange.to;
  } else if (query.sortKeyPrefix) {
    keyCondition = 'pk = :pk AND begins_with(sk, :prefix)';
    values[':prefix'] = query.sortKeyPrefix;
  }
  const names = query.index
    ? { '#index_pk': secondaryIndex.partitionKey, ...query.filter?.names }
    : query.filter?.names;
  const result = await store.query({
    IndexName: query.index ? secondaryIndex.name : undefined,
    KeyConditionExpression: keyCondition,
    FilterExpression: query.filter?.expression,
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ScanIndexForward: query.ascending ?? true,
    Limit: query.limit,
    ConsistentRead: query.consistent,
    ExclusiveStartKey: decodeCursor(
      query.cursor,
      query.partition,
      query.index
        ? {
            partitionAttribute: secondaryIndex.partitionKey,
            keyAttributes: secondaryIndex.cursorAttributes,
            sortKeyPrefix: query.sortKeyPrefix,
          }
        : { sortKeyPrefix: query.sortKeyPrefix },
    ),
  });
  return { data: result.items.map(query.map), next_cursor: encodeCursor(result.lastEvaluatedKey) };
}

/**
 * One condition of a list's filter: `attribute` equals `equals` (dropped when `equals` is undefined), or is one of
 * `oneOf`.
 */
export type ListCondition = { attribute: string; equals: unknown } | { attribute: string; oneOf: readonly unknown[] };

/**
 * The FilterExpression of a list's optional filters (DESIGN D12): the conditions that apply, ANDed, their
 * attribute names and values as placeholders (`#filter0`, `:filter0`, …), or undefined when none applies.
 * An empty `oneOf` is compared with the empty string, which no filtered attribute holds: it matches no item.
 */
export function listFilter(
  conditions: readonly ListCondition[],
): NonNullable<PageQuery<unknown>['filter']> | undefined {
  const parts: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  conditions.forEach((condition, index) => {
    const name = `#filter${index}`;
    if ('oneOf' in condition) {
      const options = condition.oneOf.length ? condition.oneOf : [''];
      options.forEach((option, position) => (values[`:filter${index}_${position}`] = option));
      parts.push(`${name} IN (${options.map((_, position) => `:filter${index}_${position}`).join(', ')})`);
    } else if (condition.equals !== undefined) {
      values[`:filter${index}`] = condition.equals;
      parts.push(`${name} = :filter${index}`);
    } else {
      return;
    }
    names[name] = condition.attribute;
  });
  return parts.length ? { expression: parts.join(' AND '), names, values } : undefined;
}
