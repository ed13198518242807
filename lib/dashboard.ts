import { Duration } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { routeWithoutAuthorizer } from './http-api.js';
import { Construct } from 'constructs';
import { DASHBOARD_AREAS, type DashboardArea } from '../shared/dashboard/areas.js';
import { DASHBOARD_PATH } from '../shared/dashboard/http.js';
import { fileEntry, type FunctionCode } from './function-code.js';
import { pascalCase, tableActions } from './route-stack.js';
import { ServiceFunction } from './service-function.js';
import type { MembershipTables } from './tables.js';
import { grantSendToQueues, type PipelineQueues } from './queues.js';
import { IDEMPOTENCY_LOCK_SECONDS } from '../shared/limits/idempotency.js';

/** Properties of {@link Dashboard}. */
export interface DashboardProps {
  /** The REST API's HTTP API: the dashboard lives under its `/dashboard` path. */
  readonly httpApi: apigwv2.IHttpApi;
  /** Shared function bundles (uses the bundle of each dashboard area). */
  readonly code: FunctionCode;
  /** Both tables. */
  readonly tables: MembershipTables;
  /** The pipeline's queues (send test event, retry, replay dead, messages, imports, audits). */
  readonly queues: PipelineQueues;
  /** Environment shared by every function of the service. */
  readonly environment: Record<string, string>;
}

/**
 * The dashboard (DESIGN D21): a Lambda per area of `DASHBOARD_AREAS` behind the REST API, each on the routes
 * `ANY /dashboard<path>` and `ANY /dashboard<path>/{proxy+}` of its paths. Its pages run operations (with the signed-in
 * team member as principal), so like the MCP Lambda each may use the main table with keyed operations and queries (no
 * Scan, no BatchWriteItem; the main area the dead-letter table too) and send to the pipeline's queues. No authorizer:
 * the Lambdas check the session cookie.
 */
export class Dashboard extends Construct {
  /** The dashboard's Lambdas, one per area, by function file. */
  public readonly functions: Record<DashboardArea['functionFile'], lambda.Function>;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    const functions = DASHBOARD_AREAS.map((area, index) => {
      // The main area's construct ids name no area (`Pages`, `RootRoute`, `PagesRoute`): a new name would replace the
      // deployed Lambda and routes.
      const name = index === 0 ? '' : pascalCase(area.functionFile.replace(/^dashboard-/, ''));
      const fn = new ServiceFunction(this, `${name}Pages`, {
        code: props.code,
        entry: fileEntry(area.functionFile),
        description: `Dashboard: ${area.description}`,
        timeout: Duration.seconds(IDEMPOTENCY_LOCK_SECONDS),
        environment: props.environment,
      }).function;
      props.tables.table.grant(fn, ...tableActions('readWriteDelete'));
      // Only the main area's webhook pages retry and replay dead deliveries (the dead-letter table's copies).
      if (area.functionFile === 'dashboard') props.tables.deadLetterTable.grant(fn, ...tableActions('readWriteDelete'));
      grantSendToQueues(props.queues, fn);
      const integration = new HttpLambdaIntegration(`${name}PagesIntegration`, fn);
      for (const path of area.paths) {
        const base = `${DASHBOARD_PATH}${path}`;
        const routeName = index === 0 ? '' : pascalCase(path.slice(1));
        for (const [routeId, key] of [
          [`${routeName || 'Root'}Route`, base],
          [`${routeName}PagesRoute`, `${base}/{proxy+}`],
        ] as const) {
          routeWithoutAuthorizer(this, routeId, {
            httpApi: props.httpApi,
            routeKey: apigwv2.HttpRouteKey.with(key, apigwv2.HttpMethod.ANY),
            integration,
            reason:
              'The dashboard authenticates team members itself (passkeys, a session cookie checked on every request, CSRF tokens on writes; DESIGN D21); sign-in pages are public by nature.',
          });
        }
      }
      return [area.functionFile, fn] as const;
    });
    this.functions = Object.fromEntries(functions) as Dashboard['functions'];
  }
}
