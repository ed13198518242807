import { CfnParameter, Duration, NestedStack, Validations } from 'aws-cdk-lib';
import { routeWithoutAuthorizer } from './http-api.js';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import { credentialKeyActions, credentialKeyUse } from '../shared/credentials/usage.js';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { routeKey, type RegisteredOperation } from '../shared/operations/registry.js';
import { RATE_COUNTER_PARTITION_PREFIX, TOKEN_PARTITION_PREFIX } from '../shared/store/keys.js';
import { operationEntry, type FunctionCode } from './function-code.js';
import { grantMailSending } from './mail.js';
import { ServiceFunction } from './service-function.js';
import type { MembershipTables } from './tables.js';
import { grantSendToQueues, type PipelineQueues } from './queues.js';

/** `listWebhookEndpoints` → `ListWebhookEndpoints`, `webhook-endpoints` → `WebhookEndpoints`. */
export function pascalCase(name: string): string {
  return name
    .split(/[-_]/)
    .filter((part) => part !== '')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** `listWebhookEndpoints` → `ListWebhookEndpoints`: the construct-id stem of a route (so its logical ids). */
function constructIdOf(operationId: string): string {
  return pascalCase(operationId);
}

/**
 * DynamoDB actions of a function that reads a table (DESIGN D23): keyed reads and queries only — no
 * `Scan`, no stream reads, no `DescribeTable`. No code of the service scans a table or writes in batches
 * (`shared/store/store.ts` has neither), so no function is granted `Scan` or `BatchWriteItem`.
 */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'] as const;

/**
 * DynamoDB actions of a function that writes a table, beyond {@link TABLE_READ_ACTIONS}: single-item
 * writes (also inside `TransactWriteItems`, whose condition-only items need `ConditionCheckItem`).
 */
export const TABLE_WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:ConditionCheckItem'] as const;

/**
 * `DeleteItem`, granted only where code deletes (DESIGN D23): write routes (an idempotency claim is
 * released by a delete when the write fails; delete operations; renames of unique names), the MCP and
 * dashboard functions (they run those operations), the deadline worker (an applied deadline is deleted)
 * and the dispatcher on the dead-letter table (a replayed delivery's dead-letter copy is deleted) and, on the main
 * table, in access-code partitions only (a failed or restarted batch job's items are deleted).
 */
export const TABLE_DELETE_ACTIONS = ['dynamodb:DeleteItem'] as const;

/**
 * How a function may use a table: `read` ({@link TABLE_READ_ACTIONS}), `readWrite` (plus
 * {@link TABLE_WRITE_ACTIONS}), `readWriteDelete` (plus {@link TABLE_DELETE_ACTIONS}).
 */
export type TableAccess = 'none' | 'read' | 'readWrite' | 'readWriteDelete';

/** The DynamoDB actions of a {@link TableAccess}. */
export function tableActions(access: TableAccess): string[] {
  switch (access) {
    case 'none':
      return [];
    case 'read':
      return [...TABLE_READ_ACTIONS];
    case 'readWrite':
      return [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS];
    case 'readWriteDelete':
      return [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS, ...TABLE_DELETE_ACTIONS];
  }
}

/**
 * Grants `UpdateItem` on `table` only for partition keys starting with {@link RATE_COUNTER_PARTITION_PREFIX} or {@link
 * TOKEN_PARTITION_PREFIX}: read routes count rate limits (D4) and stamp a token's `last_used_at` (at most hourly).
 */
function grantRateCounterUpdates(table: dynamodb.ITable, grantee: iam.IGrantable): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: ['dynamodb:UpdateItem'],
      resources: [table.tableArn],
      conditions: {
        'ForAllValues:StringLike': {
          'dynamodb:LeadingKeys': [`${RATE_COUNTER_PARTITION_PREFIX}*`, `${TOKEN_PARTITION_PREFIX}*`],
        },
      },
    }),
  );
}

/** What a route's Lambda may touch, derived from its operation. */
interface RouteAccess {
  /** The main table. */
  readonly table: TableAccess;
  /**
   * `UpdateItem` on the rate-limit counters only ({@link grantRateCounterUpdates}); for routes whose table access is
   * `read`.
   */
  readonly rateCounters: boolean;
  /** The dead-letter table. */
  readonly deadLetterTable: TableAccess;
  /** `sqs:SendMessage` on the pipeline's queues. */
  readonly sendToQueue: boolean;
}

/**
 * Least-privilege grants of a route's Lambda from its operation (DESIGN D23): public GET documents touch nothing; reads
 * get Get/BatchGet/Query plus rate-counter and token updates (no Put/Delete); writes read, write, delete and queue;
 * only `/v1/webhook-deliveries` use the dead-letter table.
 */
function routeAccess(operation: Pick<RegisteredOperation, 'rest' | 'ability'>): RouteAccess {
  const authenticated = operation.ability !== null; // an ability or AUTHENTICATED: the Lambda reads the token
  const write = operation.rest.method !== 'GET';
  return {
    table: write ? 'readWriteDelete' : authenticated ? 'read' : 'none',
    rateCounters: authenticated && !write,
    deadLetterTable:
      authenticated && operation.rest.path.startsWith('/v1/webhook-deliveries')
        ? write
          ? 'readWriteDelete'
          : 'read'
        : 'none',
    sendToQueue: write, // a queue message only names a delivery: no power beyond the table write that precedes it (D7)
  };
}

/** Properties of {@link RouteStack}. */
export interface RouteStackProps {
  /** Description of the nested stack. */
  readonly description: string;
  /** The operations whose routes this stack holds. */
  readonly operations: readonly RegisteredOperation[];
  /** The REST API (in the parent stack). */
  readonly httpApi: apigwv2.IHttpApi;
  /** Function bundles (each route uses its operation's). */
  readonly code: FunctionCode;
  /** Both tables (in the parent stack). */
  readonly tables: MembershipTables;
  /** The pipeline's queues (in the parent stack). */
  readonly queues: PipelineQueues;
  /** Environment shared by every function of the service (values from the parent stack). */
  readonly environment: Record<string, string>;
  /** The credentials key (in the parent stack), granted to the routes whose operations open or seal credentials. */
  readonly credentialsKey?: kms.IKey;
  /** The SES sender (context `mailFrom`), given to the routes whose operations send e-mail themselves. */
  readonly mailFrom?: string;
}

/**
 * Nested stack with the REST routes of one object module's operations (DESIGN D23): 9 resources per route, at most
 * {@link MAX_ROUTES_PER_STACK}. Parent values arrive as parameters with stable names (`TableArn`, `HttpApiId`, ...),
 * created only when needed; construct ids derive from operation ids.
 */
export class RouteStack extends NestedStack {
  /** The Lambda of each route, by operation id. */
  public readonly functions: ReadonlyMap<string, lambda.Function>;
  /** Parameters created so far, with the parent-stack value each is given. */
  private readonly parameterValues = new Map<string, { parameter: CfnParameter; value: string }>();
  /** The alarm topic once imported ({@link RouteStack.alarmTopic}). */
  private importedAlarmTopic: sns.ITopic | undefined;
  /** The object the nested stack resource passes as `Parameters` (read lazily, at synthesis). */
  private readonly passed: Record<string, string>;

  constructor(scope: Construct, id: string, props: RouteStackProps) {
    // Parameters are filled in below, as routes need them; the object is read at synthesis.
    const parameters: Record<string, string> = {};
    super(scope, id, { description: props.description, parameters });
    this.passed = parameters;

    const httpApi = apigwv2.HttpApi.fromHttpApiAttributes(this, 'HttpApi', {
      httpApiId: this.parameter('HttpApiId', props.httpApi.apiId),
    });
    const environment = Object.fromEntries(
      Object.entries(props.environment).map(([name, value]) => [
        name,
        this.parameter(pascalCase(name.toLowerCase()), value),
      ]),
    );
    let table: dynamodb.ITable | undefined;
    let deadLetterTable: dynamodb.ITable | undefined;
    let queues: PipelineQueues | undefined;
    let credentialsKey: kms.IKey | undefined;
    const functions = new Map<string, lambda.Function>();

    for (const operation of props.operations) {
      const stem = constructIdOf(operation.id);
      const fn = new ServiceFunction(this, stem, {
        code: props.code,
        entry: operationEntry(operation),
        description: `REST ${routeKey(operation)} (${operation.id})`,
        timeout: Duration.seconds(10),
        environment,
      }).function;

      const access = routeAccess(operation);
      if (access.table !== 'none') {
        table ??= this.importedTable('Table', props.tables.table.tableArn);
        table.grant(fn, ...tableActions(access.table));
        if (access.rateCounters) grantRateCounterUpdates(table, fn);
      }
      if (access.deadLetterTable !== 'none') {
        deadLetterTable ??= this.importedTable('DeadLetterTable', props.tables.deadLetterTable.tableArn);
        deadLetterTable.grant(fn, ...tableActions(access.deadLetterTable));
      }
      if (access.sendToQueue) {
        queues ??= {
          deliveries: sqs.Queue.fromQueueArn(
            this,
            'DeliveryQueue',
            this.parameter('DeliveryQueueArn', props.queues.deliveries.queueArn),
          ),
          jobs: sqs.Queue.fromQueueArn(this, 'JobQueue', this.parameter('JobQueueArn', props.queues.jobs.queueArn)),
        };
        grantSendToQueues(queues, fn);
      }
      const keyActions = credentialKeyActions(credentialKeyUse([operation]));
      if (keyActions.length > 0 && props.credentialsKey) {
        credentialsKey ??= kms.Key.fromKeyArn(
          this,
          'CredentialsKey',
          this.parameter('CredentialsKeyArn', props.credentialsKey.keyArn),
        );
        credentialsKey.grant(fn, ...keyActions);
      }
      if (operation.sendsEmail) grantMailSending(fn, props.mailFrom);

      routeWithoutAuthorizer(this, `${stem}Route`, {
        httpApi,
        routeKey: apigwv2.HttpRouteKey.with(operation.rest.path, apigwv2.HttpMethod[operation.rest.method]),
        integration: new HttpLambdaIntegration('Integration', fn),
        reason:
          operation.ability === null && operation.rest.method === 'GET'
            ? 'Public description document (interface: no token rule for /openapi.json and /webhook-events.json).'
            : operation.ability === null
              ? 'A public write whose only credential is in its body (an invitation token, checked by the Lambda in constant time; calls are rate-limited per client IP).'
              : 'The Lambda authenticates the bearer token itself on every call, revocation included (DESIGN D2); an API Gateway authorizer would cache decisions.',
      });
      functions.set(operation.id, fn);
    }
    this.functions = functions;
  }

  /**
   * The parent stack's alarm topic (`topicArn`, a token of the parent) seen from this stack through its
   * `AlarmTopicArn` parameter, so the routes' alarms ({@link FunctionAlarms} in `alarms.ts`) can notify it.
   */
  public alarmTopic(topicArn: string): sns.ITopic {
    return (this.importedAlarmTopic ??= sns.Topic.fromTopicArn(
      this,
      'AlarmTopic',
      this.parameter('AlarmTopicArn', topicArn),
    ));
  }

  /**
   * A `String` parameter of this stack named `name` whose value is `value` (a token of the parent
   * stack); created once, reused after.
   */
  private parameter(name: string, value: string): string {
    const existing = this.parameterValues.get(name);
    if (existing) {
      if (existing.value !== value) throw new Error(`Nested stack parameter ${name} is given two different values`);
      return existing.parameter.valueAsString;
    }
    const parameter = new CfnParameter(this, name, { type: 'String' });
    this.parameterValues.set(name, { parameter, value });
    this.passed[name] = value;
    return parameter.valueAsString;
  }

  /** A parent-stack table seen through its ARN parameter; grants include its indexes. */
  private importedTable(name: 'Table' | 'DeadLetterTable', tableArn: string): dynamodb.ITable {
    const parameter = `${name}Arn`;
    const table = dynamodb.Table.fromTableAttributes(this, name, {
      tableArn: this.parameter(parameter, tableArn),
      grantIndexPermissions: true,
    });
    Validations.of(this).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${parameter}>/index/*]`,
      reason:
        'Grants on a table include its GSIs (`<table arn>/index/*`), which list queries use; the pattern covers only that table’s indexes.',
    });
    return table;
  }
}
