import { ENVIRONMENT_VARIABLES } from '../shared/config.js';
import { CfnOutput, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { OPERATIONS, type RegisteredOperation } from '../shared/operations/registry.js';
import { credentialKeyActions, credentialKeyUse } from '../shared/credentials/usage.js';
import { TABLE_DEFINITION } from '../shared/store/table-definition.js';
import { FunctionCode, type Bundler } from './function-code.js';
import { McpApi } from './mcp-api.js';
import { RestApi } from './rest-api.js';
import { DeadlineWorker } from './deadlines.js';
import { CredentialsKey } from './credentials-key.js';
import { BillingWebhookSecret } from './billing-webhook-secret.js';
import { MembershipTables } from './tables.js';
import { alarmTopic, OperationalAlarms, type AlarmNotificationSettings } from './alarms.js';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { PipelineQueue, type PipelineQueues } from './queues.js';
import { DISPATCHER_TIMEOUT, JOB_WORKER_TIMEOUT, RetryScheduler, WebhookWorkers } from './webhooks.js';
import { grantMailSending } from './mail.js';

/** Properties of {@link MembershipServiceStack}. */
export interface MembershipServiceStackProps extends StackProps, AlarmNotificationSettings {
  /** Name of the EventBridge Scheduler group for retry timers. @default 'membership-webhook-retries' */
  readonly scheduleGroupName?: string;
  /**
   * The operations served by the REST API, one route and one Lambda each. Tests pass generated
   * lists (e.g. 150 routes) to check the stack layout at scale. @default the registry's `OPERATIONS`
   */
  readonly operations?: readonly RegisteredOperation[];
  /** Builds each Lambda bundle. Tests inject a stub to skip esbuild. @default esbuild ({@link FunctionCode}) */
  readonly bundler?: Bundler;
  /**
   * The complete ARN of an existing Secrets Manager secret holding the operator's billing webhook signing
   * secret (DESIGN D20). @default a secret the stack creates ({@link BillingWebhookSecret})
   */
  readonly billingWebhookSecretArn?: string;
  /**
   * The SES-verified address e-mail to subscribers is sent from (DESIGN D32): the sending functions get `MAIL_FROM` and
   * `ses:SendEmail`/`ses:SendRawEmail` on its identities. @default none: no function may send e-mail
   */
  readonly mailFrom?: string;
}

/**
 * The whole service (DESIGN §1, §2): both tables, the MCP API, webhook pipeline, deadline worker, alarms (D23); REST
 * routes live in nested stacks, one per object module. Outputs: `RestApiUrl`, `McpUrl`, `DashboardUrl`, `TableName`,
 * `BillingWebhookSecretArn` (operator puts the `whsec_...` there).
 */
export class MembershipServiceStack extends Stack {
  /** The functions' bundles (one esbuild run per entry). */
  public readonly code: FunctionCode;
  /** Main and dead-letter tables. */
  public readonly tables: MembershipTables;
  /** Delivery queue and its poison-message queue (the dispatcher's). */
  public readonly deliveryQueue: PipelineQueue;
  /** Job queue and its poison-message queue (the job worker's). */
  public readonly jobQueue: PipelineQueue;
  /** Schedule group and scheduler role for long retry waits. */
  public readonly retryScheduler: RetryScheduler;
  /** Fan-out, dispatcher, job worker and sweeper. */
  public readonly webhookWorkers: WebhookWorkers;
  /** The deadline worker and its every-minute schedule. */
  public readonly deadlineWorker: DeadlineWorker;
  /** The REST API. */
  public readonly restApi: RestApi;
  /** The MCP tool server. */
  public readonly mcpApi: McpApi;
  /** The KMS key of stored credentials (DESIGN D16). */
  public readonly credentialsKey: CredentialsKey;
  /** The operator's billing webhook signing secret (DESIGN D20, D16 storage rules). */
  public readonly billingWebhookSecret: BillingWebhookSecret;
  /** The CloudWatch alarms (DESIGN D23). */
  public readonly alarms: OperationalAlarms;
  /** The topic every alarm notifies (`alarmEmail` or `alarmTopicArn`), if any. */
  public readonly alarmTopic: sns.ITopic | undefined;

  constructor(scope: Construct, id: string, props: MembershipServiceStackProps = {}) {
    super(scope, id, props);
    this.alarmTopic = alarmTopic(this, props);
    this.code = new FunctionCode(props.bundler);
    this.tables = new MembershipTables(this, 'Tables');
    this.deliveryQueue = new PipelineQueue(this, 'Delivery', { consumerTimeout: DISPATCHER_TIMEOUT });
    this.jobQueue = new PipelineQueue(this, 'Jobs', { consumerTimeout: JOB_WORKER_TIMEOUT });
    const queues: PipelineQueues = { deliveries: this.deliveryQueue.queue, jobs: this.jobQueue.queue };
    this.retryScheduler = new RetryScheduler(this, 'RetryScheduler', {
      queue: this.deliveryQueue.queue,
      scheduleGroupName: props.scheduleGroupName,
    });

    this.credentialsKey = new CredentialsKey(this, 'Credentials');
    this.billingWebhookSecret = new BillingWebhookSecret(this, 'BillingWebhookSecret', {
      existingSecretArn: props.billingWebhookSecretArn,
    });

    // Every function gets the same view of the data plane; grants stay per function (the credentials
    // key's id is known to all, usable only by those granted it).
    const environment: Record<string, string> = {
      [ENVIRONMENT_VARIABLES.tableName]: this.tables.table.tableName,
      [ENVIRONMENT_VARIABLES.deadLetterTableName]: this.tables.deadLetterTable.tableName,
      [ENVIRONMENT_VARIABLES.deliveryQueueUrl]: this.deliveryQueue.queue.queueUrl,
      [ENVIRONMENT_VARIABLES.jobQueueUrl]: this.jobQueue.queue.queueUrl,
      [ENVIRONMENT_VARIABLES.credentialsKmsKeyId]: this.credentialsKey.key.keyArn,
    };

    this.webhookWorkers = new WebhookWorkers(this, 'Webhooks', {
      code: this.code,
      tables: this.tables,
      queues: { deliveries: this.deliveryQueue, jobs: this.jobQueue },
      retryScheduler: this.retryScheduler,
      environment,
    });
    this.deadlineWorker = new DeadlineWorker(this, 'Deadlines', { code: this.code, tables: this.tables, environment });
    // Clock-driven transitions start and end access on the platforms.
    this.credentialsKey.key.grant(this.deadlineWorker.function, ...credentialKeyActions('open'));
    // The dispatcher opens each endpoint's sealed signing secrets (once per process and endpoint revision); the job
    // worker opens the bot tokens and Stripe keys its messages, imports and audits use.
    this.credentialsKey.key.grant(this.webhookWorkers.dispatcher, ...credentialKeyActions('open'));
    this.credentialsKey.key.grant(this.webhookWorkers.jobWorker, ...credentialKeyActions('open'));
    // The job worker sends the queued messages to subscribers, e-mail included (DESIGN D32); the deadline worker
    // e-mails a delivered gift's code to its recipient (D33).
    grantMailSending(this.webhookWorkers.jobWorker, props.mailFrom);
    grantMailSending(this.deadlineWorker.function, props.mailFrom);
    this.restApi = new RestApi(this, 'Rest', {
      operations: props.operations ?? OPERATIONS,
      code: this.code,
      tables: this.tables,
      queues,
      environment,
      credentialsKey: this.credentialsKey.key,
      mailFrom: props.mailFrom,
      billingWebhookSecret: this.billingWebhookSecret,
    });
    this.mcpApi = new McpApi(this, 'Mcp', {
      code: this.code,
      tables: this.tables,
      queues,
      environment,
      dashboardBaseUrl: this.restApi.httpApi.endpoint,
    });
    // The tool server runs every tool's operation: the key use of their union.
    const toolOperations = (props.operations ?? OPERATIONS).filter((operation) => operation.tool);
    const toolKeyUse = credentialKeyUse(toolOperations);
    if (toolKeyUse !== 'none') this.credentialsKey.key.grant(this.mcpApi.function, ...credentialKeyActions(toolKeyUse));
    // The dashboard's main area rotates endpoint secrets, opening the old one to keep it signing (DESIGN D8) besides
    // sealing the new one; its projects area connects bots and providers (seals) and moderates (opens). Sign-in
    // holds no credential.
    const dashboard = this.restApi.dashboard.functions;
    for (const fn of [dashboard.dashboard, dashboard['dashboard-projects']])
      this.credentialsKey.key.grant(fn, ...credentialKeyActions('open-and-seal'));
    // The operations that send e-mail themselves (invitations, D19) run on their routes, the dashboard's main area
    // (the team's members page) and, as tools, on the tool server.
    grantMailSending(dashboard.dashboard, props.mailFrom);
    if (toolOperations.some((operation) => operation.sendsEmail))
      grantMailSending(this.mcpApi.function, props.mailFrom);

    // Last, once every function exists: each gets its errors and throttles alarms.
    this.alarms = new OperationalAlarms(this, 'Alarms', {
      deliveryQueue: this.deliveryQueue.queue,
      deliveryDeadLetterQueue: this.deliveryQueue.deadLetterQueue,
      jobQueue: this.jobQueue.queue,
      jobDeadLetterQueue: this.jobQueue.deadLetterQueue,
      fanOutFailures: this.webhookWorkers.fanOutFailures,
      topic: this.alarmTopic,
    });
    this.alarms.watchFunctions(this);

    Validations.of(this).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${TABLE_DEFINITION.logicalName}.Arn>/index/*]`,
      reason:
        'Read/write grants on the main table include its GSIs (`<table arn>/index/*`), which list and worker queries use; the pattern covers only that table’s indexes.',
    });

    new CfnOutput(this, 'RestApiUrl', {
      description: 'REST API base URL ({base_url})',
      value: this.restApi.httpApi.endpoint,
    });
    new CfnOutput(this, 'McpUrl', { description: 'MCP tool server URL ({mcp_url})', value: this.mcpApi.url });
    new CfnOutput(this, 'DashboardUrl', {
      description: 'Dashboard for team members (DESIGN D21)',
      value: `${this.restApi.httpApi.endpoint}/dashboard`,
    });
    new CfnOutput(this, 'TableName', { description: 'Main DynamoDB table', value: this.tables.table.tableName });
    new CfnOutput(this, 'BillingWebhookSecretArn', {
      description:
        'Secrets Manager secret for the signing secret (whsec_...) of the operator billing Stripe webhook (POST /hooks/billing/stripe): aws secretsmanager put-secret-value --secret-id <this> --secret-string whsec_...',
      value: this.billingWebhookSecret.secretArn,
    });
  }
}
