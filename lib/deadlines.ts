import { Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import { fileEntry, type FunctionCode } from './function-code.js';
import { tableActions } from './route-stack.js';
import { ServiceFunction } from './service-function.js';
import type { MembershipTables } from './tables.js';

/** How often the deadline worker runs (DESIGN D15: every minute). */
const DEADLINE_WORKER_SCHEDULE = 'rate(1 minute)';

/** Timeout of one run (a run applies at most a bounded number of deadlines per shard; the rest wait a minute). */
const DEADLINE_WORKER_TIMEOUT = Duration.seconds(60);

/** Properties of {@link DeadlineWorker}. */
export interface DeadlineWorkerProps {
  /** Shared function bundles. */
  readonly code: FunctionCode;
  /** The tables (only the main table is used). */
  readonly tables: MembershipTables;
  /** Environment shared by every function of the service. */
  readonly environment: Record<string, string>;
}

/**
 * The deadline worker (DESIGN D14, D15): a Lambda (`functions/deadlines.ts`) that reads the sharded
 * deadline index and applies what is due, invoked every minute by an EventBridge Scheduler rate
 * schedule. Least privilege: the function reads and writes the main table with keyed operations and
 * queries only (no Scan, no BatchWriteItem, no queue, no dead-letter table); the schedule's role may only
 * invoke that function, and only schedules of this account may assume it.
 */
export class DeadlineWorker extends Construct {
  /** The worker function. */
  public readonly function: lambda.Function;
  /** The role EventBridge Scheduler assumes to invoke it. */
  public readonly scheduleRole: iam.Role;
  /** The `rate(1 minute)` schedule. */
  public readonly schedule: scheduler.CfnSchedule;

  constructor(scope: Construct, id: string, props: DeadlineWorkerProps) {
    super(scope, id);
    this.function = new ServiceFunction(this, 'Worker', {
      code: props.code,
      entry: fileEntry('deadlines'),
      description: 'Deadline worker: applies due deadlines (access code expiry, subscription timers)',
      timeout: DEADLINE_WORKER_TIMEOUT,
      environment: props.environment,
    }).function;
    props.tables.table.grant(this.function, ...tableActions('readWriteDelete'));

    this.scheduleRole = new iam.Role(this, 'ScheduleRole', {
      description: 'Assumed by EventBridge Scheduler to invoke the deadline worker every minute',
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
    });
    this.scheduleRole.addToPolicy(
      new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [this.function.functionArn] }),
    );

    this.schedule = new scheduler.CfnSchedule(this, 'Schedule', {
      description: 'Runs the deadline worker',
      scheduleExpression: DEADLINE_WORKER_SCHEDULE,
      flexibleTimeWindow: { mode: 'OFF' },
      state: 'ENABLED',
      target: {
        arn: this.function.functionArn,
        roleArn: this.scheduleRole.roleArn,
        // A missed minute is not retried: the next run applies everything still due.
        retryPolicy: { maximumRetryAttempts: 0, maximumEventAgeInSeconds: 60 },
      },
    });
  }
}
