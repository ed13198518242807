import { Duration, Validations } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { fileEntry, type FunctionCode } from './function-code.js';
import { AccessLoggedHttpApi } from './http-api.js';
import { tableActions } from './route-stack.js';
import { ServiceFunction } from './service-function.js';
import type { MembershipTables } from './tables.js';

import { MCP_PATH, PROTECTED_RESOURCE_METADATA_PATHS } from '../shared/config.js';
import { IDEMPOTENCY_LOCK_SECONDS } from '../shared/limits/idempotency.js';

/** Properties of {@link McpApi}. */
export interface McpApiProps {
  /** Shared function bundles (uses the `mcp` bundle). */
  readonly code: FunctionCode;
  /** Both tables. */
  readonly tables: MembershipTables;
  /** The delivery queue. */
  readonly queue: sqs.IQueue;
  /** Environment shared by every function of the service. */
  readonly environment: Record<string, string>;
}

/**
 * The MCP tool server (`{mcp_url}`): its own HTTP API with `ANY /mcp` and `OPTIONS /mcp`, and `GET` of
 * the protected-resource metadata (`/.well-known/oauth-protected-resource` and `.../mcp`, RFC 9728, the
 * `resource_metadata` of every 401), all to one Lambda. API Gateway CORS is deliberately not
 * configured: the Lambda answers preflight before authentication and sets the interface's exact CORS
 * headers (DESIGN D5).
 */
export class McpApi extends Construct {
  /** The HTTP API and its stage. */
  public readonly httpApi: AccessLoggedHttpApi;
  /** The tool-server Lambda. */
  public readonly function: lambda.Function;

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
    props.queue.grantSendMessages(this.function);

    const integration = new HttpLambdaIntegration('ServerIntegration', this.function);
    const routes: Array<[string, string, apigwv2.HttpMethod, string]> = [
      ['AnyRoute', MCP_PATH, apigwv2.HttpMethod.ANY, 'The Lambda authenticates the bearer token on every request (DESIGN D2, D5); an authorizer could not return the MCP error shapes.'],
      ['OptionsRoute', MCP_PATH, apigwv2.HttpMethod.OPTIONS, 'CORS preflight is answered before authentication, with no token (interface: CORS).'],
      ...PROTECTED_RESOURCE_METADATA_PATHS.map((path, index): [string, string, apigwv2.HttpMethod, string] => [
        `ResourceMetadataRoute${index}`,
        path,
        apigwv2.HttpMethod.GET,
        'Public OAuth protected-resource metadata (RFC 9728): clients read it before they hold a token; it names no secret.',
      ]),
    ];
    for (const [routeId, path, method, reason] of routes) {
      const route = new apigwv2.HttpRoute(this, routeId, {
        httpApi: this.httpApi.api,
        routeKey: apigwv2.HttpRouteKey.with(path, method),
        integration,
      });
      Validations.of(route).acknowledge({ id: 'AwsSolutions-APIG4', reason });
    }
  }

  /** `{mcp_url}`: the API endpoint followed by {@link MCP_PATH}. */
  public get url(): string {
    return `${this.httpApi.endpoint}${MCP_PATH}`;
  }
}
