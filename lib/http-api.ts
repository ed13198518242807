import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** HTTP API access-log line: one JSON object per request, HTTP API `$context` variables only. */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    ip: '$context.identity.sourceIp',
    userAgent: '$context.identity.userAgent',
    requestTime: '$context.requestTime',
    routeKey: '$context.routeKey',
    path: '$context.path',
    status: '$context.status',
    protocol: '$context.protocol',
    responseLength: '$context.responseLength',
    responseLatency: '$context.responseLatency',
    integrationLatency: '$context.integrationLatency',
    integrationError: '$context.integrationErrorMessage',
  }),
);

/**
 * Steady-state request rate of each API's `$default` stage, in requests per second (API Gateway stage
 * throttling, DESIGN D23). Far above what one token may send (`RATE_LIMITS` of DESIGN D4: 600 per minute
 * on REST, 120 on MCP, i.e. 10 and 2 per second), it stops a flood of unauthenticated or many-token traffic before it
 * reaches the Lambdas: past it API Gateway answers 429 without invoking anything.
 */
export const STAGE_THROTTLE_RATE_LIMIT = 200;

/** Burst of each stage (requests; the token bucket's size), twice {@link STAGE_THROTTLE_RATE_LIMIT}. */
export const STAGE_THROTTLE_BURST_LIMIT = 400;

/** Properties of {@link AccessLoggedHttpApi}. */
export interface AccessLoggedHttpApiProps {
  /** Description of the API. */
  readonly description: string;
}

/**
 * An API Gateway HTTP API with an auto-deployed `$default` stage that writes JSON access logs to
 * its own log group and throttles at {@link STAGE_THROTTLE_RATE_LIMIT} requests per second (burst
 * {@link STAGE_THROTTLE_BURST_LIMIT}). No CORS configuration and no authorizer: the Lambdas behind it authenticate
 * (DESIGN D2) and, for the tool server, answer CORS themselves (DESIGN D5).
 */
export class AccessLoggedHttpApi extends Construct {
  /** The HTTP API. */
  public readonly api: apigwv2.HttpApi;
  /** Its `$default` stage. */
  public readonly stage: apigwv2.HttpStage;
  /** Access logs of the stage. */
  public readonly accessLogs: logs.LogGroup;

  constructor(scope: Construct, id: string, props: AccessLoggedHttpApiProps) {
    super(scope, id);
    this.api = new apigwv2.HttpApi(this, 'Api', { description: props.description, createDefaultStage: false });
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stage = this.api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: STAGE_THROTTLE_RATE_LIMIT, burstLimit: STAGE_THROTTLE_BURST_LIMIT },
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(this.accessLogs),
        format: ACCESS_LOG_FORMAT,
      },
    });
  }

  /** `https://<api id>.execute-api.<region>.<suffix>` (no trailing slash). */
  public get endpoint(): string {
    return this.api.apiEndpoint;
  }
}

/** Properties of {@link routeWithoutAuthorizer}. */
export interface RouteWithoutAuthorizerProps {
  readonly httpApi: apigwv2.IHttpApi;
  readonly routeKey: apigwv2.HttpRouteKey;
  readonly integration: apigwv2.HttpRouteIntegration;
  /** Who authenticates the route's callers instead of an authorizer, and how (cdk-nag's AwsSolutions-APIG4). */
  readonly reason: string;
}

/**
 * A route of an HTTP API without an API Gateway authorizer (every route of the service: its Lambdas authenticate
 * callers themselves, DESIGN D2), with the reason acknowledged to cdk-nag.
 */
export function routeWithoutAuthorizer(scope: Construct, id: string, props: RouteWithoutAuthorizerProps) {
  const route = new apigwv2.HttpRoute(scope, id, {
    httpApi: props.httpApi,
    routeKey: props.routeKey,
    integration: props.integration,
  });
  Validations.of(route).acknowledge({ id: 'AwsSolutions-APIG4', reason: props.reason });
  return route;
}
