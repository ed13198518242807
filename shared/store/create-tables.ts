import {
  CreateTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** A DynamoDB client (low-level or document) that sends control-plane commands. */
export type TableAdminClient = Pick<DynamoDBClient, 'send'> | Pick<DynamoDBDocumentClient, 'send'>;

/** Longest wait for a new table to become ACTIVE, in seconds. */
const TABLE_ACTIVE_TIMEOUT_SECONDS = 60;

import { DEAD_LETTER_TABLE_DEFINITION, TABLE_DEFINITION, type TableDefinition } from './table-definition.js';

/**
 * Creates one table from a {@link TableDefinition} (PAY_PER_REQUEST), waits until it is ACTIVE
 * and turns TTL on. Used by the local server and tests; on AWS the CDK stack creates the tables.
 * An existing table is left as it is (idempotent). Throws the SDK's error for anything else.
 *
 * No stream: locally nothing reads one (the runtime's `eventsCommitted` fans out), and DynamoDB Local serves
 * a table with both a stream and a GSI 5–10× slower per request, worse as the instance ages.
 */
async function createTable(client: TableAdminClient, tableName: string, definition: TableDefinition): Promise<void> {
  const attributes = new Map<string, string>();
  attributes.set(definition.partitionKey.name, definition.partitionKey.type);
  attributes.set(definition.sortKey.name, definition.sortKey.type);
  for (const index of definition.globalSecondaryIndexes) {
    attributes.set(index.partitionKey.name, index.partitionKey.type);
    attributes.set(index.sortKey.name, index.sortKey.type);
  }
  try {
    await (client as DynamoDBClient).send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [...attributes].map(([AttributeName, AttributeType]) => ({
          AttributeName,
          AttributeType: AttributeType as 'S',
        })),
        KeySchema: [
          { AttributeName: definition.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: definition.sortKey.name, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: definition.globalSecondaryIndexes.length
          ? definition.globalSecondaryIndexes.map((index) => ({
              IndexName: index.indexName,
              KeySchema: [
                { AttributeName: index.partitionKey.name, KeyType: 'HASH' as const },
                { AttributeName: index.sortKey.name, KeyType: 'RANGE' as const },
              ],
              Projection: { ProjectionType: 'ALL' as const },
            }))
          : undefined,
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    return;
  }
  await waitUntilTableExists(
    { client: client as DynamoDBClient, maxWaitTime: TABLE_ACTIVE_TIMEOUT_SECONDS, minDelay: 1, maxDelay: 2 },
    { TableName: tableName },
  );
  await (client as DynamoDBClient).send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: definition.timeToLiveAttribute, Enabled: true },
    }),
  );
}

/** Creates the main table and the dead-letter table (see {@link createTable}). */
export async function createTables(
  client: TableAdminClient,
  names: { table: string; deadLetterTable: string },
): Promise<void> {
  await createTable(client, names.table, TABLE_DEFINITION);
  await createTable(client, names.deadLetterTable, DEAD_LETTER_TABLE_DEFINITION);
}
