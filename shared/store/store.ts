import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ProblemError } from '../errors.js';

/**
 * The DynamoDB adapter (the `Store` port of DESIGN §2): one document client and the two table names.
 * The same adapter serves AWS and DynamoDB Local; only the endpoint differs.
 */
export interface Store {
  document: DynamoDBDocumentClient;
  /** Main single table (see `table-definition.ts`). */
  tableName: string;
  /** Dead-letter table of dead deliveries. */
  deadLetterTableName: string;
}

/** Options for {@link createStore}. */
export interface StoreOptions {
  /** DynamoDB endpoint (DynamoDB Local); unset on AWS. */
  endpoint?: string;
  tableName: string;
  deadLetterTableName: string;
  /** An existing low-level client to wrap (tests count requests through its middleware stack). */
  client?: DynamoDBClient;
}

/** Builds a {@link Store}. With `endpoint` it uses dummy credentials and region `local` unless AWS_REGION is set. */
export function createStore(options: StoreOptions): Store {
  const client =
    options.client ??
    new DynamoDBClient(
      options.endpoint
        ? {
            endpoint: options.endpoint,
            region: process.env.AWS_REGION ?? 'local',
            credentials: { accessKeyId: process.env.AWS_ACCESS_KEY_ID ?? 'local', secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY ?? 'local' },
          }
        : {},
    );
  return {
    document: DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } }),
    tableName: options.tableName,
    deadLetterTableName: options.deadLetterTableName,
  };
}

/**
 * The store described by the environment: TABLE_NAME (default `membership`), DEAD_LETTER_TABLE_NAME
 * (default `membership-dead-letters`) and DYNAMODB_ENDPOINT (unset on AWS).
 */
export function storeFromEnvironment(env: NodeJS.ProcessEnv = process.env): Store {
  return createStore({
    endpoint: env.DYNAMODB_ENDPOINT || undefined,
    tableName: env.TABLE_NAME ?? 'membership',
    deadLetterTableName: env.DEAD_LETTER_TABLE_NAME ?? 'membership-dead-letters',
  });
}

/** Opaque list cursor: base64url JSON of DynamoDB's LastEvaluatedKey (DESIGN D12). */
export function encodeCursor(lastEvaluatedKey: Record<string, unknown> | undefined): string | null {
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
export function decodeCursor(cursor: string | undefined, expectedPartitionKey: string, shape: CursorShape = {}): Record<string, unknown> | undefined {
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
    keyAttributes.every((attribute) => typeof key[attribute] === 'string' && (key[attribute] as string).length > 0 && (key[attribute] as string).length <= 1024) &&
    (shape.sortKeyPrefix === undefined || (key.sk as string).startsWith(shape.sortKeyPrefix));
  if (!valid) {
    throw new ProblemError('VALIDATION_FAILED', 'The cursor is not valid for this list.', {
      errors: [{ path: 'cursor', message: 'Use the next_cursor of the previous page of this same list.' }],
    });
  }
  return key as Record<string, unknown>;
}
