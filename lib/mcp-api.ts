import { Duration } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { fileEntry, type FunctionCode } from './function-code.js';
import { AccessLoggedHttpApi, routeWithoutAuthorizer } from './http-api.js';
import { tableActions } from './route-stack.js';
import { ServiceFunction } from './service-function.js';
import type { MembershipTables } from './tables.js';
import { grantSendToQueues, type PipelineQueues } from './queues.js';

import { ENVIRONMENT_VARIABLES, MCP_PATH, PROTECTED_RESOURCE_METADATA_PATHS } from '../shared/config.js';
import { IDEMPOTENCY_LOCK_SECONDS } from '../shared/limits/idempotency.js';
import { AUTHORIZATION_SERVER_METADATA_PATH, OAUTH_PATH_PREFIX } from '../shared/oauth/http-handler.js';

/** Properties of {@link McpApi}. */
export interface McpApiProps {
  /** Shared function bundles (uses the `mcp` bundle). */
  readonly code: FunctionCode;
  /** Both tables. */
  readonly tables: MembershipTables;
  /** The pipeline's queues. */
  readonly queues: PipelineQueues;
  /** Environment shared by every function of the service. */
  readonly environment: Record<string, string>;
  /** The REST API's base URL, where the dashboard (and so the OAuth consent page, DESIGN D30) is served. */
  readonly dashboardBaseUrl: string;
}

/**
 * The MCP tool server's own HTTP API: `/mcp` and its RFC 9728 resource metadata to the tool server's Lambda, the OAuth
 * 2.1 server (DESIGN D30; consent on the dashboard at `DASHBOARD_BASE_URL`) to a Lambda of its own. No API Gateway
 * CORS: the Lambda answers preflight before authentication with the interface's headers (D5).
 */
export class McpApi extends Construct {
  /** The HTTP API and its stage. */
  public readonly httpApi: AccessLoggedHttpApi;
  /** The tool-server Lambda. */
  public readonly function: lambda.Function;
  /** The OAuth authorization server's Lambda (`/oauth/...` and its metadata, DESIGN D30). */
  public readonly authorizationServer: lambda.Function;

  constructor(scope: Construct, id: string, props: McpApiProps) {
    super(scope, id);
    this.httpApi = new AccessLoggedHttpApi(this, 'Http', { description: 'Membership service MCP tool server' });
    this.function = new ServiceFunction(this, 'Server', {
      code: props.code,
      entry: fileEntry('mcp'),
      description: 'MCP tool server (streamable HTTP, JSON responses)',
      timeout: Duration.seconds(IDEMPOTENCY_LOCK_SECONDS),
      environment: props.environment,
    }).function;
    // Tools cover every domain, webhook delivery retry and replay-dead included; like the REST
    // routes, keyed reads, queries and single-item writes only (no Scan, no BatchWriteItem).
    props.tables.table.grant(this.function, ...tableActions('readWriteDelete'));
    props.tables.deadLetterTable.grant(this.function, ...tableActions('readWriteDelete'));
    grantSendToQueues(props.queues, this.function);
    // The authorization server registers clients, asks for consent on the dashboard and issues, refreshes and revokes
    // tokens: the main table only, no queue, no credentials key.
    this.authorizationServer = new ServiceFunction(this, 'AuthorizationServer', {
      code: props.code,
      entry: fileEntry('oauth'),
      description: 'OAuth 2.1 authorization server of the MCP tool server',
      timeout: Duration.seconds(IDEMPOTENCY_LOCK_SECONDS),
      environment: { ...props.environment, [ENVIRONMENT_VARIABLES.dashboardBaseUrl]: props.dashboardBaseUrl },
    }).function;
    props.tables.table.grant(this.authorizationServer, ...tableActions('readWriteDelete'));

    const integration = new HttpLambdaIntegration('ServerIntegration', this.function);
    const oauthIntegration = new HttpLambdaIntegration('AuthorizationServerIntegration', this.authorizationServer);
    const routes: Array<[string, string, apigwv2.HttpMethod, string, HttpLambdaIntegration?]> = [
      [
        'AnyRoute',
        MCP_PATH,
        apigwv2.HttpMethod.ANY,
        'The Lambda authenticates the bearer token on every request (DESIGN D2, D5); an authorizer could not return the MCP error shapes.',
      ],
      [
        'OptionsRoute',
        MCP_PATH,
        apigwv2.HttpMethod.OPTIONS,
        'CORS preflight is answered before authentication, with no token (interface: CORS).',
      ],
      ...PROTECTED_RESOURCE_METADATA_PATHS.map((path, index): [string, string, apigwv2.HttpMethod, string] => [
        `ResourceMetadataRoute${index}`,
        path,
        apigwv2.HttpMethod.GET,
        'Public OAuth protected-resource metadata (RFC 9728): clients read it before they hold a token; it names no secret.',
      ]),
      [
        'AuthorizationServerMetadataRoute',
        AUTHORIZATION_SERVER_METADATA_PATH,
        apigwv2.HttpMethod.GET,
        'Public OAuth authorization server metadata (RFC 8414): clients read it before they hold a token; it names no secret.',
        oauthIntegration,
      ],
      [
        'OAuthRoute',
        `${OAUTH_PATH_PREFIX}{proxy+}`,
        apigwv2.HttpMethod.ANY,
        'The OAuth endpoints (registration, authorization, token; DESIGN D30) are how a client obtains a token; the Lambda limits them per client IP and checks codes, PKCE and refresh tokens itself.',
        oauthIntegration,
      ],
    ];
    for (const [routeId, path, method, reason, routeIntegration = integration] of routes) {
      routeWithoutAuthorizer(this, routeId, {
        httpApi: this.httpApi.api,
        routeKey: apigwv2.HttpRouteKey.with(path, method),
        integration: routeIntegration,
        reason,
      });
    }
  }

  /** `{mcp_url}`: the API endpoint followed by {@link MCP_PATH}. */
  public get url(): string {
    return `${this.httpApi.endpoint}${MCP_PATH}`;
  }
}
