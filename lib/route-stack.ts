import { CfnParameter, Duration, NestedStack, Validations } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import { credentialKeyActions, credentialKeyUse } from '../shared/credentials/usage.js';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { routeKey, type RegisteredOperation } from '../shared/operations/registry.js';
import { operationEntry, type FunctionCode } from './function-code.js';
import { ServiceFunction } from './service-function.js';
import type { MembershipTables } from './tables.js';

/** `listWebhookEndpoints` → `ListWebhookEndpoints`, `webhook-endpoints` → `WebhookEndpoints`. */
export function pascalCase(name: string): string {
  return name
    .split(/[-_]/)
    .filter((part) => part !== '')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** `listWebhookEndpoints` → `ListWebhookEndpoints`: the construct-id stem of a route (so its logical ids). */
export function constructIdOf(operationId: string): string {
  return pascalCase(operationId);
}

/**
 * DynamoDB actions of the request-serving functions (REST routes, MCP) on a table they read. No
 * `Scan`, no stream reads, no `DescribeTable` (DESIGN D23): they use keyed reads and queries only.
 * `ConditionCheckItem` is the condition-only part of a transactional write.
 */
export const TABLE_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'] as const;

/** DynamoDB actions of the request-serving functions on a table they write: single-item writes (also inside transactions); no `BatchWriteItem`. */
export const TABLE_WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'] as const;

/** How a function may use a table. */
export type TableAccess = 'none' | 'read' | 'readWrite';

/** The actions of a {@link TableAccess}. */
export function tableActions(access: TableAccess): string[] {
  if (access === 'none') return [];
  return access === 'read' ? [...TABLE_READ_ACTIONS] : [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS];
}

/** What a route's Lambda may touch, derived from its operation. */
export interface RouteAccess {
  /** The main table. */
  readonly table: TableAccess;
  /** The dead-letter table. */
  readonly deadLetterTable: TableAccess;
  /** `sqs:SendMessage` on the delivery queue. */
  readonly sendToQueue: boolean;
}

/**
 * Least-privilege rules for a route's Lambda, derived from its operation so new operations get the
 * right grants without touching `lib/`:
 * - the two public documents (`ability: null`, GET) are rendered from the definitions and catalogues
 *   and touch no AWS resource;
 * - every authenticated route (an ability, or `authenticated`: a valid token and no ability, as the smoke
 *   test), and every public write (accepting a team invitation, whose credential is in its body), reads
 *   and writes the main table (token lookup, rate-limit counters, idempotency
 *   records and the activity log are all writes, even behind a GET);
 * - only the `/v1/webhook-deliveries` routes use the dead-letter table: reads read it, writes
 *   (retry, replay-dead) also write it;
 * - every write, authenticated or public, may emit an event or re-queue a delivery, so it may send to the
 *   delivery queue (a message only says "look at delivery X", so this grants no power beyond
 *   the table write that must precede it — DESIGN D7).
 */
export function routeAccess(operation: Pick<RegisteredOperation, 'rest' | 'ability'>): RouteAccess {
  const authenticated = operation.ability !== null; // an ability or AUTHENTICATED: the Lambda reads the token
  const write = operation.rest.method !== 'GET';
  return {
    table: authenticated || write ? 'readWrite' : 'none',
    deadLetterTable: authenticated && operation.rest.path.startsWith('/v1/webhook-deliveries') ? (write ? 'readWrite' : 'read') : 'none',
    sendToQueue: write,
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
  /** The delivery queue (in the parent stack). */
  readonly queue: sqs.IQueue;
  /** Environment shared by every function of the service (values from the parent stack). */
  readonly environment: Record<string, string>;
  /** The credentials key (in the parent stack), granted to the routes whose operations open or seal credentials. */
  readonly credentialsKey?: kms.IKey;
}

/**
 * A nested stack holding the REST routes of some operations of one object module (DESIGN D23): per
 * operation a Lambda (with its role, policy and log group), its HTTP API integration, the permission
 * that lets API Gateway invoke it, and the route. About 7 resources per route, so a stack of
 * {@link MAX_ROUTES_PER_STACK} routes stays far below CloudFormation's per-template limit.
 *
 * What it uses from the parent stack (the API id, table and queue names and ARNs, the shared
 * environment) comes in through parameters with stable, readable names (`TableArn`, `HttpApiId`,
 * `TableName`, ...), created only when a route needs them. Construct ids derive from operation ids,
 * so logical ids are stable.
 */
export class RouteStack extends NestedStack {
  /** The Lambda of each route, by operation id. */
  public readonly functions: ReadonlyMap<string, lambda.Function>;
  /** Parameters created so far, with the parent-stack value each is given. */
  private readonly parameterValues = new Map<string, { parameter: CfnParameter; value: string }>();
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
      Object.entries(props.environment).map(([name, value]) => [name, this.parameter(pascalCase(name.toLowerCase()), value)]),
    );
    let table: dynamodb.ITable | undefined;
    let deadLetterTable: dynamodb.ITable | undefined;
    let queue: sqs.IQueue | undefined;
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
      }
      if (access.deadLetterTable !== 'none') {
        deadLetterTable ??= this.importedTable('DeadLetterTable', props.tables.deadLetterTable.tableArn);
        deadLetterTable.grant(fn, ...tableActions(access.deadLetterTable));
      }
      if (access.sendToQueue) {
        queue ??= sqs.Queue.fromQueueArn(this, 'DeliveryQueue', this.parameter('DeliveryQueueArn', props.queue.queueArn));
        queue.grantSendMessages(fn);
      }
      const keyActions = credentialKeyActions(credentialKeyUse(operation.events));
      if (keyActions.length > 0 && props.credentialsKey) {
        credentialsKey ??= kms.Key.fromKeyArn(this, 'CredentialsKey', this.parameter('CredentialsKeyArn', props.credentialsKey.keyArn));
        credentialsKey.grant(fn, ...keyActions);
      }

      const httpRoute = new apigwv2.HttpRoute(this, `${stem}Route`, {
        httpApi,
        routeKey: apigwv2.HttpRouteKey.with(operation.rest.path, apigwv2.HttpMethod[operation.rest.method]),
        integration: new HttpLambdaIntegration('Integration', fn),
      });
      Validations.of(httpRoute).acknowledge({
        id: 'AwsSolutions-APIG4',
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
      reason: 'Grants on a table include its GSIs (`<table arn>/index/*`), which list queries use; the pattern covers only that table’s indexes.',
    });
    return table;
  }
}
