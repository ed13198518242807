import { CfnOutput, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import { TABLE_DEFINITION } from '../shared/store/table-definition.js';
import type { Construct } from 'constructs';
import { FunctionCode } from './function-code.js';
import { McpApi } from './mcp-api.js';
import { RestApi } from './rest-api.js';
import { MembershipTables } from './tables.js';
import { DeliveryQueue, RetryScheduler, WebhookWorkers } from './webhooks.js';

/** Properties of {@link MembershipServiceStack}. */
export interface MembershipServiceStackProps extends StackProps {
  /** Name of the EventBridge Scheduler group for retry timers. @default 'membership-webhook-retries' */
  readonly scheduleGroupName?: string;
}

/**
 * The whole membership service in one stack (DESIGN §1, §2): the two DynamoDB tables, the REST
 * API (one Lambda per route), the MCP tool server behind its own API, and the webhook pipeline
 * (stream fan-out → SQS → dispatcher, EventBridge Scheduler for long waits, a 5-minute sweeper).
 *
 * Outputs: `RestApiUrl` (`{base_url}`), `McpUrl` (`{mcp_url}`), `TableName`.
 */
export class MembershipServiceStack extends Stack {
  /** The bundles shared by the functions (one esbuild run per entry). */
  public readonly code: FunctionCode;
  /** Main and dead-letter tables. */
  public readonly tables: MembershipTables;
  /** Delivery queue and its poison-message queue. */
  public readonly deliveryQueue: DeliveryQueue;
  /** Schedule group and scheduler role for long retry waits. */
  public readonly retryScheduler: RetryScheduler;
  /** Fan-out, dispatcher and sweeper. */
  public readonly webhookWorkers: WebhookWorkers;
  /** The REST API. */
  public readonly restApi: RestApi;
  /** The MCP tool server. */
  public readonly mcpApi: McpApi;

  constructor(scope: Construct, id: string, props: MembershipServiceStackProps = {}) {
    super(scope, id, props);
    this.code = new FunctionCode();
    this.tables = new MembershipTables(this, 'Tables');
    this.deliveryQueue = new DeliveryQueue(this, 'Delivery');
    this.retryScheduler = new RetryScheduler(this, 'RetryScheduler', {
      queue: this.deliveryQueue.queue,
      scheduleGroupName: props.scheduleGroupName,
    });

    // Every function gets the same view of the data plane; grants stay per function.
    const environment: Record<string, string> = {
      TABLE_NAME: this.tables.table.tableName,
      DEAD_LETTER_TABLE_NAME: this.tables.deadLetterTable.tableName,
      DELIVERY_QUEUE_URL: this.deliveryQueue.queue.queueUrl,
    };

    this.webhookWorkers = new WebhookWorkers(this, 'Webhooks', {
      code: this.code,
      tables: this.tables,
      deliveryQueue: this.deliveryQueue,
      retryScheduler: this.retryScheduler,
      environment,
    });
    this.restApi = new RestApi(this, 'Rest', {
      code: this.code,
      tables: this.tables,
      queue: this.deliveryQueue.queue,
      environment,
    });
    this.mcpApi = new McpApi(this, 'Mcp', {
      code: this.code,
      tables: this.tables,
      queue: this.deliveryQueue.queue,
      environment,
    });

    Validations.of(this).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${TABLE_DEFINITION.logicalName}.Arn>/index/*]`,
      reason: 'Read/write grants on the main table include its GSIs (`<table arn>/index/*`), which list and worker queries use; the pattern covers only that table’s indexes.',
    });

    new CfnOutput(this, 'RestApiUrl', { description: 'REST API base URL ({base_url})', value: this.restApi.httpApi.endpoint });
    new CfnOutput(this, 'McpUrl', { description: 'MCP tool server URL ({mcp_url})', value: this.mcpApi.url });
    new CfnOutput(this, 'TableName', { description: 'Main DynamoDB table', value: this.tables.table.tableName });
  }
}
