import { ENVIRONMENT_VARIABLES } from '../shared/config.js';
import { SWEEP_INTERVAL_SECONDS } from '../shared/domain/webhook-deliveries/policy.js';
import { BATCH_CODE_PARTITION_PATTERNS } from '../shared/store/access-codes/jobs.js';
import { entity } from '../shared/store/keys.js';
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { fileEntry, type FunctionCode } from './function-code.js';
import { TABLE_DELETE_ACTIONS, tableActions } from './route-stack.js';
import { failureQueue, grantSendToQueues, type PipelineQueue, type PipelineQueues } from './queues.js';
import { ServiceFunction } from './service-function.js';
import type { MembershipTables } from './tables.js';

/** Timeout of the dispatcher (one batch of up to 10 deliveries, each with a 10 s budget, in parallel). */
export const DISPATCHER_TIMEOUT = Duration.seconds(30);

/**
 * Timeout of the job worker: one batch of up to 10 job messages in parallel, each step sized to end well within it
 * (a step that has not progressed for `SWEEP_GRACE_MS`, 60 s, is restarted by the sweeper).
 */
export const JOB_WORKER_TIMEOUT = Duration.seconds(30);

/**
 * Most job worker invocations the job queue's event source runs at once: jobs call providers (SES, Stripe, the chat
 * platforms) whose rate limits are per account, so fewer than the dispatcher's.
 */
export const JOB_WORKER_MAX_CONCURRENCY = 10;

/** Reserved concurrency of the job worker: as the dispatcher's, its event source's maximum plus 5. */
export const JOB_WORKER_RESERVED_CONCURRENCY = JOB_WORKER_MAX_CONCURRENCY + 5;

/** Default name of the EventBridge Scheduler group that holds the long retry timers (DESIGN D7). */
const DEFAULT_SCHEDULE_GROUP_NAME = 'membership-webhook-retries';

/** CloudFormation logical id of the schedule group. */
const RETRY_SCHEDULE_GROUP_LOGICAL_ID = 'RetryScheduleGroup';

/**
 * Most dispatcher invocations the delivery queue's event source runs at once (`maxConcurrency` of the
 * SQS event source mapping; AWS allows 2–1000). Each invocation handles a batch of up to 10 deliveries
 * in parallel, so at most 200 webhook attempts are in flight at once across all tenants; per-endpoint
 * caps (DESIGN D24, default 5) keep one receiver from taking them all.
 */
export const DISPATCHER_MAX_CONCURRENCY = 20;

/**
 * Reserved concurrency of the dispatcher (concurrent executions). At least
 * {@link DISPATCHER_MAX_CONCURRENCY}, so the event source is never throttled by Lambda (a throttled SQS
 * batch goes back to the queue and counts a receive, and 5 receives park a message in the poison queue);
 * the 5 above it leave room for the poller's scaling overshoot. It also caps the dispatcher, so a
 * backlog of deliveries cannot take the account's concurrency from the API's Lambdas.
 */
export const DISPATCHER_RESERVED_CONCURRENCY = DISPATCHER_MAX_CONCURRENCY + 5;

/** How often the sweeper runs (the sweeper's own spacing of re-queues follows it, see `sweep`). */
const SWEEPER_RATE = Duration.seconds(SWEEP_INTERVAL_SECONDS);

/** Properties of {@link RetryScheduler}. */
export interface RetrySchedulerProps {
  /** The queue the one-time schedules send to. */
  readonly queue: sqs.IQueue;
  /** @default {@link DEFAULT_SCHEDULE_GROUP_NAME} */
  readonly scheduleGroupName?: string;
}

/**
 * EventBridge Scheduler resources for waits longer than SQS `DelaySeconds` allows (DESIGN D7):
 * a schedule group for the one-time `at(...)` schedules, and the role the scheduler assumes to
 * deliver them, which may only `sqs:SendMessage` to the delivery queue.
 */
export class RetryScheduler extends Construct {
  /** The schedule group. */
  public readonly group: scheduler.CfnScheduleGroup;
  /** Name of the schedule group (resolves after deployment ordering, via `Ref`). */
  public readonly groupName: string;
  /** Role assumed by `scheduler.amazonaws.com` when a schedule fires. */
  public readonly role: iam.Role;
  private readonly queue: sqs.IQueue;

  constructor(scope: Construct, id: string, props: RetrySchedulerProps) {
    super(scope, id);
    this.queue = props.queue;
    this.group = new scheduler.CfnScheduleGroup(this, 'Group', {
      name: props.scheduleGroupName ?? DEFAULT_SCHEDULE_GROUP_NAME,
    });
    // Stable logical id: it appears in IAM resource patterns (and their cdk-nag acknowledgements).
    this.group.overrideLogicalId(RETRY_SCHEDULE_GROUP_LOGICAL_ID);
    this.groupName = this.group.ref;
    this.role = new iam.Role(this, 'Role', {
      description: 'Assumed by EventBridge Scheduler to put webhook retry messages on the delivery queue',
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          // Confused-deputy protection: only schedules of this account's retry group.
          StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
          ArnEquals: { 'aws:SourceArn': this.group.attrArn },
        },
      }),
    });
    this.role.addToPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [props.queue.queueArn] }));
  }

  /** Environment variables a worker needs to create schedules. */
  public environment(): Record<string, string> {
    return {
      [ENVIRONMENT_VARIABLES.schedulerGroupName]: this.groupName,
      [ENVIRONMENT_VARIABLES.schedulerRoleArn]: this.role.roleArn,
      [ENVIRONMENT_VARIABLES.deliveryQueueArn]: this.queue.queueArn,
    };
  }

  /**
   * Lets `fn` create and delete schedules in the group (only there) and pass the scheduler role
   * (only to EventBridge Scheduler).
   */
  public grantScheduling(fn: lambda.Function): void {
    const scheduleArn = Stack.of(this).formatArn({
      service: 'scheduler',
      resource: 'schedule',
      resourceName: `${this.groupName}/*`,
    });
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['scheduler:CreateSchedule', 'scheduler:DeleteSchedule'],
        resources: [scheduleArn],
      }),
    );
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.role.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
    if (fn.role) {
      Validations.of(fn.role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/<${RETRY_SCHEDULE_GROUP_LOGICAL_ID}>/*]`,
        reason:
          'Schedule names are generated per delivery attempt at run time; the pattern is confined to the retry schedule group.',
      });
    }
  }
}

/** Properties of {@link WebhookWorkers}. */
export interface WebhookWorkersProps {
  /** Shared function bundles. */
  readonly code: FunctionCode;
  /** Both tables. */
  readonly tables: MembershipTables;
  /** The delivery queue (consumed by the dispatcher) and the job queue (consumed by the job worker). */
  readonly queues: { readonly deliveries: PipelineQueue; readonly jobs: PipelineQueue };
  /** Long-wait timers. */
  readonly retryScheduler: RetryScheduler;
  /** Environment shared by every function of the service. */
  readonly environment: Record<string, string>;
}

/**
 * The webhook pipeline's workers (DESIGN D6, D7): fan-out (stream INSERTs of outbox `event` items → deliveries; failed
 * batches bisected, retried, parked), dispatcher (delivery queue, batches of 10, partial batch responses), job worker
 * (job queue: messages to subscribers, broadcasts, imports, audits, access-code batches), sweeper (every 5 min:
 * re-queue lost timers, restart stalled jobs, dead-letter after 72 h).
 */
export class WebhookWorkers extends Construct {
  /** The fan-out function. */
  public readonly fanOut: lambda.Function;
  /** The dispatcher function. */
  public readonly dispatcher: lambda.Function;
  /** The job worker function. */
  public readonly jobWorker: lambda.Function;
  /** The sweeper function. */
  public readonly sweeper: lambda.Function;
  /** Stream batches the fan-out could not process after all retries (metadata only). */
  public readonly fanOutFailures: sqs.Queue;
  /** The `rate(5 minutes)` rule that runs the sweeper. */
  public readonly sweeperRule: events.Rule;

  constructor(scope: Construct, id: string, props: WebhookWorkersProps) {
    super(scope, id);
    const { table, deadLetterTable } = props.tables;
    const queue = props.queues.deliveries.queue;
    const queues: PipelineQueues = { deliveries: queue, jobs: props.queues.jobs.queue };

    // Fan-out ---------------------------------------------------------------------------------
    this.fanOut = new ServiceFunction(this, 'FanOut', {
      code: props.code,
      entry: fileEntry('fan-out'),
      description: 'Webhook fan-out: outbox events from the table stream to deliveries',
      timeout: Duration.seconds(60),
      environment: props.environment,
    }).function;
    // Least privilege (DESIGN D23): keyed reads, queries and single-item writes; the fan-out deletes nothing.
    // The stream read (GetRecords, GetShardIterator, DescribeStream, ListStreams) comes with the event source.
    table.grant(this.fanOut, ...tableActions('readWrite'));
    grantSendToQueues(queues, this.fanOut);
    // `Resource: *` of dynamodb:ListStreams (no resource-level permissions) is acknowledged with X-Ray's
    // on every function's role (`ServiceFunction`).

    this.fanOutFailures = failureQueue(
      this,
      'FanOutFailures',
      'the on-failure destination of the fan-out stream mapping',
    );
    this.fanOut.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: lambda.StartingPosition.TRIM_HORIZON,
        batchSize: 100,
        bisectBatchOnError: true,
        retryAttempts: 10,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(this.fanOutFailures),
        // aws-cdk-lib types FilterRule.isEqual's pattern as `any`.
        filters: [
          lambda.FilterCriteria.filter({
            eventName: lambda.FilterRule.isEqual('INSERT') as unknown,
            dynamodb: { NewImage: { entity: { S: lambda.FilterRule.isEqual(entity.event) as unknown } } },
          }),
        ],
      }),
    );

    // Dispatcher ------------------------------------------------------------------------------
    const schedulingEnvironment = props.retryScheduler.environment();
    this.dispatcher = new ServiceFunction(this, 'Dispatcher', {
      code: props.code,
      entry: fileEntry('dispatcher'),
      description: 'Webhook dispatcher: one signed HTTPS attempt per queued delivery',
      timeout: DISPATCHER_TIMEOUT,
      environment: { ...props.environment, ...schedulingEnvironment },
      reservedConcurrentExecutions: DISPATCHER_RESERVED_CONCURRENCY,
    }).function;
    // A replay job's batch deletes the dead-letter copy of each delivery it re-queues (`deliveryRequeues.requeueDead`);
    // nothing else of the dispatcher deletes.
    table.grant(this.dispatcher, ...tableActions('readWrite'));
    deadLetterTable.grant(this.dispatcher, ...tableActions('readWriteDelete'));
    grantSendToQueues(queues, this.dispatcher);
    props.retryScheduler.grantScheduling(this.dispatcher);
    this.dispatcher.addEventSource(
      new SqsEventSource(queue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        maxConcurrency: DISPATCHER_MAX_CONCURRENCY,
      }),
    );

    // Job worker ------------------------------------------------------------------------------
    this.jobWorker = new ServiceFunction(this, 'JobWorker', {
      code: props.code,
      entry: fileEntry('job-worker'),
      description: 'Job worker: messages to subscribers, broadcasts, imports, access audits, access-code batches',
      timeout: JOB_WORKER_TIMEOUT,
      environment: props.environment,
      reservedConcurrentExecutions: JOB_WORKER_RESERVED_CONCURRENCY,
    }).function;
    // An access-code batch job that fails or runs again deletes its batch's items (`deleteBatchCodes`), in their
    // partitions only; nothing else of the job worker deletes.
    table.grant(this.jobWorker, ...tableActions('readWrite'));
    this.jobWorker.addToRolePolicy(
      new iam.PolicyStatement({
        actions: [...TABLE_DELETE_ACTIONS],
        resources: [table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...BATCH_CODE_PARTITION_PATTERNS] } },
      }),
    );
    grantSendToQueues(queues, this.jobWorker);
    this.jobWorker.addEventSource(
      new SqsEventSource(props.queues.jobs.queue, {
        batchSize: 10,
        reportBatchItemFailures: true,
        maxConcurrency: JOB_WORKER_MAX_CONCURRENCY,
      }),
    );

    // Sweeper ---------------------------------------------------------------------------------
    this.sweeper = new ServiceFunction(this, 'Sweeper', {
      code: props.code,
      entry: fileEntry('sweeper'),
      description: 'Webhook sweeper: re-queues lost timers, dead-letters expired deliveries',
      timeout: Duration.seconds(120),
      environment: { ...props.environment, ...schedulingEnvironment },
    }).function;
    // The sweeper re-queues and fans out (main table only); dead-lettering itself happens in the
    // dispatcher, on the `dead_letter` message the sweeper sends.
    table.grant(this.sweeper, ...tableActions('readWrite'));
    grantSendToQueues(queues, this.sweeper);
    props.retryScheduler.grantScheduling(this.sweeper);
    this.sweeperRule = new events.Rule(this, 'SweeperSchedule', {
      description: 'Runs the webhook sweeper',
      schedule: events.Schedule.rate(SWEEPER_RATE),
      targets: [new targets.LambdaFunction(this.sweeper, { retryAttempts: 2, maxEventAge: SWEEPER_RATE })],
    });
  }
}
