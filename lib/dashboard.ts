import { Duration, Validations } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { DASHBOARD_PATH } from '../shared/dashboard/http.js';
import { fileEntry, type FunctionCode } from './function-code.js';
import { tableActions } from './route-stack.js';
import { ServiceFunction } from './service-function.js';
import type { MembershipTables } from './tables.js';
import { grantSendToQueues, type PipelineQueues } from './queues.js';
import { IDEMPOTENCY_LOCK_SECONDS } from '../shared/limits/idempotency.js';

/** Properties of {@link Dashboard}. */
export interface DashboardProps {
  /** The REST API's HTTP API: the dashboard lives under its `/dashboard` path. */
  readonly httpApi: apigwv2.IHttpApi;
  /** Shared function bundles (uses the `dashboard` bundle). */
  readonly code: FunctionCode;
  /** Both tables. */
  readonly tables: MembershipTables;
  /** The pipeline's queues (send test event, retry, replay dead, messages, imports, audits). */
  readonly queues: PipelineQueues;
  /** Environment shared by every function of the service. */
  readonly environment: Record<string, string>;
}

/**
 * The dashboard (DESIGN D21): its own Lambda behind the REST API, routes `ANY /dashboard` and
 * `ANY /dashboard/{proxy+}`. It runs every operation (with the signed-in team member as principal), so
 * like the MCP Lambda it may use both tables with keyed operations and queries (no Scan, no
 * BatchWriteItem) and send to the delivery queue. No authorizer: the Lambda checks the session cookie.
 */
export class Dashboard extends Construct {
  /** The dashboard Lambda. */
  public readonly function: lambda.Function;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    this.function = new ServiceFunction(this, 'Pages', {
      code: props.code,
      entry: fileEntry('dashboard'),
      description: 'Dashboard: pages, passkey sign-in and actions for team members',
      timeout: Duration.seconds(IDEMPOTENCY_LOCK_SECONDS),
      environment: props.environment,
    }).function;
    props.tables.table.grant(this.function, ...tableActions('readWriteDelete'));
    props.tables.deadLetterTable.grant(this.function, ...tableActions('readWriteDelete'));
    grantSendToQueues(props.queues, this.function);
    const integration = new HttpLambdaIntegration('PagesIntegration', this.function);
    for (const [routeId, path] of [
      ['RootRoute', DASHBOARD_PATH],
      ['PagesRoute', `${DASHBOARD_PATH}/{proxy+}`],
    ] as const) {
      const route = new apigwv2.HttpRoute(this, routeId, {
        httpApi: props.httpApi,
        routeKey: apigwv2.HttpRouteKey.with(path, apigwv2.HttpMethod.ANY),
        integration,
      });
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'The dashboard authenticates team members itself (passkeys, a session cookie checked on every request, CSRF tokens on writes; DESIGN D21); sign-in pages are public by nature.',
      });
    }
  }
}
