import { Duration, Validations } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ROUTES, routeKey, type RouteDefinition } from '../shared/http/route-table.js';
import type { FunctionCode } from './function-code.js';
import { AccessLoggedHttpApi } from './http-api.js';
import { ServiceFunction } from './service-function.js';
import type { MembershipTables } from './tables.js';

/** OPERATION_ID of the `$default` route's Lambda: matches no operation of the route table. */
export const UNMATCHED_OPERATION_ID = '$default';

/** `listWebhookEndpoints` → `ListWebhookEndpoints`: the construct-id stem of a route. */
export function constructIdOf(operationId: string): string {
  return operationId.charAt(0).toUpperCase() + operationId.slice(1);
}

/** What a route's Lambda may touch, derived from its route-table entry. */
export interface RouteAccess {
  /** Read/write on the main table. */
  readonly table: boolean;
  /** Read/write on the dead-letter table. */
  readonly deadLetterTable: boolean;
  /** `sqs:SendMessage` on the delivery queue. */
  readonly sendToQueue: boolean;
}

/**
 * Least-privilege rules for a route's Lambda, derived from the route table so new routes get the
 * right grants without touching `lib/`:
 * - the two public documents (`ability: null`) are rendered from the route table and catalogues
 *   and touch no AWS resource;
 * - every authenticated route reads and writes the main table (token lookup, rate-limit counters,
 *   idempotency records and the activity log are all writes, even behind a GET);
 * - only the `/v1/webhook-deliveries` routes use the dead-letter table (retry and replay-dead);
 * - every authenticated write may emit an event or re-queue a delivery, so it may send to the
 *   delivery queue (a message only says "look at delivery X", so this grants no power beyond
 *   the table write that must precede it — DESIGN D7).
 */
export function routeAccess(route: Pick<RouteDefinition, 'method' | 'path' | 'ability'>): RouteAccess {
  const authenticated = route.ability !== null;
  return {
    table: authenticated,
    deadLetterTable: authenticated && route.path.startsWith('/v1/webhook-deliveries'),
    sendToQueue: authenticated && route.method !== 'GET',
  };
}

/** Properties of {@link RestApi}. */
export interface RestApiProps {
  /** Shared function bundles (every route uses the `rest` bundle). */
  readonly code: FunctionCode;
  /** Both tables. */
  readonly tables: MembershipTables;
  /** The delivery queue. */
  readonly queue: sqs.IQueue;
  /** Environment shared by every function of the service. */
  readonly environment: Record<string, string>;
}

/**
 * The REST API (`{base_url}`): an HTTP API with one route and one Lambda per entry of `ROUTES`.
 * Every route Lambda runs the same `functions/rest.ts` bundle and learns its operation from
 * `OPERATION_ID`. Construct ids derive from the operation id, so logical ids are stable.
 */
export class RestApi extends Construct {
  /** The HTTP API and its stage. */
  public readonly httpApi: AccessLoggedHttpApi;
  /** The Lambda of each route, by operation id. */
  public readonly functions: ReadonlyMap<string, lambda.Function>;
  /** The `$default` route's Lambda (unknown routes → problem documents). */
  public readonly unmatchedRouteFunction: lambda.Function;

  constructor(scope: Construct, id: string, props: RestApiProps) {
    super(scope, id);
    this.httpApi = new AccessLoggedHttpApi(this, 'Http', { description: 'Membership service REST API' });
    const functions = new Map<string, lambda.Function>();

    for (const route of ROUTES as readonly RouteDefinition[]) {
      const stem = constructIdOf(route.operationId);
      const fn = new ServiceFunction(this, stem, {
        code: props.code,
        entry: 'rest',
        description: `REST ${routeKey(route)} (${route.operationId})`,
        timeout: Duration.seconds(10),
        environment: { ...props.environment, OPERATION_ID: route.operationId },
      }).function;

      const access = routeAccess(route);
      if (access.table) props.tables.table.grantReadWriteData(fn);
      if (access.deadLetterTable) props.tables.deadLetterTable.grantReadWriteData(fn);
      if (access.sendToQueue) props.queue.grantSendMessages(fn);

      const httpRoute = new apigwv2.HttpRoute(this, `${stem}Route`, {
        httpApi: this.httpApi.api,
        routeKey: apigwv2.HttpRouteKey.with(route.path, apigwv2.HttpMethod[route.method]),
        integration: new HttpLambdaIntegration('Integration', fn),
      });
      Validations.of(httpRoute).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          route.ability === null
            ? 'Public description document (interface: no token rule for /openapi.json and /webhook-events.json).'
            : 'The Lambda authenticates the bearer token itself on every call, revocation included (DESIGN D2); an API Gateway authorizer would cache decisions.',
      });
      functions.set(route.operationId, fn);
    }

    // Every request no route matches reaches this Lambda, so unknown paths and wrong methods get the
    // service's problem documents (NOT_FOUND 404, METHOD_NOT_ALLOWED 405 with Allow) instead of API
    // Gateway's own body. OPERATION_ID `$default` matches no operation, so it can serve none; it
    // answers before authentication and touches no AWS resource.
    const fallback = new ServiceFunction(this, 'UnmatchedRoute', {
      code: props.code,
      entry: 'rest',
      description: 'REST $default: problem documents for unknown routes',
      timeout: Duration.seconds(10),
      environment: { ...props.environment, OPERATION_ID: UNMATCHED_OPERATION_ID },
    }).function;
    const defaultRoute = new apigwv2.HttpRoute(this, 'UnmatchedRouteRoute', {
      httpApi: this.httpApi.api,
      routeKey: apigwv2.HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration('Integration', fallback),
    });
    Validations.of(defaultRoute).acknowledge({ id: 'AwsSolutions-APIG4', reason: 'Answers NOT_FOUND / METHOD_NOT_ALLOWED for unmatched requests; serves no operation and reads no data.' });
    this.unmatchedRouteFunction = fallback;
    this.functions = functions;
  }
}
