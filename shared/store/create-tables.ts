import {
  CreateTableCommand,
  DescribeTableCommand,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
/** Any DynamoDB client (low-level or document) that can send control-plane commands. */
export type TableAdminClient = { send(command: CreateTableCommand | DescribeTableCommand | UpdateTimeToLiveCommand): Promise<any> };

import { DEAD_LETTER_TABLE_DEFINITION, TABLE_DEFINITION, type TableDefinition } from './table-definition.js';

/**
 * Creates one table from a {@link TableDefinition} (PAY_PER_REQUEST), waits until it is ACTIVE
 * and turns TTL on. Used by the local server and tests; on AWS the CDK stack creates the tables.
 * An existing table is left as it is (idempotent). Throws the SDK's error for anything else.
 */
export async function createTable(client: TableAdminClient, tableName: string, definition: TableDefinition): Promise<void> {
  const attributes = new Map<string, string>();
  attributes.set(definition.partitionKey.name, definition.partitionKey.type);
  attributes.set(definition.sortKey.name, definition.sortKey.type);
  for (const index of definition.globalSecondaryIndexes) {
    attributes.set(index.partitionKey.name, index.partitionKey.type);
    attributes.set(index.sortKey.name, index.sortKey.type);
  }
  try {
    await client.send(
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
        StreamSpecification: definition.streamViewType
          ? { StreamEnabled: true, StreamViewType: definition.streamViewType }
          : undefined,
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
    return;
  }
  for (let i = 0; i < 100; i++) {
    const described = (await client.send(new DescribeTableCommand({ TableName: tableName }))) as { Table?: { TableStatus?: string } };
    if (described.Table?.TableStatus === 'ACTIVE') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: definition.timeToLiveAttribute, Enabled: true },
    }),
  );
}

/** Creates the main table and the dead-letter table (see {@link createTable}). */
export async function createTables(client: TableAdminClient, names: { table: string; deadLetterTable: string }): Promise<void> {
  await createTable(client, names.table, TABLE_DEFINITION);
  await createTable(client, names.deadLetterTable, DEAD_LETTER_TABLE_DEFINITION);
}
