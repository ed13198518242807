import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import {
  DEAD_LETTER_TABLE_DEFINITION,
  TABLE_DEFINITION,
  type TableDefinition,
} from '../shared/store/table-definition.js';

function attribute(key: { name: string; type: string }): dynamodb.Attribute {
  const types: Record<string, dynamodb.AttributeType> = {
    S: dynamodb.AttributeType.STRING,
    N: dynamodb.AttributeType.NUMBER,
    B: dynamodb.AttributeType.BINARY,
  };
  const type = types[key.type];
  if (!type) throw new Error(`Unsupported key type ${key.type} for ${key.name}`);
  return { name: key.name, type };
}

function streamViewType(value: string | null): dynamodb.StreamViewType | undefined {
  if (value === null) return undefined;
  const types: Record<string, dynamodb.StreamViewType> = {
    NEW_IMAGE: dynamodb.StreamViewType.NEW_IMAGE,
    OLD_IMAGE: dynamodb.StreamViewType.OLD_IMAGE,
    NEW_AND_OLD_IMAGES: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    KEYS_ONLY: dynamodb.StreamViewType.KEYS_ONLY,
  };
  const type = types[value];
  if (!type) throw new Error(`Unsupported stream view type ${value}`);
  return type;
}

/**
 * Builds a DynamoDB table from a shared {@link TableDefinition} (the same definition the local
 * server uses): on-demand billing, point-in-time recovery, TTL, optional stream, its GSIs.
 * Tables are retained on stack deletion and have deletion protection on (they hold customer data;
 * DESIGN D23), and their logical id is the
 * definition's `logicalName`, independent of the construct tree.
 */
function tableFromDefinition(scope: Construct, definition: TableDefinition): dynamodb.Table {
  const table = new dynamodb.Table(scope, definition.logicalName, {
    partitionKey: attribute(definition.partitionKey),
    sortKey: attribute(definition.sortKey),
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    timeToLiveAttribute: definition.timeToLiveAttribute,
    stream: streamViewType(definition.streamViewType),
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    removalPolicy: RemovalPolicy.RETAIN,
    // DESIGN D23: a DeleteTable call (console, CLI, a replaced resource) fails until this is turned off.
    deletionProtection: true,
  });
  for (const index of definition.globalSecondaryIndexes) {
    table.addGlobalSecondaryIndex({
      indexName: index.indexName,
      partitionKey: attribute(index.partitionKey),
      sortKey: attribute(index.sortKey),
      projectionType: dynamodb.ProjectionType.ALL,
    });
  }
  // Pin the logical id to the definition's name: a construct refactor must never replace a data table.
  (table.node.defaultChild as dynamodb.CfnTable).overrideLogicalId(definition.logicalName);
  return table;
}

/**
 * The service's two tables: the single-table store (its stream feeds the webhook fan-out) and the
 * dead-letter table that keeps a copy of every dead webhook delivery.
 */
export class MembershipTables extends Construct {
  /** The single-table store (`TABLE_DEFINITION`), stream `NEW_IMAGE`. */
  public readonly table: dynamodb.Table;
  /** Copies of dead deliveries (`DEAD_LETTER_TABLE_DEFINITION`), read by replay-dead. */
  public readonly deadLetterTable: dynamodb.Table;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.table = tableFromDefinition(this, TABLE_DEFINITION);
    this.deadLetterTable = tableFromDefinition(this, DEAD_LETTER_TABLE_DEFINITION);
  }
}
